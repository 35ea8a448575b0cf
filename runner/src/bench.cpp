// The orchestrator: plans configurations, runs rounds of worker processes with timeouts, merges their samples.
#include "rnx/runner/bench.hpp"

#include "build_config.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/process.hpp"
#include "rnx/common/text.hpp"
#include "rnx/runner/native_build.hpp"
#include "rnx/runner/python.hpp"
#include "rnx/runner/sample_stats.hpp"
#include "rnx/stats/verdict.hpp"
#include "worker_protocol.hpp"
#include "worker_run.hpp"
#include "bench_plan.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <map>
#include <random>
#include <set>
#include <sstream>

namespace rnx::runner {

namespace fs = std::filesystem;
namespace bj = boost::json;

fs::path default_worker_path() {
  if (const char* w = std::getenv("RNX_WORKER"); w && *w) return w;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path beside = self.parent_path() / "rnx-runner-worker";
    if (fs::exists(beside)) return beside;
  }
  return "rnx-runner-worker";
}

namespace {

using clock_type = std::chrono::steady_clock;

using detail::worker_run;
using detail::planned;
using detail::side_state;

std::string fmt_ms(double ms) {
  std::ostringstream os;
  os << std::setprecision(4) << ms;
  return os.str();
}

class orchestrator {
 public:
  orchestrator(const bench_options& o, std::vector<side_state>& sides, std::vector<planned>& plan)
      : o_(o), sides_(sides), plan_(plan) {
    worker_ = o.worker.empty() ? default_worker_path() : o.worker;
    total_rounds_ = 0;
    for (const auto& p : plan_) {
      total_rounds_ = std::max(total_rounds_, p.max_processes);
      looks_ = std::max(looks_, p.max_processes - p.processes + 1);
    }
    policy_ = o.policy.value_or(sides_[0].m.gate);
    std::random_device entropy;
    pairing_seed_ = (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
  }

  // Looks of the sequential schedule (1 outside paired runs).
  int looks() const { return looks_; }
  const bench_timing& timing() const { return timing_; }

  void run() {
    prebuild_native();
    for (int round = 0; round < total_rounds_; ++round) {
      look(round);
      // In-process pairs first: a pair that cannot share its process falls back to the per-side workers below,
      // in this same round.
      std::vector<std::size_t> joint;
      for (std::size_t i = 0; i < plan_.size(); ++i) {
        if (plan_[i].side == 0 && plan_[i].in_process && runs_in(plan_[i], round)) joint.push_back(i);
      }
      rotate(joint, round);
      run_round(0, round, joint, true);
      // Alternating the side order per round keeps drift from favouring head or base in a paired run.
      std::vector<std::size_t> order;
      for (std::size_t s = 0; s < sides_.size(); ++s) order.push_back(s);
      if (round % 2 == 1) std::reverse(order.begin(), order.end());
      for (std::size_t s : order) {
        std::vector<std::size_t> pending;
        for (std::size_t i = 0; i < plan_.size(); ++i) {
          if (plan_[i].side == s && !plan_[i].in_process && runs_in(plan_[i], round)) pending.push_back(i);
        }
        rotate(pending, round);
        run_round(s, round, pending, false);
      }
    }
    if (o_.live && o_.log) *o_.log << "\r\033[K" << std::flush;
    report_construction_orders();
  }

  // One line per in-process pair: which side was loaded and bound first in each of its processes.
  void report_construction_orders() {
    for (const auto& p : plan_) {
      if (p.side != 0 || !p.in_process || p.first_sides.empty()) continue;
      std::string orders;
      int base_first = 0;
      for (const auto& f : p.first_sides) {
        orders += (orders.empty() ? "" : ", ") + f;
        base_first += f == "base";
      }
      std::ostringstream os;
      os << "[pairing] " << label(p) << ": side loaded first per process: " << orders << " (base first in "
         << base_first << " of " << p.first_sides.size() << ")";
      progress(os.str(), true);
    }
  }

 private:
  bool runs_in(const planned& p, int round) const {
    if (p.failed || p.decided) return false;
    if (p.partner && plan_[*p.partner].failed) return round < p.processes;  // nothing left to pair it with
    if (round >= p.processes && budget_left_ms(p) < 0.25 * base_budget_ms(p)) return false;  // total budget spent
    return round < p.max_processes;
  }

  // The manifest's (or --budget-ms's) timed budget of one process and side.
  double base_budget_ms(const planned& p) const { return o_.budget_ms.value_or(p.spec->bench.budget_ms); }

  // What is left of this side's share of the configuration's total budget (a pair's two sides share it equally).
  double budget_left_ms(const planned& p) const {
    const double share = 1000 * p.spec->bench.total_budget_s * (p.partner ? 0.5 : 1.0);
    return std::max(0.0, share - p.spent_ms);
  }

  // The timed budget of this side in the process of `round`: the manifest's for the first look's processes (at
  // most an equal share of what is left), doubled at each later look (docs/runner.md: a configuration still
  // undecided needs each process's ratio known better, or more processes, and longer processes give both), never
  // more than what the total budget has left. Samples are capped in proportion.
  std::pair<double, int> process_budget(const planned& p, int round) const {
    const double base = base_budget_ms(p);
    const int samples = o_.max_samples.value_or(p.spec->bench.max_samples);
    const double left = budget_left_ms(p);
    if (round < p.processes) {
      return {std::min(base, left / static_cast<double>(p.processes - round)), samples};
    }
    const double factor = std::ldexp(1.0, std::min(round - p.processes + 1, 10));
    const double budget = std::min(base * factor, left);
    const double scale = base > 0 ? budget / base : 1.0;
    return {budget, static_cast<int>(std::min(100000.0, std::ceil(samples * std::max(1.0, scale))))};
  }

  // Rotating the start keeps any one configuration from always running first in a fresh process.
  static void rotate(std::vector<std::size_t>& v, int round) {
    if (!v.empty()) std::rotate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(round % v.size()), v.end());
  }

