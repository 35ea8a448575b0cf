// Shared part of rnx import: reading the files, mapping names and parameters to configurations, merging files as
// process groups, the aggregate policy and the environment.
#include "rnx/importers/import.hpp"

#include "import_detail.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace rnx::importers {

namespace bj = boost::json;

std::string_view to_string(format f) {
  switch (f) {
    case format::gbench: return "gbench";
    case format::pytest_benchmark: return "pytest-benchmark";
    case format::nvbench: return "nvbench";
  }
  return "gbench";
}

std::optional<format> format_from_string(std::string_view name) {
  for (format f : {format::gbench, format::pytest_benchmark, format::nvbench}) {
    if (to_string(f) == name) return f;
  }
  return std::nullopt;
}

namespace detail {

void fail(const std::string& file, const std::string& path, const std::string& what) {
  throw error(errc::invalid, file + ": " + path + ": " + what);
}

std::string recognise(const bj::value& doc) {
  const bj::object* o = doc.if_object();
  if (!o) return "";
  auto has = [&](std::string_view key) { return o->contains(key); };
  if (has("schema") && o->at("schema") == "rnx.run/v1") return "an rnx run document (rnx.run/v1), already converted";
  if (has("context") && has("benchmarks")) return "Google Benchmark JSON (--format gbench)";
  if (has("machine_info") && has("benchmarks")) return "pytest-benchmark JSON (--format pytest-benchmark)";
  if (has("devices") && has("benchmarks")) return "nvbench JSON (--format nvbench)";
  if (has("meta") && has("benchmarks")) return "nvbench JSON (--format nvbench)";
  return "";
}

void wrong_format(const std::string& file, const bj::value& doc, std::string_view expected, std::string_view missing) {
  std::string what = "not " + std::string(expected) + " (it has no " + std::string(missing) + ")";
  const std::string looks = recognise(doc);
  if (!looks.empty()) what += "; it looks like " + looks;
  throw error(errc::invalid, file + ": $: " + what);
}

std::string param_text(const bj::value& v) {
  if (v.is_string()) return std::string(v.get_string());
  return bj::serialize(v);
}

}  // namespace detail

namespace {

using detail::measured_case;
using detail::parsed_file;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A dtype parameter's value as an rnx dtype, or "" when it names none of them.
std::string dtype_of(std::string_view value) {
  static const std::map<std::string, std::string> names = {
      {"float32", "float32"},        {"f32", "float32"},           {"fp32", "float32"},
      {"float", "float32"},          {"torch.float32", "float32"}, {"float16", "float16"},
      {"f16", "float16"},            {"fp16", "float16"},          {"half", "float16"},
      {"__half", "float16"},         {"torch.float16", "float16"}, {"bfloat16", "bfloat16"},
      {"bf16", "bfloat16"},          {"__nv_bfloat16", "bfloat16"}, {"torch.bfloat16", "bfloat16"},
      {"float64", "float64"},        {"f64", "float64"},           {"fp64", "float64"},
      {"double", "float64"},         {"torch.float64", "float64"}};
  auto it = names.find(lower(value));
  return it == names.end() ? "" : it->second;
}

bool is_dtype_param(std::string_view name) {
  static const std::set<std::string> names = {"dtype", "type", "t", "data_type", "datatype", "value_type", "valuetype"};
  return names.count(lower(name)) > 0;
}

bool is_batch_param(std::string_view name) {
  static const std::set<std::string> names = {"batch", "batch_size", "batchsize"};
  return names.count(lower(name)) > 0;
}

std::optional<std::int64_t> positive_integer(std::string_view text) {
  if (text.empty() || text.size() > 15) return std::nullopt;
  std::int64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n >= 1 ? std::optional<std::int64_t>(n) : std::nullopt;
}

// The mapping of docs/import.md: the first dtype-named parameter with a dtype value is the dtype, the first
// batch-named one with a positive integer the batch; every other parameter stays in the kernel's name, in order.
config_key key_of(const measured_case& c, std::string_view runtime) {
  config_key key{c.name, std::string(runtime), "none", 1};
  bool have_dtype = false;
  bool have_batch = false;
  std::string rest;
  for (const auto& [name, value] : c.params) {
    if (!have_dtype && is_dtype_param(name) && !dtype_of(value).empty()) {
      key.dtype = dtype_of(value);
      have_dtype = true;
      continue;
    }
    if (!have_batch && is_batch_param(name) && positive_integer(value)) {
      key.batch = *positive_integer(value);
      have_batch = true;
      continue;
    }
    rest += (rest.empty() ? "" : ",") + name + "=" + value;
  }
  if (!rest.empty()) key.kernel += "[" + rest + "]";
  return key;
}

struct merged {
  run_result result;
  std::string first_file;
  std::string first_path;
};

// Files of one import must come from one machine and one harness: a baseline compares like with like.
void check_same_context(const parsed_file& first, const parsed_file& other) {
  const auto& a = first.context;
  const auto& b = other.context;
  auto differ = [&](std::string_view what, const std::string& x, const std::string& y) {
    if (x == y) return;
    detail::fail(other.file, b.path,
                 std::string(what) + " \"" + y + "\" differs from \"" + x + "\" in " + first.file +
                     ": import the files of one machine and harness at a time");
  };
  differ("harness", a.harness, b.harness);
  differ("device", a.device, b.device);
  differ("cpu", a.cpu, b.cpu);
  differ("python", a.python, b.python);
  differ("thread count", std::to_string(a.threads), std::to_string(b.threads));
}

}  // namespace

