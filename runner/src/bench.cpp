// The orchestrator: plans configurations, runs rounds of worker processes with timeouts, merges their samples.
#include "rnx/runner/bench.hpp"

#include "build_config.hpp"
#include "process.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/text.hpp"
#include "rnx/common/json.hpp"
#include "rnx/runner/native_build.hpp"
#include "rnx/runner/python.hpp"
#include "rnx/runner/sample_stats.hpp"
#include "worker_protocol.hpp"

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

struct planned {
  std::size_t side = 0;
  const kernel_spec* spec = nullptr;
  run_result result;
  int processes = 3;
  double timeout_s = 120;
  bool failed = false;   // error / diverged / skipped: not run again
  bool checked = false;  // the reference check ran (first process that got this far)
  int rounds_done = 0;
};

struct side_state {
  manifest m;
  fs::path manifest_path;
  std::optional<environment> env;
  std::vector<double> sm_clocks;
};

std::string fmt_ms(double ms) {
  std::ostringstream os;
  os << std::setprecision(4) << ms;
  return os.str();
}

bool selected(const std::vector<std::string>& filter, const std::string& value) {
  return filter.empty() || std::find(filter.begin(), filter.end(), value) != filter.end();
}

std::vector<planned> plan(const std::vector<side_state>& sides, const bench_options& o) {
  std::vector<planned> out;
  for (std::size_t s = 0; s < sides.size(); ++s) {
    const manifest& m = sides[s].m;
    for (const auto& name : o.filters.kernels) {
      if (s == 0 && !m.find_kernel(name)) {
        std::string names;
        for (const auto& k : m.kernels) names += (names.empty() ? "" : ", ") + k.name;
        throw error(errc::usage, "--kernel " + name + ": no such kernel in " + m.source + " (kernels: " + names + ")");
      }
    }
    for (const auto& k : m.kernels) {
      if (!selected(o.filters.kernels, k.name)) continue;
      for (const auto& runtime : k.runtimes) {
        if (!selected(o.filters.runtimes, runtime)) continue;
        for (const auto& dtype : k.dtypes) {
          if (!selected(o.filters.dtypes, dtype)) continue;
          for (auto batch : k.batch) {
            if (!o.filters.batches.empty() &&
                std::find(o.filters.batches.begin(), o.filters.batches.end(), batch) == o.filters.batches.end()) {
              continue;
            }
            planned p;
            p.side = s;
            p.spec = &k;
            p.result.kernel = k.name;
            p.result.runtime = runtime;
            p.result.dtype = dtype;
            p.result.batch = batch;
            p.result.device = o.device.empty() ? k.device : o.device;
            p.processes = o.processes.value_or(k.bench.processes);
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
  return out;
}

void set_failed(planned& p, result_status status, std::string message) {
  p.failed = true;
  p.result.status = status;
  p.result.message = std::move(message);
  p.result.samples_ms.clear();
  p.result.groups.clear();
}

// One worker process: started on a job, read until it exits or is killed for a timeout.
class worker_run {
 public:
  worker_run(const fs::path& worker, const fs::path& job_path) {
    int result_pipe[2];
    int log_pipe[2];
    if (::pipe2(result_pipe, O_CLOEXEC) != 0 || ::pipe2(log_pipe, O_CLOEXEC) != 0) {
      throw error(errc::internal, std::string("pipe failed: ") + std::strerror(errno));
    }
    pid_ = ::fork();
    if (pid_ < 0) throw error(errc::internal, std::string("fork failed: ") + std::strerror(errno));
    if (pid_ == 0) {
      ::setpgid(0, 0);  // its own process group: a timeout kills compiler helpers it started too
      ::dup2(result_pipe[1], 3);
      ::dup2(log_pipe[1], 1);
      ::dup2(log_pipe[1], 2);
      int devnull = ::open("/dev/null", O_RDONLY);
      if (devnull >= 0) ::dup2(devnull, 0);
      std::string w = worker.string();
      std::string j = job_path.string();
      const char* argv[] = {w.c_str(), "--job", j.c_str(), "--result-fd", "3", nullptr};
      ::execv(w.c_str(), const_cast<char* const*>(argv));
      ::execvp(w.c_str(), const_cast<char* const*>(argv));
      std::string msg = "cannot start the worker " + w + ": " + std::strerror(errno) + "\n";
      (void)!::write(2, msg.data(), msg.size());
      ::_exit(127);
    }
    ::setpgid(pid_, pid_);
    ::close(result_pipe[1]);
    ::close(log_pipe[1]);
    result_fd_ = result_pipe[0];
    log_fd_ = log_pipe[0];
  }
  ~worker_run() {
    if (result_fd_ >= 0) ::close(result_fd_);
    if (log_fd_ >= 0) ::close(log_fd_);
    if (pid_ > 0 && !reaped_) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  // Waits up to `timeout_ms` for output; returns complete result lines. Sets finished() at end of output.
  std::vector<std::string> poll_lines(int timeout_ms) {
    std::vector<std::string> lines;
    pollfd fds[2] = {{result_fd_, POLLIN, 0}, {log_fd_, POLLIN, 0}};
    int n = ::poll(fds, 2, std::max(timeout_ms, 0));
    if (n < 0 && errno != EINTR) throw error(errc::internal, std::string("poll failed: ") + std::strerror(errno));
    char buffer[65536];
    if (fds[1].fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t got = ::read(log_fd_, buffer, sizeof buffer);
      if (got > 0) {
        log_.append(buffer, static_cast<std::size_t>(got));
        if (log_.size() > 256 * 1024) log_.erase(0, log_.size() - 128 * 1024);
      } else if (got == 0) {
        ::close(log_fd_);
        log_fd_ = -1;
      }
    }
    if (fds[0].fd >= 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t got = ::read(result_fd_, buffer, sizeof buffer);
      if (got > 0) {
        pending_.append(buffer, static_cast<std::size_t>(got));
        std::size_t nl;
        while ((nl = pending_.find('\n')) != std::string::npos) {
          lines.push_back(pending_.substr(0, nl));
          pending_.erase(0, nl + 1);
        }
      } else if (got == 0) {
        ::close(result_fd_);
        result_fd_ = -1;
      }
    }
    return lines;
  }

  bool finished() const { return result_fd_ < 0 && log_fd_ < 0; }

  void kill() { ::kill(-pid_, SIGKILL); }

  // Reaps the process; describes how it ended ("exit 0", "killed by signal 11 (Segmentation fault)").
  std::string wait_description(bool& clean) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    ::kill(-pid_, SIGKILL);  // helpers the kernel left behind (compile workers) go with it
    clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (WIFSIGNALED(status)) {
      int sig = WTERMSIG(status);
      std::string text = "killed by signal " + std::to_string(sig) + " (" + detail::signal_name(sig) + ")";
      if (sig == SIGKILL) text += "; out of memory?";
      return text;
    }
    return "exit status " + std::to_string(WEXITSTATUS(status));
  }

  std::string log_tail() const { return tail_lines(log_, 12); }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int result_fd_ = -1;
  int log_fd_ = -1;
  std::string pending_;
  std::string log_;
};

class orchestrator {
 public:
  orchestrator(const bench_options& o, std::vector<side_state>& sides, std::vector<planned>& plan)
      : o_(o), sides_(sides), plan_(plan) {
    worker_ = o.worker.empty() ? default_worker_path() : o.worker;
    total_rounds_ = 0;
    for (const auto& p : plan_) total_rounds_ = std::max(total_rounds_, p.processes);
  }

  void run() {
    prebuild_native();
    for (int round = 0; round < total_rounds_; ++round) {
      // Alternating the side order per round keeps drift from favouring head or base in a paired run.
      std::vector<std::size_t> order;
      for (std::size_t s = 0; s < sides_.size(); ++s) order.push_back(s);
      if (round % 2 == 1) std::reverse(order.begin(), order.end());
      for (std::size_t s : order) {
        std::vector<std::size_t> pending;
        for (std::size_t i = 0; i < plan_.size(); ++i) {
          if (plan_[i].side == s && !plan_[i].failed && round < plan_[i].processes) pending.push_back(i);
        }
        // Rotating the start keeps any one configuration from always running first in a fresh process.
        if (!pending.empty()) std::rotate(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(round % pending.size()), pending.end());
        run_round(s, round, pending);
      }
    }
    if (o_.live && o_.log) *o_.log << "\r\033[K" << std::flush;
  }

 private:
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
      return detail::run_capture({"nvidia-smi", "-L"}, out) == 0 && out.find("GPU") != std::string::npos;
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

  void run_round(std::size_t side, int round, std::vector<std::size_t> pending) {
    while (!pending.empty()) {
      detail::worker_job job;
      job.manifest = fs::absolute(sides_[side].manifest_path).string();
      job.cuda_arch = sides_[side].m.cuda_arch;
      job.cache_dir = (o_.cache_dir.empty() ? default_cache_dir() : o_.cache_dir).string();
      job.device_override = o_.device;
      bool any_gpu = o_.device.empty() ? false : o_.device != "cpu";
      for (std::size_t i : pending) any_gpu = any_gpu || (o_.device.empty() && plan_[i].spec->device != "cpu");
      job.fingerprint_device = any_gpu ? "auto" : "cpu";
      job.overrides = {o_.min_samples, o_.max_samples, o_.budget_ms, o_.warmup_ms};
      for (std::size_t i : pending) {
        const planned& p = plan_[i];
        job.configs.push_back({i, p.result.kernel, p.result.runtime, p.result.dtype, p.result.batch, !p.checked});
      }
      fs::path job_path = fs::temp_directory_path() /
                          ("rnx-job-" + std::to_string(::getpid()) + "-" + std::to_string(job_counter_++) + ".json");
      {
        std::ofstream out(job_path);
        out << json::serialize(detail::to_json(job));
        if (!out) throw error(errc::internal, job_path.string() + ": cannot write the worker job");
      }
      std::set<std::size_t> finished = run_worker(side, round, job_path, pending);
      std::error_code ec;
      fs::remove(job_path, ec);
      std::vector<std::size_t> rest;
      for (std::size_t i : pending) {
        if (!finished.count(i)) rest.push_back(i);
      }
      pending = std::move(rest);
    }
  }

  // Runs one worker over `pending`; returns the configurations it settled (including ones it crashed on).
  std::set<std::size_t> run_worker(std::size_t side, int round, const fs::path& job_path,
                                   const std::vector<std::size_t>& pending) {
    std::set<std::size_t> settled;
    worker_run w(worker_, job_path);
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
          if (!sides_[side].env) {
            sides_[side].env = run_from_json(bj::object{{"schema", run_schema_id}, {"project", "x"},
                                                        {"environment", obj.at("environment")},
                                                        {"results", bj::array{}}},
                                             "worker environment")
                                   .env;
          }
        } else if (kind == "start") {
          current = static_cast<std::size_t>(obj.at("index").to_number<std::int64_t>());
          started = clock_type::now();
          limit_s = plan_[*current].timeout_s;
          progress("[" + std::to_string(round + 1) + "/" + std::to_string(total_rounds_) + "] " +
                   label(plan_[*current]) + " ...");
        } else if (kind == "result") {
          std::size_t index = static_cast<std::size_t>(obj.at("index").to_number<std::int64_t>());
          merge(side, round, plan_[index], obj);
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
        set_failed(plan_[i], result_status::error, message);
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
      set_failed(p, result_status::error, message);
      settled.insert(*current);
      report(round, p);
    } else if (!clean && settled.size() < pending.size()) {
      // Died between configurations: settle the next one so the loop always makes progress.
      for (std::size_t i : pending) {
        if (!settled.count(i)) {
          set_failed(plan_[i], result_status::error, "the worker process ended (" + how + ") before this "
                                                     "configuration started: " + w.log_tail());
          settled.insert(i);
          report(round, plan_[i]);
          break;
        }
      }
    }
    return settled;
  }

  static std::string label(const planned& p) { return p.result.key().label(); }

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
  int job_counter_ = 0;
};

}  // namespace

std::vector<bench_side> run_bench(const bench_options& options) {
  if (options.manifests.empty()) throw error(errc::usage, "no manifest given (pass --config rnx.toml)");
  std::vector<side_state> sides;
  for (const auto& path : options.manifests) {
    side_state s;
    s.m = load_manifest(path);
    s.manifest_path = path;
    sides.push_back(std::move(s));
  }
  std::vector<planned> configs = plan(sides, options);
  orchestrator(options, sides, configs).run();

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
    for (auto& p : configs) {
      if (p.side != s) continue;
      if (p.result.status == result_status::ok) {
        if (auto why = instability(p.result.samples_ms, p.result.groups)) {
          p.result.unstable = true;
          p.result.message = "unstable: " + *why;
        }
      }
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
  return doc;
}

void print_summary(std::ostream& os, const run_document& run) {
  os << std::left << std::setw(44) << "configuration" << std::setw(10) << "status" << std::right << std::setw(12)
     << "median ms" << std::setw(10) << "spread" << std::setw(10) << "samples" << "  note\n";
  for (const auto& r : run.results) {
    os << std::left << std::setw(44) << r.key().label() << std::setw(10) << to_string(r.status) << std::right;
    if (r.status == result_status::ok && !r.samples_ms.empty()) {
      std::ostringstream spread;
      spread << std::fixed << std::setprecision(1) << 100 * relative_mad(r.samples_ms) << "%";
      std::string groups;
      for (auto g : r.groups) groups += (groups.empty() ? "" : "+") + std::to_string(g);
      os << std::setw(12) << fmt_ms(median(r.samples_ms)) << std::setw(10) << spread.str() << std::setw(10) << groups;
    } else {
      os << std::setw(12) << "-" << std::setw(10) << "-" << std::setw(10) << "-";
    }
    std::string note = r.message.substr(0, r.message.find('\n'));
    if (note.size() > 110) note = note.substr(0, 107) + "...";
    os << "  " << note << "\n";
  }
}

}  // namespace rnx::runner
