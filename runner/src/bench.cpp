// `rnx bench`: loads the manifests, plans the configurations, lets the orchestrator measure them, and assembles
// each side's run; also the run document and the summary table.
#include "rnx/runner/bench.hpp"

#include "build_config.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/process.hpp"
#include "rnx/common/text.hpp"
#include "rnx/runner/native_build.hpp"
#include "rnx/runner/peak_cache.hpp"
#include "rnx/common/speed_of_light.hpp"
#include "rnx/runner/python.hpp"
#include "rnx/runner/sample_stats.hpp"
#include "rnx/stats/verdict.hpp"
#include "bench_plan.hpp"
#include "orchestrator.hpp"
#include "work.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <thread>
#include <iomanip>
#include <random>
#include <sstream>

namespace rnx::runner {

namespace fs = std::filesystem;
namespace bj = boost::json;

fs::path default_worker_path() { return helper_program_path("RNX_WORKER", "rnx-runner-worker"); }

namespace {

using clock_type = std::chrono::steady_clock;

using detail::device_lane;
using detail::planned;
using detail::side_state;

std::string fmt_ms(double ms) {
  std::ostringstream os;
  os << std::setprecision(4) << ms;
  return os.str();
}

std::vector<side_state> load_sides(const bench_options& options) {
  if (options.manifests.empty()) throw error(errc::usage, "no manifest given (pass --config rnx.toml)");
  std::vector<side_state> sides;
  for (const auto& path : options.manifests) {
    side_state s;
    s.m = load_manifest(path);
    s.manifest_path = path;
    sides.push_back(std::move(s));
  }
  return sides;
}

// The id both documents of a paired run carry; "" for a single run.
std::string new_pairing_id(std::size_t sides) {
  if (sides < 2) return {};
  std::random_device entropy;
  std::ostringstream id;
  id << std::hex << std::setfill('0') << std::setw(8) << entropy() << std::setw(8) << entropy();
  return id.str();
}

// The environment a side's workers reported, with the SM clocks they read while sampling.
environment side_environment(const side_state& side) {
  environment env = side.env.value_or(environment{});
  if (!side.env) {
    env.device = "unknown (no worker started)";
    env.env_id = compute_env_id(env);
  }
  if (!side.sm_clocks.empty()) {
    auto [lo, hi] = std::minmax_element(side.sm_clocks.begin(), side.sm_clocks.end());
    env.clocks["sm_mhz"] = median(side.sm_clocks);
    env.clocks["sm_mhz_min"] = *lo;
    env.clocks["sm_mhz_max"] = *hi;
  }
  return env;
}

// A measured configuration whose processes disagree is marked unstable, with what each process went through.
void mark_instability(planned& p) {
  if (p.result.status != result_status::ok) return;
  auto why = instability(p.result.samples_ms, p.result.groups, p.partner.has_value());
  if (!why) return;
  p.result.unstable = true;
  p.result.message = "unstable: " + *why;
  // What each process went through while sampling, so the cause can be told (a migration, faults).
  if (p.process_notes.size() == p.result.groups.size()) {
    std::string notes;
    for (std::size_t i = 0; i < p.process_notes.size(); ++i) {
      notes += (i ? "; " : "") + std::string("process ") + std::to_string(i + 1) + ": " + p.process_notes[i];
    }
    p.result.message += " [" + notes + "]";
  }
}

bench_side assemble_side(std::size_t s, side_state& state, std::vector<planned>& configs, const std::string& pairing_id,
                         int looks) {
  bench_side side;
  side.env = side_environment(state);
  if (!pairing_id.empty()) {
    side.pairing = pairing_info{pairing_id, s == 0 ? pair_side::head : pair_side::base, "", in_process_block, looks};
  }
  for (auto& p : configs) {
    if (p.side != s) continue;
    mark_instability(p);
    if (!p.note.empty()) p.result.message = p.note + (p.result.message.empty() ? "" : "; " + p.result.message);
    side.results.push_back(p.result);
  }
  side.source = std::move(state.m);
  return side;
}

// The lanes of --devices, else of the manifest's [bench] devices; empty for a run on one device.
std::vector<device_lane> device_lanes(const bench_options& o, const manifest& m) {
  const bool from_option = !o.devices.empty();
  const std::string spec = from_option ? o.devices : m.devices;
  if (spec.empty()) return {};
  if (!o.device.empty() && from_option) {
    throw error(errc::usage, "--device " + o.device + " and --devices " + spec +
                                 ": pass one (--devices names each device a configuration may run on)");
  }
  const std::string where = from_option ? std::string("--devices") : m.source + ": [bench] devices";
  std::vector<device_lane> lanes = detail::parse_devices(spec, where);
  const bool any_cuda = std::any_of(lanes.begin(), lanes.end(), [](const device_lane& l) { return l.is_cuda(); });
  detail::check_lanes(lanes, any_cuda ? detail::visible_gpus() : std::vector<detail::gpu_model>{});
  return lanes;
}

// Whether workers are started ahead of their turn (bench.hpp, prestart_mode).
bool prestarts(const bench_options& o, const std::vector<device_lane>& lanes, const std::vector<planned>& plan) {
  if (o.contain || o.prestart == prestart_mode::off) return false;
  if (o.prestart == prestart_mode::on) return true;
  if (!lanes.empty()) return lanes.front().is_cuda();
  if (!o.device.empty()) {
    return device_kind_from_string(o.device) != device_kind::cpu && detail::orchestrator::cuda_visible();
  }
  const bool any_gpu = std::any_of(plan.begin(), plan.end(), [](const planned& p) {
    return device_kind_from_string(p.spec->device) != device_kind::cpu;
  });
  return any_gpu && detail::orchestrator::cuda_visible();
}

// How many workers each lane starts ahead of their turn: a worker's start (Python and torch; 6-10 s on a GPU
// machine whose file cache is cold) is hidden only by the measuring of the workers ahead of it, each a few seconds
// of a suite's configurations (docs/gpu-results.md, run 50: with one started ahead, 33 s of a 65 s run waited for
// starts). A quarter of the machine's cores over its lanes, one to three a lane: waiting workers use CPU only (no
// device is opened before a worker has its job), and one started for a round that never comes is stopped.
int prestart_depth(std::size_t lanes) {
  const auto cores = static_cast<std::size_t>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<int>(std::clamp<std::size_t>(cores / (4 * std::max<std::size_t>(lanes, 1)), 1, 3));
}

// Runs every lane (one without --devices) to the end, concurrently; returns the looks of the schedule.
int run_lanes(const bench_options& options, std::vector<side_state>& sides, std::vector<planned>& configs,
              const std::vector<device_lane>& lanes, bench_timing* timing, clock_type::time_point began) {
  detail::lane_shared shared;
  const int prestart = prestarts(options, lanes, configs) ? prestart_depth(lanes.size()) : 0;
  std::vector<std::unique_ptr<detail::orchestrator>> runners;
  if (lanes.empty()) {
    std::vector<std::size_t> all(configs.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    runners.push_back(std::make_unique<detail::orchestrator>(options, sides, configs, all, nullptr, prestart, shared));
  } else {
    const auto members = detail::assign_lanes(configs, lanes.size());
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      runners.push_back(
          std::make_unique<detail::orchestrator>(options, sides, configs, members[l], &lanes[l], prestart, shared));
    }
  }
  runners.front()->prebuild_native();
  std::vector<std::exception_ptr> failures(runners.size());
  std::vector<std::thread> threads;
  for (std::size_t l = 1; l < runners.size(); ++l) {
    threads.emplace_back([&, l] {
      try {
        runners[l]->run();
      } catch (...) {
        failures[l] = std::current_exception();
      }
    });
  }
  try {
    runners.front()->run();
  } catch (...) {
    failures.front() = std::current_exception();
  }
  for (auto& t : threads) t.join();
  for (const auto& f : failures) {
    if (f) std::rethrow_exception(f);
  }
  if (timing) {
    *timing = shared.ledger.take(std::chrono::duration<double>(clock_type::now() - began).count(),
                                 static_cast<int>(std::max<std::size_t>(1, lanes.size())));
  }
  int looks = 1;
  for (const auto& r : runners) looks = std::max(looks, r->looks());
  return looks;
}

// The work of a configuration is the problem's, not what a candidate happens to execute: in a paired run the head
// of a configuration whose work was counted carries the base's count (a function kernel is its own reference, and
// the base branch's is the problem's definition; a KernelBench file's is its Model's on both sides). Declared work
// stays the head's own.
void take_base_work(bench_side& head, const bench_side& base) {
  for (auto& r : head.results) {
    if (r.work && r.work->source == work_source::declared) continue;
    const auto same = std::find_if(base.results.begin(), base.results.end(),
                                   [&](const run_result& b) { return b.key() == r.key() && b.work; });
    if (same != base.results.end() && same->work->source == work_source::counted) r.work = same->work;
  }
}

// Whether the measured peak of `light`'s bound limits `r` at all: a matrix product's always; the copy's only where
// every timed call started with the cache flushed (CUDA). On the CPU nothing is flushed, so a working set that fits
// in the cache is read from it, past the copy's peak, and that is neither beyond the machine nor a low peak.
bool peak_limits(const run_result& r, const light_speed& light) {
  return light.compute_bound || r.l2 == l2_state::flushed;
}

// Each peak a result of `side` beats (a fraction of it past 1, however little) is marked in the environment's
// cache, so that the next worker measures it again and the higher stands (peak_cache.hpp).
void mark_beaten_peaks(const bench_side& side, const fs::path& cache_dir) {
  for (const auto& r : side.results) {
    if (r.status != result_status::ok || r.samples_ms.empty() || !r.work) continue;
    const auto centre = stats::observed_statistic({r.samples_ms, r.groups}, statistic::median);
    if (!centre) continue;
    const auto light = speed_of_light(*r.work, r.dtype, side.env.peaks, *centre);
    if (!light || !(light->fraction > 1) || !peak_limits(r, *light)) continue;
    std::ostringstream by;
    by << r.key().label() << " at " << std::setprecision(4) << light->fraction << " of it";
    mark_beaten(cache_dir, side.env.env_id, light->peak, by.str());
  }
}

}  // namespace

std::vector<bench_side> run_bench(const bench_options& options, bench_timing* timing) {
  const auto began = clock_type::now();
  std::vector<side_state> sides = load_sides(options);
  std::vector<planned> configs = plan(sides, options);
  const std::vector<device_lane> lanes = device_lanes(options, sides[0].m);
  const int looks = run_lanes(options, sides, configs, lanes, timing, began);
  const std::string pairing_id = new_pairing_id(sides.size());
  std::vector<bench_side> out;
  const fs::path cache_dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
  for (std::size_t s = 0; s < sides.size(); ++s) {
    out.push_back(assemble_side(s, sides[s], configs, pairing_id, looks));
    take_kept_peaks(out.back().env, cache_dir);
  }
  if (out.size() == 2) take_base_work(out[0], out[1]);
  for (const auto& side : out) mark_beaten_peaks(side, cache_dir);
  return out;
}

run_document make_run_document(const bench_side& side, std::string commit, std::string branch, std::string base_branch,
                               std::optional<std::int64_t> pull_request) {
  run_document doc;
  doc.project = side.source.project;
  doc.commit = std::move(commit);
  doc.branch = std::move(branch);
  doc.base_branch = std::move(base_branch);
  doc.pull_request = pull_request;
  doc.created_at = utc_now_rfc3339();
  doc.env = side.env;
  doc.results = side.results;
  doc.pairing = side.pairing;
  return doc;
}

namespace {

// The achieved FLOP and byte rates of a result's work at the median per call, each "-" where unknown; a rate from
// declared work is marked with a *.
void print_rates(std::ostream& os, const run_result& r, const std::optional<double>& median_ms) {
  achieved_rates rates;
  if (r.work && median_ms) rates = achieved(*r.work, *median_ms);
  const std::string mark = r.work && r.work->source == work_source::declared ? "*" : "";
  auto cell = [&](const std::optional<double>& rate) { return detail::rate_text(rate) + (rate ? mark : ""); };
  os << std::setw(10) << cell(rates.gflop_per_s) << std::setw(10) << cell(rates.gb_per_s);
}

// "62% mem" / "45% flop" (">9999% mem" past a hundred times the limit): how close the median is to the time its work
// takes at the peak of its bound (the dtype's matrix product for FLOPs, a device copy for bytes), against `peaks`; "-"
// where that is unknown.
std::string light_cell(const run_result& r, const std::map<std::string, double>& peaks,
                       const std::map<std::string, peak_measurement>& measurements,
                       const std::optional<double>& median_ms) {
  if (!r.work || !median_ms) return "-";
  const auto light = speed_of_light(*r.work, r.dtype, peaks, *median_ms);
  if (!light) return "-";
  // The column holds ten characters: a time a hundred times past the limit (a result kept, not computed; the note
  // says so with its numbers) is written as past 9999%, its exact figure in the run document's work and peaks.
  if (light->fraction >= 100) return std::string(">9999% ") + std::string(bound_text(*light));
  return light_text(*light, peak_error(*light, measurements));
}

// "BEYOND THE MEASURED PEAK: ...: " where the median is past the machine's measured peak of its bound by more than
// that peak's own measurement error, else empty.
std::string peak_note(const run_result& r, const environment& env, const std::optional<double>& median_ms) {
  if (r.status != result_status::ok || !r.work || !median_ms) return "";
  const auto light = speed_of_light(*r.work, r.dtype, env.peaks, *median_ms);
  if (!light) return "";
  const double error = peak_error(*light, env.peak_measurements);
  if (!beyond_peak(*light, error) || !peak_limits(r, *light)) return "";
  std::ostringstream os;
  os << std::setprecision(3) << "BEYOND THE MEASURED PEAK: " << 100 * light->fraction << "% of " << light->peak
     << " (its error " << 100 * error << "%) ";
  return os.str();
}

// "beyond the physical limit ...: " where the result's median is below its physical bound, else empty.
std::string physics_note(const run_result& r) {
  if (r.status != result_status::ok || !r.bound || r.samples_ms.empty()) return "";
  const auto centre = stats::observed_statistic({r.samples_ms, r.groups}, statistic::median);
  if (!centre || !beyond_physics(*r.bound, *centre)) return "";
  return "BEYOND THE PHYSICAL LIMIT: " + physics_text(*r.bound, *centre) + " ";
}

}  // namespace

void print_summary(std::ostream& os, const run_document& run) {
  // The note column holds one short line; a message that does not fit is printed whole below the table, so an
  // error's fix (often at its end) is never cut off.
  constexpr std::size_t note_width = 110;
  const auto sheet = datasheet_for(run.env.device);
  const std::map<std::string, double> no_peaks;
  os << std::left << std::setw(44) << "configuration" << std::setw(10) << "status" << std::right << std::setw(12)
     << "median ms" << std::setw(10) << "spread" << std::setw(10) << "samples" << std::setw(11) << "processes"
     << std::setw(10) << "GFLOP/s" << std::setw(10) << "GB/s" << std::setw(11) << "SOL" << std::setw(11) << "sheet"
     << "  note\n";
  std::vector<const run_result*> cut;
  for (const auto& r : run.results) {
    os << std::left << std::setw(44) << r.key().label() << std::setw(10) << to_string(r.status) << std::right;
    if (r.status == result_status::ok && !r.samples_ms.empty()) {
      std::ostringstream spread;
      spread << std::fixed << std::setprecision(1) << 100 * relative_mad(r.samples_ms) << "%";
      // The statistic the verdict compares (rnx compare, rnx gate), not the median of the pooled samples.
      const auto centre = stats::observed_statistic({r.samples_ms, r.groups}, statistic::median);
      // Each number in its own column, right-aligned under its header (the per-process counts are in the run file).
      os << std::setw(12) << (centre ? fmt_ms(*centre) : std::string("-")) << std::setw(10) << spread.str()
         << std::setw(10) << r.samples_ms.size() << std::setw(11) << std::max<std::size_t>(r.groups.size(), 1);
      print_rates(os, r, centre);
      os << std::setw(11) << light_cell(r, run.env.peaks, run.env.peak_measurements, centre) << std::setw(11)
         << light_cell(r, sheet ? sheet->peaks : no_peaks, {}, centre);
    } else {
      os << std::setw(12) << "-" << std::setw(10) << "-" << std::setw(10) << "-" << std::setw(11) << "-";
      print_rates(os, r, std::nullopt);
      os << std::setw(11) << "-" << std::setw(11) << "-";
    }
    const auto centre =
        r.samples_ms.empty() ? std::nullopt : stats::observed_statistic({r.samples_ms, r.groups}, statistic::median);
    std::string note = physics_note(r) + peak_note(r, run.env, centre) + r.message.substr(0, r.message.find('\n'));
    if (note.size() > note_width || note.size() < r.message.size()) {
      note = note.substr(0, std::min(note.size(), note_width - 20)) + "... (in full below)";
      cut.push_back(&r);
    }
    os << "  " << note << "\n";
  }
  os << "median ms: the median of each worker process's samples, geometric mean over the processes (the statistic "
        "the verdict compares); spread: MAD / median of all samples; samples: all processes together; GFLOP/s, GB/s: "
        "the work of one call of the eager reference over that median (* declared in rnx.toml, not counted); SOL: the "
        "time that work takes at this machine's measured peak of its bound (flop: the dtype's matrix product, mem: a "
        "device copy; elem: the bytes bind, but the work evaluates transcendental elementwise functions, arithmetic no "
        "measured peak is for, so the figure is a floor; environment.peaks) over the median, written 100% where it is "
        "past the peak by no more than the "
        "peak's own measurement error (environment.peak_measurements), and noted BEYOND THE MEASURED PEAK where by "
        "more (the copy's peak only where the cache was flushed before each call, as on CUDA); sheet: the same against "
        "the device's datasheet";
  if (sheet) os << " (" << sheet->source << ")";
  os << "\n";
  for (const auto* r : cut) {
    os << r->key().label() << " " << to_string(r->status) << ":\n";
    std::istringstream lines(r->message);
    for (std::string line; std::getline(lines, line);) os << "    " << line << "\n";
  }
}

}  // namespace rnx::runner