run_document import_run(const import_options& options, import_summary* summary) {
  if (options.files.empty()) throw error(errc::usage, "rnx import needs at least one FILE");
  if (options.project.empty()) {
    throw error(errc::usage, "--project is empty: name the project the run belongs to (as rnx gate stores it)");
  }
  const std::string runtime(to_string(options.fmt));
  if (options.gbench_cpu_time && options.fmt != format::gbench) {
    throw error(errc::usage, "--gbench-time cpu applies to --format gbench only (" + runtime +
                                 " output has one timer per file; see docs/import.md)");
  }
  std::vector<parsed_file> files;
  for (const auto& file : options.files) {
    bj::value doc;
    try {
      doc = json::parse_file(file);
    } catch (const error& e) {
      if (e.code() != errc::bad_input) throw;
      throw error(errc::bad_input, std::string(e.what()) + " (a truncated file? the harness may have been stopped "
                                                           "while writing it)");
    }
    switch (options.fmt) {
      case format::gbench: files.push_back(detail::parse_gbench(file, doc, options.gbench_cpu_time)); break;
      case format::pytest_benchmark: files.push_back(detail::parse_pytest_benchmark(file, doc)); break;
      case format::nvbench: files.push_back(detail::parse_nvbench(file, doc)); break;
    }
    if (files.back().cases.empty()) {
      detail::fail(file, "$.benchmarks", "no benchmarks in this run (an empty run: did a filter match nothing?)");
    }
    if (files.size() > 1) check_same_context(files.front(), files.back());
  }

  // One result per configuration, in the order of first appearance; each file is one process group.
  std::vector<merged> results;
  std::map<config_key, std::size_t> index;
  std::vector<std::string> refused;  // "FILE: PATH: NAME" of configurations with only aggregates
  std::string refused_hint;
  for (const auto& f : files) {
    std::map<config_key, std::string> in_this_file;
    for (const auto& c : f.cases) {
      const config_key key = key_of(c, runtime);
      if (auto [it, inserted] = in_this_file.emplace(key, c.path); !inserted) {
        detail::fail(f.file, c.path, "duplicate configuration " + key.label() + " (also at " + it->second +
                                         "): each benchmark name and parameter set may appear once per file");
      }
      if (c.aggregates && !options.allow_aggregates) {
        if (refused.empty()) refused_hint = c.aggregates_hint;
        refused.push_back(f.file + ": " + c.path + ": " + c.origin);
      }
      auto found = index.find(key);
      if (found == index.end()) {
        merged m;
        m.first_file = f.file;
        m.first_path = c.path;
        run_result& r = m.result;
        r.kernel = key.kernel;
        r.runtime = key.runtime;
        r.dtype = key.dtype;
        r.batch = key.batch;
        r.device = c.device;
        r.status = c.status;
        r.message = c.message;
        r.samples_ms = c.samples_ms;
        if (files.size() > 1 && !c.samples_ms.empty()) r.groups.push_back(static_cast<std::int64_t>(c.samples_ms.size()));
        r.params = c.params;
        r.origin = c.origin;
        r.aggregates = c.aggregates;
        index.emplace(key, results.size());
        results.push_back(std::move(m));
        continue;
      }
      merged& m = results[found->second];
      run_result& r = m.result;
      if (r.aggregates || c.aggregates) {
        detail::fail(f.file, c.path, key.label() + " has only aggregates here or in " + m.first_file + " (" +
                                         m.first_path + "), and summaries of separate runs cannot be merged: import "
                                         "per-sample output, or one file");
      }
      if (c.status != result_status::ok && r.status == result_status::ok) {
        // A failure in any process is the configuration's outcome; its samples from other processes are kept.
        r.status = c.status;
        r.message = c.message + " (in " + f.file + ")";
      }
      if (!c.samples_ms.empty()) {
        r.samples_ms.insert(r.samples_ms.end(), c.samples_ms.begin(), c.samples_ms.end());
        r.groups.push_back(static_cast<std::int64_t>(c.samples_ms.size()));
      }
    }
  }
  if (!refused.empty()) {
    throw error(errc::invalid, refused.front() + " has only aggregates, no per-sample times" +
                                   (refused.size() > 1 ? " (and " + std::to_string(refused.size() - 1) + " more)" : "") +
                                   ": " + refused_hint + ", or pass --allow-aggregates to import them marked (the "
                                   "verdict abstains on them)");
  }

  const detail::harness_context& ctx = files.front().context;
  const detail::machine_facts machine = detail::this_machine();
  run_document run;
  run.project = options.project;
  run.commit = !options.commit.empty() ? options.commit : ctx.commit;
  run.branch = !options.branch.empty() ? options.branch : ctx.branch;
  run.base_branch = options.base_branch;
  run.pull_request = options.pull_request;
  run.created_at = !ctx.created_at.empty() ? ctx.created_at : utc_now_rfc3339();
  environment& env = run.env;
  env.cpu = !ctx.cpu.empty() ? ctx.cpu : machine.cpu;
  env.device = !ctx.device.empty() ? ctx.device : "cpu: " + env.cpu;
  env.compute_capability = ctx.compute_capability;
  env.python = ctx.python;
  env.threads = ctx.threads > 0 ? ctx.threads : machine.threads;
  env.os = machine.os;
  env.image = machine.image;
  env.harness = ctx.harness;
  env.clocks = ctx.clocks;
  env.env_id = compute_env_id(env);

  import_summary counts;
  for (auto& m : results) {
    run_result& r = m.result;
    if (r.status != result_status::ok) {
      ++counts.not_ok;
    } else if (r.aggregates) {
      ++counts.aggregates_only;
    } else {
      ++counts.with_samples;
      if (r.samples_ms.size() < 8) counts.few_samples.push_back(r.key().label());
    }
    // A single group says nothing more than none.
    if (r.groups.size() == 1) r.groups.clear();
    run.results.push_back(std::move(r));
  }
  counts.configurations = run.results.size();
  if (summary) *summary = counts;
  // What rnx import writes must read back under the run document's own rules (every reader validates).
  return run_from_json(to_json(run), "the imported run");
}

}  // namespace rnx::importers