  // A look of the sequential schedule, before `round`: every pair that has had its first `processes` rounds and
  // is decided at the split threshold stops (docs/statistics.md). The verdict later applies the same threshold
  // to the same samples, so it reaches the same decision.
  void look(int round) {
    if (sides_.size() < 2) return;
    const pairing_info schedule{"", "head", "", in_process_block, looks_};
    for (auto& head : plan_) {
      if (head.side != 0 || !head.partner || head.decided || head.failed || round < head.processes) continue;
      // An in-process pair alternates which side is loaded first (where each side's weights land) from process
      // to process: it is judged only after an even number of processes, when both orders count equally.
      if (head.in_process && round % 2 == 1) continue;
      planned& base = plan_[*head.partner];
      if (base.failed || head.rounds_done != round || base.rounds_done != round) continue;
      const stats::comparison c = stats::compare_measured(base.result, head.result, policy_, schedule);
      if (c.result == decision::abstain) continue;
      head.decided = base.decided = true;
      std::ostringstream os;
      os << "[look " << (round - head.processes + 1) << "/" << looks_ << "] " << std::left << std::setw(44)
         << label(head) << " " << to_string(c.result) << " after " << round << " processes";
      if (c.ratio) os << " (ratio " << std::fixed << std::setprecision(3) << *c.ratio << ")";
      progress(os.str(), true);
    }
  }

  // Compiling .cpp/.cu kernels once here keeps the compiler out of the workers' timeouts.
  void prebuild_native() {
    std::set<const kernel_spec*> done;
    for (auto& p : plan_) {
      std::string kind = p.spec->kind();
      if ((kind != "cpp" && kind != "cuda") || done.count(p.spec)) continue;
      done.insert(p.spec);
      if (kind == "cuda" && !cuda_visible()) continue;  // the worker reports it as skipped
      progress("building " + p.spec->path + " ...");
      std::string failure;
      try {
        build_native_kernel(*p.spec, sides_[p.side].m.cuda_arch,
                            o_.cache_dir.empty() ? default_cache_dir() : o_.cache_dir);
      } catch (const runtime_unavailable& e) {
        for (auto& q : plan_) {
          if (q.spec == p.spec) set_failed(q, result_status::skipped, e.what());
        }
      } catch (const error& e) {
        for (auto& q : plan_) {
          if (q.spec == p.spec) set_failed(q, result_status::error, e.what());
        }
      }
    }
  }

