// How far a run's configurations are from what the machine allows: the speed of light of one result (the run page's
// column), and the data of the speed-of-light page `rnx report --proof` publishes, with the reasons it refuses to.
#include "rnx/service/page_views.hpp"
#include "rnx/service/pages.hpp"

#include "pages_parts.hpp"

#include "rnx/common/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace rnx::pages {

namespace bj = boost::json;

namespace {

// The SM clock may wander this much while sampling and still count as held (one clock step of a locked GPU).
constexpr double held_clock_spread = 0.01;

std::string mhz_text(double mhz) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.0f MHz", mhz);
  return buffer;
}

std::optional<double> clock_of(const environment& env, const std::string& name) {
  auto it = env.clocks.find(name);
  if (it == env.clocks.end()) return std::nullopt;
  return it->second;
}

// The clocks' part of the refusals: queried and locked, and still while the samples were taken.
void clock_refusals(const environment& env, std::vector<std::string>& out) {
  const auto locked = clock_of(env, "locked");
  if (!locked) {
    out.push_back(
        "the run did not record whether its clocks were locked (environment.clocks.locked is absent: no NVML on the "
        "GPU's machine, or no cpufreq on the CPU's); measure on a machine where rnx bench can query them");
  } else if (*locked != 1) {
    out.push_back(
        "the clocks were not locked (environment.clocks.locked is 0): they boost and throttle with load and "
        "temperature, so a fraction of peak moves with them; lock them with the platform's tools (for a GPU, "
        "nvidia-smi --lock-gpu-clocks by an administrator; for a CPU, a cpufreq floor equal to its ceiling) and "
        "measure again. rnx only reads clocks, it never sets them");
  }
  const auto low = clock_of(env, "sm_mhz_min");
  const auto high = clock_of(env, "sm_mhz_max");
  if (low && high && *high > *low * (1 + held_clock_spread)) {
    out.push_back("the SM clock moved from " + mhz_text(*low) + " to " + mhz_text(*high) +
                  " while the samples were taken; with locked clocks it holds still");
  }
}

// The results' part: measured on a CUDA device, every measured result timed with the L2 flushed, and something to
// set against the peaks.
void result_refusals(const run_document& run, std::vector<std::string>& out) {
  std::vector<std::string> warm;
  std::size_t measured = 0;
  std::size_t on_cpu = 0;
  for (const auto& r : run.results) {
    if (r.status != result_status::ok || r.samples_ms.empty()) continue;
    ++measured;
    if (r.device.rfind("cpu", 0) == 0) ++on_cpu;
    if (r.l2 != l2_state::flushed) warm.push_back(r.key().label());
  }
  if (measured == 0) out.push_back("the run has no measured configuration (every result failed or was skipped)");
  if (on_cpu > 0) {
    out.push_back(
        "a CPU run cannot qualify (" + std::to_string(on_cpu) + " of " + std::to_string(measured) +
        " measured configurations ran on the CPU): rnx flushes no CPU cache before a timed call, so a working set "
        "that fits in the cache is timed from it and its fraction of the copy's peak says nothing of the memory; "
        "measure on a CUDA device with locked clocks");
  }
  if (!warm.empty()) {
    std::string list;
    for (std::size_t i = 0; i < warm.size() && i < 5; ++i) list += (i ? ", " : "") + warm[i];
    if (warm.size() > 5) list += " and " + std::to_string(warm.size() - 5) + " more";
    out.push_back(std::to_string(warm.size()) + " configuration" + (warm.size() == 1 ? " was" : "s were") +
                  " not timed with the L2 flushed before every call (" + list +
                  "): a working set left in the cache by the call before is not what the peaks measure; rnx bench "
                  "flushes it on CUDA devices, so measure them there");
  }
  if (run.env.peaks.empty()) {
    out.push_back(
        "the run recorded no peaks of its machine (environment.peaks): measure it with rnx bench outside "
        "--contain, whose first worker on a machine measures them");
  }
}

}  // namespace

