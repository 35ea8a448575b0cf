// Planning a bench: filters, batch sweeps that would repeat a measurement, and in-process pairing.
#include "bench_plan.hpp"

#include "scheduler.hpp"
#include "work.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/files.hpp"

#include <algorithm>
#include <map>
#include <regex>

namespace rnx::runner::detail {

namespace {

bool selected(const std::vector<std::string>& filter, const std::string& value) {
  return filter.empty() || std::find(filter.begin(), filter.end(), value) != filter.end();
}

// Why the batch sizes of the sweep would all measure the same thing, or nullopt when they do not: a KernelBench
// file whose module sets no `batch_size` makes the same inputs whatever the batch (its get_inputs() has nothing
// to read it from). Declared shapes without B are refused by the manifest reader already.
std::optional<std::string> batch_independent(const kernel_spec& k) {
  if (k.kind() != kernel_kind::python || !k.inputs.empty()) return std::nullopt;
  const std::string source = read_whole_file(k.resolved_path).value_or("");
  static const std::regex kernelbench(R"((^|\n)def get_inputs\s*\()");
  static const std::regex batch_size(R"((^|\n)batch_size\s*(:[^=\n]*)?=)");
  if (!std::regex_search(source, kernelbench) || std::regex_search(source, batch_size)) return std::nullopt;
  return k.path + " sets no module-level batch_size, so get_inputs() makes the same inputs at every batch";
}

// Why a configuration of a paired run cannot share worker processes with its base, or empty when it can.
std::string in_process_obstacle(const kernel_spec& head, const kernel_spec& base) {
  if (head.native() || base.native()) {
    return "C++/CUDA kernels of two revisions cannot share a process: both export the same symbols";
  }
  if (head.kind() != base.kind()) {
    return "the kernel is a " + std::string(to_string(base.kind())) + " file in the base and a " +
           std::string(to_string(head.kind())) + " file in the head";
  }
  auto shapes = [](const kernel_spec& k) {
    std::string text;
    for (const auto& in : k.inputs) text += in.name + "=" + in.text + ";";
    return text;
  };
  if (shapes(head) != shapes(base)) return "the kernel's declared inputs differ between the revisions";
  if (head.device != base.device) return "the kernel's device differs between the revisions";
  return {};
}

// `--kernel NAME` for a kernel the manifest does not have: a usage error naming the ones it has.
error unknown_kernel(const manifest& m, const std::string& name) {
  std::string names;
  for (const auto& k : m.kernels) names += (names.empty() ? "" : ", ") + k.name;
  return error(errc::usage, "--kernel " + name + ": no such kernel in " + m.source + " (kernels: " + names + ")");
}

}  // namespace

std::vector<planned> plan(const std::vector<side_state>& sides, const bench_options& o) {
  std::vector<planned> out;
  std::optional<bool> gpu_here;  // asked once, and only for a device of "auto"
  const auto on_cuda = [&](const std::string& device) {
    const std::optional<device_kind> kind = device_kind_from_string(device);
    if (kind != device_kind::automatic) return kind == device_kind::cuda;
    if (!gpu_here) gpu_here = !visible_gpus().empty();
    return *gpu_here;
  };
  for (std::size_t s = 0; s < sides.size(); ++s) {
    const manifest& m = sides[s].m;
    for (const auto& name : o.filters.kernels) {
      if (s == 0 && !m.find_kernel(name)) throw unknown_kernel(m, name);
    }
    for (const auto& k : m.kernels) {
      if (!selected(o.filters.kernels, k.name)) continue;
      const std::optional<std::string> same_at_every_batch = batch_independent(k);
      std::optional<std::int64_t> measured_batch;
      for (const auto& runtime : k.runtimes) {
        if (!selected(o.filters.runtimes, runtime)) continue;
        for (const auto& dtype : k.dtypes) {
          if (!selected(o.filters.dtypes, dtype)) continue;
          for (auto batch : k.batch) {
            if (!o.filters.batches.empty() &&
                std::find(o.filters.batches.begin(), o.filters.batches.end(), batch) == o.filters.batches.end()) {
              continue;
            }
            if (same_at_every_batch) {
              // Measured once, at the first batch of the sweep: the others would repeat it under other names.
              if (measured_batch && *measured_batch != batch) continue;
              measured_batch = batch;
            }
            if (o.only && !o.only->count(config_key{k.name, runtime, dtype, batch})) continue;  // another shard's
            planned p;
            p.side = s;
            p.spec = &k;
            if (same_at_every_batch && k.batch.size() > 1) {
              std::string others;
              for (auto b : k.batch) {
                if (b != batch) others += (others.empty() ? "" : ", ") + std::to_string(b);
              }
              p.note = "measured once, at batch " + std::to_string(batch) + ", not at " + others + ": " +
                       *same_at_every_batch;
            }
            p.result.kernel = k.name;
            p.result.runtime = runtime;
            p.result.dtype = dtype;
            p.result.batch = batch;
            p.result.device = o.device.empty() ? k.device : o.device;
            p.bench = settings_for(k.bench, on_cuda(p.result.device));
            p.result.work = declared_work(k, batch, m.source);
            p.processes = o.processes.value_or(k.bench.processes);
            p.max_processes = std::max(p.processes, o.max_processes.value_or(k.bench.max_processes));
            if (sides.size() < 2) p.max_processes = p.processes;  // nothing to decide between, so no looks
            p.timeout_s = o.timeout_s.value_or(k.bench.timeout_s);
            out.push_back(std::move(p));
          }
        }
      }
    }
  }
  if (std::none_of(out.begin(), out.end(), [](const planned& p) { return p.side == 0; })) {
    throw error(errc::usage, "no configuration matches the filters in " + sides[0].m.source +
                                 " (check --kernel/--runtime/--dtype/--batch against the manifest)");
  }
  // A paired run: each head configuration meets its base; where they can share processes they do.
  std::map<config_key, std::size_t> base_by_key;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].side == 1) base_by_key[out[i].result.key()] = i;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].side != 0) continue;
    auto it = base_by_key.find(out[i].result.key());
    if (it == base_by_key.end()) continue;
    planned& head = out[i];
    planned& base = out[it->second];
    head.partner = it->second;
    base.partner = i;
    // Both sides take the head's schedule, so every look sees the same rounds on both.
    base.processes = head.processes;
    base.max_processes = head.max_processes;
    std::string obstacle = o.in_process_pairing ? in_process_obstacle(*head.spec, *base.spec)
                                                : std::string("in-process pairing was turned off (--pairing process)");
    head.in_process = base.in_process = obstacle.empty();
    head.result.pairing = base.result.pairing = obstacle.empty() ? pairing_mode::in_process : pairing_mode::process;
    head.result.pairing_reason = base.result.pairing_reason = obstacle;
  }
  for (auto& p : out) {
    if (!p.partner && sides.size() > 1) {
      p.result.pairing = pairing_mode::process;
      p.result.pairing_reason = std::string("the configuration exists only in the ") + (p.side == 0 ? "head" : "base");
    }
  }
  return out;
}

void add_note(planned& p, const std::string& note) { p.note += (p.note.empty() ? "" : "; ") + note; }

void set_failed(planned& p, result_status status, std::string message) {
  p.failed = true;
  p.result.status = status;
  p.result.message = std::move(message);
  p.result.samples_ms.clear();
  p.result.groups.clear();
  p.result.first_sides.clear();
}

}  // namespace rnx::runner::detail