  static bool cuda_visible() {
    std::string out;
    try {
      return run_capture({"nvidia-smi", "-L"}, out) == 0 && out.find("GPU") != std::string::npos;
    } catch (const error&) {
      return false;
    }
  }

  void progress(const std::string& line, bool permanent = false) {
    if (!o_.log) return;
    if (o_.live) {
      *o_.log << "\r\033[K" << line << (permanent ? "\n" : "") << std::flush;
    } else if (permanent) {
      *o_.log << line << "\n" << std::flush;
    }
  }

  void run_round(std::size_t side, int round, std::vector<std::size_t> pending, bool joint) {
    while (!pending.empty()) {
      detail::worker_job job;
      job.manifest = fs::absolute(sides_[side].manifest_path).string();
      if (joint) job.base_manifest = fs::absolute(sides_[1].manifest_path).string();
      job.pairing_seed = pairing_seed_ ^ (static_cast<std::uint64_t>(round) << 48);
      job.cuda_arch = sides_[side].m.cuda_arch;
      job.cache_dir = (o_.cache_dir.empty() ? default_cache_dir() : o_.cache_dir).string();
      job.device_override = o_.device;
      bool any_gpu = o_.device.empty() ? false : o_.device != "cpu";
      for (std::size_t i : pending) any_gpu = any_gpu || (o_.device.empty() && plan_[i].spec->device != "cpu");
      job.fingerprint_device = any_gpu ? "auto" : "cpu";
      job.overrides = {o_.min_samples, o_.max_samples, o_.budget_ms, o_.warmup_ms};
      for (std::size_t i : pending) {
        const planned& p = plan_[i];
        detail::job_config c{i, p.result.kernel, p.result.runtime, p.result.dtype, p.result.batch, !p.checked};
        if (joint) {
          c.base_index = *p.partner;
          c.check_base = !plan_[*p.partner].checked;
          // Which side is loaded and bound first alternates from one process of the configuration to the next.
          c.base_first = (p.first_sides.size() + i) % 2 == 0;
        }
        const auto [budget_ms, max_samples] = process_budget(p, round);
        c.budget_ms = budget_ms;
        c.max_samples = std::max(max_samples, o_.min_samples.value_or(p.spec->bench.min_samples));
        job.configs.push_back(std::move(c));
      }
      fs::path job_path = fs::temp_directory_path() /
                          ("rnx-job-" + std::to_string(::getpid()) + "-" + std::to_string(job_counter_++) + ".json");
      {
        std::ofstream out(job_path);
        out << json::serialize(detail::to_json(job));
        if (!out) throw error(errc::internal, job_path.string() + ": cannot write the worker job");
      }
      std::set<std::size_t> finished = run_worker(side, round, job_path, pending, joint);
      std::error_code ec;
      fs::remove(job_path, ec);
      std::vector<std::size_t> rest;
      for (std::size_t i : pending) {
        if (!finished.count(i) && !(joint && !plan_[i].in_process)) rest.push_back(i);
      }
      pending = std::move(rest);
    }
  }

  // A pair that cannot share its worker: from now on each side runs in processes of its own.
  void split_pair(planned& head, const std::string& reason) {
    planned& base = plan_[*head.partner];
    head.in_process = base.in_process = false;
    head.result.pairing = base.result.pairing = "process";
    head.result.pairing_reason = base.result.pairing_reason = reason;
    progress("[pairing] " + label(head) + ": measured in separate processes: " + reason, true);
  }