std::optional<light_figures> light_of(const run_result& r, const environment& env, std::optional<double> ms) {
  if (!r.work || !ms) return std::nullopt;
  auto measured = speed_of_light(*r.work, r.dtype, env.peaks, *ms);
  if (!measured) return std::nullopt;
  light_figures out{*measured, peak_error(*measured, env.peak_measurements), std::nullopt};
  if (auto sheet = datasheet_for(env.device)) {
    if (auto s = speed_of_light(*r.work, r.dtype, sheet->peaks, *ms)) out.sheet_fraction = s->fraction;
  }
  return out;
}

bj::object light_json(const light_figures& l) {
  return {{"fraction", l.measured.fraction},
          {"ideal_ms", l.measured.ideal_ms},
          {"bound", l.measured.compute_bound ? "compute"
                    : l.measured.elementwise ? "elementwise"
                                             : "memory"},
          {"peak_error", l.error},
          {"beyond_peak", beyond_peak(l.measured, l.error)},
          {"sheet_fraction", l.sheet_fraction ? bj::value(*l.sheet_fraction) : bj::value(nullptr)}};
}

std::vector<std::string> proof_refusals(const run_document& run) {
  std::vector<std::string> out;
  clock_refusals(run.env, out);
  result_refusals(run, out);
  return out;
}

std::string_view to_string(figure_source source) { return source == figure_source::reported ? "reported" : "measured"; }

proof_view proof_data(const run_document& run, const std::string& id, figure_source figures) {
  if (auto refusals = proof_refusals(run); !refusals.empty()) {
    std::string text = "rnx report --proof: no speed-of-light page for run " + id + ". " +
                       std::string(proof_requirements) + "\nThis run does not qualify, because:";
    for (const auto& r : refusals) text += "\n  - " + r;
    throw error(errc::invalid, text);
  }
  proof_view v;
  v.figures = figures;
  v.project = run.project;
  v.run = {id, run.commit, run.branch, run.base_branch, run.pull_request, run.env.env_id, run.created_at, false};
  v.env = run.env;
  v.sheet = datasheet_for(run.env.device);
  for (const auto& r : run.results) {
    if (r.status != result_status::ok || r.samples_ms.empty()) continue;
    const auto number = number_of(r);
    auto light = light_of(r, run.env, number.ms);
    if (!light) {
      v.without_light.push_back(r.key());
      continue;
    }
    v.rows.push_back({r.key(), *number.ms, *r.work, achieved(*r.work, *number.ms), *light});
  }
  std::stable_sort(v.rows.begin(), v.rows.end(), [](const proof_row& a, const proof_row& b) {
    return a.light.measured.fraction > b.light.measured.fraction;
  });
  return v;
}

bj::object to_json(const proof_view& v) {
  auto optional = [](const std::optional<double>& x) { return x ? bj::value(*x) : bj::value(nullptr); };
  auto integer = [](const std::optional<std::int64_t>& x) { return x ? bj::value(*x) : bj::value(nullptr); };
  bj::array rows;
  for (const auto& r : v.rows) {
    bj::object row = key_json(r.key);
    row["stat_ms"] = r.ms;
    row["flops"] = integer(r.work.flops);
    row["bytes"] = integer(r.work.bytes);
    row["work_source"] = to_string(r.work.source);
    row["gflop_per_s"] = optional(r.rates.gflop_per_s);
    row["gb_per_s"] = optional(r.rates.gb_per_s);
    row["light"] = light_json(r.light);
    rows.push_back(std::move(row));
  }
  bj::array without;
  for (const auto& k : v.without_light) without.push_back(bj::value(k.label()));
  bj::object peaks;
  for (const auto& [name, value] : v.env.peaks) peaks[name] = value;
  bj::object clocks;
  for (const auto& [name, value] : v.env.clocks) clocks[name] = value;
  return {{"project", v.project},
          {"run", v.run.id},
          {"commit", v.run.commit},
          {"env_id", v.env.env_id},
          {"device", v.env.device},
          {"peaks", std::move(peaks)},
          {"clocks", std::move(clocks)},
          {"figures", to_string(v.figures)},
          {"datasheet", v.sheet ? bj::value(v.sheet->source) : bj::value(nullptr)},
          {"bytes_measured_by", "counted"},
          {"rows", std::move(rows)},
          {"without_light", std::move(without)}};
}

}  // namespace rnx::pages
