// The explaining step: which configurations, each side profiled in its own worker within the budget, the diff and
// the counts attached, and the tools that do it for real (rnx-profile-worker, ncu, the steady clock).
#include "rnx/explain/explain.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/explanation_report.hpp"
#include "rnx/common/files.hpp"
#include "rnx/common/process.hpp"
#include "rnx/common/text.hpp"
#include "rnx/explain/diff.hpp"
#include "rnx/optimize/profile_worker.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <unistd.h>

namespace rnx::explain {

namespace fs = std::filesystem;

bool wanted(explain_scope scope, decision d) {
  switch (scope) {
    case explain_scope::off: return false;
    case explain_scope::automatic: return d == decision::slower || d == decision::abstain;
    case explain_scope::all:
      return d == decision::slower || d == decision::abstain || d == decision::faster || d == decision::equivalent;
  }
  return false;
}

namespace {

optimize::profile_options options_of(const profile_job& job) {
  optimize::profile_options o;
  o.runtime = job.key.runtime;
  o.dtype = job.key.dtype;
  o.batch = job.key.batch;
  o.device = job.device;
  o.warmup_calls = warmup_calls;
  o.calls = profiled_calls;
  return o;
}

// A file name for ncu's report that nothing else uses; removed by its owner.
class scratch_file {
 public:
  scratch_file() {
    std::string pattern = (fs::temp_directory_path() / "rnx-ncu-XXXXXX").string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw error(errc::internal, "cannot create a scratch file for ncu's report in " + pattern);
    ::close(fd);
    path_ = pattern;
  }
  ~scratch_file() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  scratch_file(const scratch_file&) = delete;
  scratch_file& operator=(const scratch_file&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::optional<ncu_counts> counters_under_ncu(const profile_job& job, std::string& why) {
  if (job.device.rfind("cuda", 0) != 0) {
    why = "no device counters on " + (job.device.empty() ? std::string("this device") : job.device);
    return std::nullopt;
  }
  optimize::profile_options o = options_of(job);
  o.warmup_calls = 1;  // the first call's one-time work (autotuning, lazy modules) stays out of the window
  o.calls = 1;
  o.mark_window_only = true;
  const char* configured = std::getenv("RNX_NCU");
  const std::string ncu = configured && *configured ? configured : "ncu";
  scratch_file report;
  process_result r;
  try {
    r = run_process(ncu_argv(ncu, report.path(), optimize::profile_worker_argv(job.manifest, job.key.kernel, o)),
                    optimize::profile_worker_process(job.manifest, job.timeout));
  } catch (const error& e) {
    if (e.code() != errc::not_found) throw;
    why = "Nsight Compute (" + ncu + ") is not on PATH (install it, or name it in RNX_NCU)";
    return std::nullopt;
  }
  if (r.timed_out || r.exit_code != 0) {
    why = "ncu " +
          std::string(r.timed_out ? "did not finish within " + std::to_string(job.timeout.count()) + " s"
                                  : "exited with status " + std::to_string(r.exit_code)) +
          ": " + tail_lines(r.err + r.out, 4);
    return std::nullopt;
  }
  const auto text = read_whole_file(report.path());
  if (!text) throw error(errc::internal, "ncu wrote no report to " + report.path().string());
  return parse_ncu_csv(*text, "ncu report of " + job.key.label());
}

const run_result* find_result(const run_document* run, const config_key& key) {
  if (!run) return nullptr;
  for (const auto& r : run->results) {
    if (r.key() == key) return &r;
  }
  return nullptr;
}

std::string seconds_text(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", s);
  return buffer;
}

void add_counters(explanation& e, const profile_job& base, const profile_job& head, const tools& t) {
  std::string why;
  const auto b = t.counters(base, why);
  const auto h = b ? t.counters(head, why) : std::nullopt;
  if (!b || !h) {
    e.note = "Nsight Compute counters not taken: " + why;
    return;
  }
  set_count(e, {count_kind::dram_bytes_read, b->dram_bytes_read, h->dram_bytes_read});
  set_count(e, {count_kind::dram_bytes_written, b->dram_bytes_written, h->dram_bytes_written});
  set_count(e, {count_kind::instructions, b->instructions, h->instructions});
  e.profiler += ", Nsight Compute (one call a side)";
}

// Both sides profiled (and counted) within what is left of the budget; failures become the explanation's note.
explanation explain_one(const config_verdict& c, const sides& s, const explain_settings& settings, const tools& t,
                        double deadline_s) {
  const run_result* base = find_result(s.base_run, c.key);
  const run_result* head = find_result(s.head_run, c.key);
  const std::string device = head ? head->device : (base ? base->device : "");
  auto job = [&](const fs::path& manifest) {
    const double left = deadline_s - t.now_s();
    return profile_job{manifest, c.key, device, std::chrono::seconds(std::max<long long>(1, std::llround(left)))};
  };
  explanation e;
  try {
    const optimize::op_profile b = t.profile(job(s.base_manifest));
    const optimize::op_profile h = t.profile(job(s.head_manifest));
    e = diff_profiles(b, h, settings.count_threshold);
    add_work_counts(e, base, head);
    if (settings.ncu && t.counters) add_counters(e, job(s.base_manifest), job(s.head_manifest), t);
  } catch (const error& failure) {
    e = explanation{};
    e.status = explain_status::failed;
    e.count_threshold = settings.count_threshold;
    e.note = "not explained: profiling failed: " + std::string(failure.what());
  }
  return e;
}

}  // namespace

tools default_tools(std::ostream* log) {
  tools t;
  t.profile = [](const profile_job& job) {
    return optimize::profile_in_worker(job.manifest, job.key.kernel, options_of(job), job.timeout);
  };
  t.counters = counters_under_ncu;
  t.now_s = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  t.log = log;
  return t;
}

verdict_document explain_verdict(verdict_document v, const sides& s, const explain_settings& settings, const tools& t) {
  const double start = t.now_s();
  for (auto& c : v.configs) {
    if (!wanted(settings.scope, c.result)) continue;
    const double spent = t.now_s() - start;
    explanation e;
    if (spent >= settings.budget_s) {
      e.status = explain_status::over_budget;
      e.count_threshold = settings.count_threshold;
      e.note = "not profiled: the job's profiling budget of " + seconds_text(settings.budget_s) + " s was spent (" +
               seconds_text(spent) + " s; raise [gate] explain_budget_s)";
    } else {
      const double t0 = t.now_s();
      e = explain_one(c, s, settings, t, start + settings.budget_s);
      e.cost_s = t.now_s() - t0;
    }
    if (t.log) {
      *t.log << "rnx explain: " << terminal_safe(c.key.label(), false) << " " << to_string(e.status) << " in "
             << seconds_text(e.cost_s) << " s\n";
    }
    attach_explanation(c, std::move(e));
  }
  return v;
}

}  // namespace rnx::explain