  // Runs one worker over `pending`; returns the configurations it settled (including ones it crashed on).
  std::set<std::size_t> run_worker(std::size_t side, int round, const fs::path& job_path,
                                   const std::vector<std::size_t>& pending, bool joint) {
    std::set<std::size_t> settled;
    worker_run w(worker_, job_path, o_.contain);
    ++timing_.workers;
    const auto launched = clock_type::now();
    bool ready = false;
    std::optional<std::size_t> current;
    auto started = clock_type::now();
    // Starting Python and importing torch takes seconds; a worker that cannot even start gets a minute.
    double limit_s = 60;
    bool timed_out = false;
    while (!w.finished()) {
      double left_ms = limit_s * 1000 - std::chrono::duration<double, std::milli>(clock_type::now() - started).count();
      if (left_ms <= 0) {
        w.kill();
        timed_out = true;
        break;
      }
      for (const std::string& line : w.poll_lines(static_cast<int>(std::min(left_ms, 1000.0)))) {
        bj::value event;
        try {
          event = json::parse(line, "worker output");
        } catch (const error&) {
          continue;  // not ours: a kernel writing to fd 3 would be odd, but must not break the run
        }
        const auto& obj = event.as_object();
        std::string kind = obj.at("event").as_string().c_str();
        if (kind == "ready") {
          ready = true;
          timing_.worker_start_s += std::chrono::duration<double>(clock_type::now() - launched).count();
          for (std::size_t s = 0; s < sides_.size(); ++s) {
            if ((s == side || joint) && !sides_[s].env) {
              sides_[s].env = run_from_json(bj::object{{"schema", run_schema_id}, {"project", "x"},
                                                       {"environment", obj.at("environment")},
                                                       {"results", bj::array{}}},
                                            "worker environment")
                                  .env;
            }
          }
        } else if (kind == "start") {
          current = static_cast<std::size_t>(obj.at("index").to_number<std::int64_t>());
          started = clock_type::now();
          // Both sides of a pair are measured in this one configuration's time.
          limit_s = plan_[*current].timeout_s * (joint ? 2 : 1);
          progress("[" + std::to_string(round + 1) + "/" + std::to_string(total_rounds_) + "] " +
                   label(plan_[*current]) + (joint ? " (paired in-process)" : "") + " ...");
        } else if (kind == "result") {
          std::size_t index = static_cast<std::size_t>(obj.at("index").to_number<std::int64_t>());
          if (obj.contains("warmup_ms")) timing_.warmup_s += obj.at("warmup_ms").to_number<double>() / 1000;
          const double sampling_ms = obj.contains("sampling_ms") ? obj.at("sampling_ms").to_number<double>() : 0;
          timing_.sampling_s += sampling_ms / 1000;
          if (obj.contains("pair_fallback")) {
            split_pair(plan_[index], obj.at("pair_fallback").as_string().c_str());
          } else {
            if (obj.contains("base")) {
              // One process timed both sides in sampling_ms: each side's share of the budget is charged half.
              planned& base = plan_[*plan_[index].partner];
              base.spent_ms += sampling_ms / 2;
              plan_[index].spent_ms += sampling_ms / 2;
              if (obj.contains("first_side")) {
                plan_[index].first_sides.push_back(obj.at("first_side").as_string().c_str());
              }
              merge(1, round, base, obj.at("base").as_object());
            } else {
              plan_[index].spent_ms += sampling_ms;
            }
            merge(side, round, plan_[index], obj);
          }
          settled.insert(index);
          current.reset();
        }
      }
    }
    bool clean = false;
    std::string how = w.wait_description(clean);
    if (!ready && settled.empty()) {
      // Nothing ran: the same failure would repeat for every configuration, so report it on all of them.
      std::string message = "the worker process " + worker_.string() + " failed before running any kernel (" +
                            (timed_out ? "no answer within 60 s" : how) + "): " + w.log_tail();
      for (std::size_t i : pending) {
        fail_with_partner(i, message, joint);
        settled.insert(i);
        report(round, plan_[i]);
      }
      return settled;
    }
    if (current) {
      planned& p = plan_[*current];
      std::string message;
      if (timed_out) {
        std::ostringstream os;
        os << "timed out: no result within " << p.timeout_s << " s, the worker was killed (a hang?); if the kernel is "
           << "just slow, raise timeout_s for it in rnx.toml";
        message = os.str();
      } else {
        message = "the worker process crashed (" + how + ") while running this configuration";
      }
      std::string tail = w.log_tail();
      if (!tail.empty()) message += "; last output: " + tail;
      if (joint) {
        // Which side crashed or hung is not known yet: each side on its own will tell.
        split_pair(p, "the shared worker failed on it (" + message + ")");
      } else {
        set_failed(p, result_status::error, message);
        report(round, p);
      }
      settled.insert(*current);
    } else if (!clean && settled.size() < pending.size()) {
      // Died between configurations: settle the next one so the loop always makes progress.
      for (std::size_t i : pending) {
        if (!settled.count(i)) {
          fail_with_partner(i, "the worker process ended (" + how + ") before this configuration started: " +
                                   w.log_tail(), joint);
          settled.insert(i);
          report(round, plan_[i]);
          break;
        }
      }
    }
    return settled;
  }

  void fail_with_partner(std::size_t i, const std::string& message, bool joint) {
    set_failed(plan_[i], result_status::error, message);
    if (joint) set_failed(plan_[*plan_[i].partner], result_status::error, message);
  }

  void merge(std::size_t side, int round, planned& p, const bj::object& obj) {
    std::string status = obj.at("status").as_string().c_str();
    p.result.device = obj.at("device").as_string().c_str();
    if (obj.contains("max_abs_err")) {
      p.checked = true;
      p.result.max_abs_err = obj.at("max_abs_err").to_number<double>();
      p.result.rel_err = obj.at("rel_err").to_number<double>();
      p.result.tol = tolerance{obj.at("rtol").to_number<double>(), obj.at("atol").to_number<double>()};
      if (std::isinf(*p.result.max_abs_err)) p.result.max_abs_err = 1e308;
      if (std::isinf(*p.result.rel_err)) p.result.rel_err = 1e308;
    }
    std::string message = obj.contains("message") ? obj.at("message").as_string().c_str() : "";
    if (status == "ok") {
      const auto& samples = obj.at("samples_ms").as_array();
      for (const auto& s : samples) p.result.samples_ms.push_back(s.to_number<double>());
      p.result.groups.push_back(static_cast<std::int64_t>(samples.size()));
      if (obj.contains("minor_faults")) {
        std::ostringstream os;
        os << obj.at("migrations").to_number<std::int64_t>() << " migrations, "
           << obj.at("minor_faults").to_number<std::int64_t>() / std::max<std::int64_t>(1, samples.size())
           << " page faults per sample, " << obj.at("preempted_samples").to_number<std::int64_t>() << " preempted";
        p.process_notes.push_back(os.str());
      }
      if (obj.contains("sm_mhz")) {
        for (const auto& c : obj.at("sm_mhz").as_array()) sides_[side].sm_clocks.push_back(c.to_number<double>());
      }
      ++p.rounds_done;
    } else if (status == "skipped") {
      set_failed(p, result_status::skipped, message);
    } else if (status == "diverged") {
      set_failed(p, result_status::diverged, message);
    } else {
      set_failed(p, result_status::error, message);
    }
    report(round, p);
  }

  static std::string label(const planned& p) { return p.result.key().label(); }

  void report(int round, const planned& p) {
    std::ostringstream os;
    const bool last = p.failed || p.rounds_done >= p.processes;
    if (o_.live && !last) return;  // a terminal shows each configuration once, when it is done
    os << "[" << (round + 1) << "/" << total_rounds_ << "] " << std::left << std::setw(44) << label(p) << " "
       << std::setw(8) << to_string(p.result.status);
    if (!p.failed && !p.result.groups.empty()) {
      std::vector<double> last_group(p.result.samples_ms.end() - p.result.groups.back(), p.result.samples_ms.end());
      os << " median " << fmt_ms(median(last_group)) << " ms (" << last_group.size() << " samples)";
    } else if (p.failed) {
      std::string first_line = p.result.message.substr(0, p.result.message.find('\n'));
      if (first_line.size() > 160) first_line = first_line.substr(0, 157) + "...";
      os << " " << first_line;
    }
    progress(os.str(), true);
  }

  const bench_options& o_;
  std::vector<side_state>& sides_;
  std::vector<planned>& plan_;
  fs::path worker_;
  int total_rounds_ = 0;
  int looks_ = 1;
  gate_policy policy_;
  bench_timing timing_;
  std::uint64_t pairing_seed_ = 0;
  int job_counter_ = 0;
};

}  // namespace

std::vector<bench_side> run_bench(const bench_options& options, bench_timing* timing) {
  const auto began = clock_type::now();
  if (options.manifests.empty()) throw error(errc::usage, "no manifest given (pass --config rnx.toml)");
  std::vector<side_state> sides;
  for (const auto& path : options.manifests) {
    side_state s;
    s.m = load_manifest(path);
    s.manifest_path = path;
    sides.push_back(std::move(s));
  }
  std::vector<planned> configs = plan(sides, options);
  orchestrator runner(options, sides, configs);
  runner.run();
  if (timing) {
    *timing = runner.timing();
    timing->total_s = std::chrono::duration<double>(clock_type::now() - began).count();
  }
  std::string pairing_id;
  if (sides.size() > 1) {
    std::random_device entropy;
    std::ostringstream id;
    id << std::hex << std::setfill('0') << std::setw(8) << entropy() << std::setw(8) << entropy();
    pairing_id = id.str();
  }

  std::vector<bench_side> out;
  for (std::size_t s = 0; s < sides.size(); ++s) {
    bench_side side;
    side.env = sides[s].env.value_or(environment{});
    if (!sides[s].env) {
      side.env.device = "unknown (no worker started)";
      side.env.env_id = compute_env_id(side.env);
    }
    if (!sides[s].sm_clocks.empty()) {
      auto [lo, hi] = std::minmax_element(sides[s].sm_clocks.begin(), sides[s].sm_clocks.end());
      side.env.clocks["sm_mhz"] = median(sides[s].sm_clocks);
      side.env.clocks["sm_mhz_min"] = *lo;
      side.env.clocks["sm_mhz_max"] = *hi;
    }
    if (!pairing_id.empty()) {
      side.pairing = pairing_info{pairing_id, s == 0 ? "head" : "base", "", in_process_block, runner.looks()};
    }
    for (auto& p : configs) {
      if (p.side != s) continue;
      if (p.result.status == result_status::ok) {
        if (auto why = instability(p.result.samples_ms, p.result.groups)) {
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
      }
      if (!p.note.empty()) p.result.message = p.note + (p.result.message.empty() ? "" : "; " + p.result.message);
      side.results.push_back(p.result);
    }
    side.source = std::move(sides[s].m);
    out.push_back(std::move(side));
  }
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

void print_summary(std::ostream& os, const run_document& run) {
  // The note column holds one short line; a message that does not fit is printed whole below the table, so an
  // error's fix (often at its end) is never cut off.
  constexpr std::size_t note_width = 110;
  os << std::left << std::setw(44) << "configuration" << std::setw(10) << "status" << std::right << std::setw(12)
     << "median ms" << std::setw(10) << "spread" << std::setw(10) << "samples" << std::setw(11) << "processes"
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
    } else {
      os << std::setw(12) << "-" << std::setw(10) << "-" << std::setw(10) << "-" << std::setw(11) << "-";
    }
    std::string note = r.message.substr(0, r.message.find('\n'));
    if (note.size() > note_width || note.size() < r.message.size()) {
      note = note.substr(0, std::min(note.size(), note_width - 20)) + "... (in full below)";
      cut.push_back(&r);
    }
    os << "  " << note << "\n";
  }
  os << "median ms: the median of each worker process's samples, geometric mean over the processes (the statistic "
        "the verdict compares); spread: MAD / median of all samples; samples: all processes together\n";
  for (const auto* r : cut) {
    os << r->key().label() << " " << to_string(r->status) << ":\n";
    std::istringstream lines(r->message);
    for (std::string line; std::getline(lines, line);) os << "    " << line << "\n";
  }
}

}  // namespace rnx::runner
