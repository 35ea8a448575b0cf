// rnx-verify-worker: runs the correctness stages and the audit on one candidate inside the sandbox, reporting one
// JSON line per check on the result pipe. Started by rnx::verify::verify_candidate, never by hand.
#include <Python.h>

#include "device_checks.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/secret_scan.hpp"
#include "rnx/runner/kernel.hpp"
#include "rnx/runner/worker_channel.hpp"
#include "rnx/sandbox/sandbox.hpp"
#include "rnx/verify/verify.hpp"
#include "candidate_remote.hpp"
#include "worker_checks.hpp"
#include "worker_kernels.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <c10/core/GradMode.h>

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <functional>
#include <optional>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <thread>

using namespace rnx;
using namespace rnx::verify::detail;
using runner::py_ref;

namespace {

// `--candidate-host --job JOB --channel IN,OUT`: this process is the candidate's own (started by the judge below).
bool candidate_host_args(int argc, char** argv, std::string& job, int& in_fd, int& out_fd) {
  bool host = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--candidate-host") == 0) host = true;
    if (std::strcmp(argv[i], "--job") == 0 && i + 1 < argc) job = argv[i + 1];
    if (std::strcmp(argv[i], "--channel") == 0 && i + 1 < argc) {
      if (std::sscanf(argv[i + 1], "%d,%d", &in_fd, &out_fd) != 2) return false;
    }
  }
  return host;
}

// rnx::credential_name called from Python: the static scan's one argument, a variable's name.
PyObject* credential_name_for_python(PyObject* /*self*/, PyObject* name) {
  const char* text = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
  if (!text) return nullptr;  // PyUnicode_AsUTF8 set the error; a non-string key is a TypeError below
  return PyBool_FromLong(credential_name(text) ? 1 : 0);
}

PyMethodDef credential_rule_method = {"credential_name", credential_name_for_python, METH_O,
                                      "Whether a variable's name marks a credential (rnx's one rule)."};

// One rule for credentials: the static scan calls secret the variables the environment filter withholds.
void share_credential_rule() {
  py_ref rule = py_ref::steal(PyCFunction_New(&credential_rule_method, nullptr));
  py_ref rule_args = py_ref::steal(PyTuple_Pack(1, rule.get()));
  call_verify("set_credential_rule", rule_args.get());
}

// The reference once on its first declared batch, so the device and the reference are warm before any check.
void warm_reference(const job& j, kernel_pair& pair, const at::Device& device) {
  shape_variant sh{j.batches.empty() ? 1 : j.batches.front(), {}};
  std::vector<at::Tensor> in;
  for (const auto& b : pair.base_inputs(sh, j.seed)) in.push_back(b.to(device));
  pair.reference().call(in, at::kFloat, sh);
  synchronize_device(device);
}

// The candidate's process's last word, or none when it ended before it could say it.
std::optional<host_report> finish_candidate(remote_candidate& candidate) {
  try {
    return candidate.finish();
  } catch (const error&) {
    return std::nullopt;
  }
}

// The "sealed" event: both processes' seccomp filters and what the candidate's refused; the processes of the run
// that ended during a case and were restarted are named in `restarts`.
void emit_sealed(candidate_slot& slot, const host_report* h, bool judge_sealed, const std::string& judge_why) {
  remote_candidate& candidate = slot.get();
  // A process that ended early has no last word: its filter as it reported it after the import stands.
  const bool host_sealed = h ? h->sealed : candidate.sealed_at_load();
  sealed_event sealed{.seccomp = judge_sealed && host_sealed,
                      .why = judge_why + (h ? h->why : candidate.why_at_load())};
  if (!h && !host_sealed && sealed.why.empty()) {
    sealed.why = "the candidate's process ended before it reported its filter (" + candidate.ended() + ")";
  }
  sealed.killed = candidate.signal() == SIGSYS ? candidate.ended() : "";
  if (sealed.killed.empty()) sealed.killed = slot.killed_by_filter();
  if (h) {
    sealed.sockets = h->blocked.sockets;
    sealed.processes = h->blocked.processes;
    sealed.io_uring = h->blocked.io_uring;
    sealed.foreign_abi = h->blocked.foreign_abi;
    sealed.other = h->blocked.other;
    sealed.calls = h->blocked.calls;
    sealed.writes_outside = {.count = h->writes_outside, .first = h->first_write};
  }
  sealed.restarts = slot.restarts();
  emit(to_json(sealed));
}

// What importing and calling the candidate cost in its own process, for the report's cost line.
void emit_costs(const verify::candidate_costs& c) {
  emit(to_json(costs_event{.compiler_stack_s = c.compiler_stack_s,
                           .import_s = c.import_s,
                           .first_call_s = c.first_call_s,
                           .other_calls_s = c.other_calls_s,
                           .calls = c.calls}));
}

// CPU time a thread the candidate left must have used to count as working (milliseconds, since it started): a
// thread that only waits (a pool between jobs, a started and parked worker) uses a fraction of that to start.
constexpr double working_thread_ms = 1.0;
// How long the threads the candidate left are watched after its last call, for work still going on.
constexpr auto thread_watch = std::chrono::milliseconds(300);

struct threads_left_behind {
  std::vector<long> left;         // threads that were not there before the candidate was imported
  std::vector<long> working;      // of them, those that used CPU time (working_thread_ms) since they started
  std::vector<long> after_calls;  // of them, those that used CPU time while watched after the last call
};

// The threads the candidate left running: those of its process that were not there before it was imported (torch's
// pools, its compiler stack and the installed packages it imports are the baseline).
threads_left_behind threads_left(candidate_slot& slot) {
  const std::map<long, double>& before = slot.threads_before();
  const pid_t pid = slot.get().pid();
  const std::map<long, double> first = thread_cpu_ms(pid);
  std::this_thread::sleep_for(thread_watch);
  const std::map<long, double> second = thread_cpu_ms(pid);
  threads_left_behind t;
  for (const auto& [tid, ms] : second) {
    if (before.count(tid)) continue;
    t.left.push_back(tid);
    if (ms >= working_thread_ms) t.working.push_back(tid);
    auto it = first.find(tid);
    if (ms - (it == first.end() ? 0.0 : it->second) >= working_thread_ms) t.after_calls.push_back(tid);
  }
  return t;
}

// The extra_threads row: threads the candidate left running. Rejected where one did work (off the thread the timer
// watches, and after its last call where it still does); review where they only wait.
void emit_extra_threads(candidate_slot& slot, const std::optional<host_report>& h, const threads_left_behind& left,
                        int threads_after, double started) {
  std::string d;
  verify::outcome result = verify::outcome::pass;
  const int threads_before = static_cast<int>(slot.threads_before().size());
  const int py_threads_before = slot.python_threads_before();
  if (!h) {
    result = verify::outcome::fail;
    d = "the candidate's process did not last to the end of the run: " + slot.get().ended();
  } else {
    d = "threads of the candidate's process: " + std::to_string(threads_before) + " native / " +
        std::to_string(py_threads_before) + " Python before the candidate (torch's, its compiler stack's and those " +
        "of the installed packages it imports), " + std::to_string(threads_after) + " / " +
        std::to_string(h->python_threads) + " after";
    const bool extra = !left.left.empty() || h->python_threads > py_threads_before;
    if (!left.working.empty()) {
      result = verify::outcome::fail;
      d = "the candidate left " + std::to_string(left.working.size()) + " thread(s) running that did work" +
          (left.after_calls.empty() ? "" : ", still working after its last call returned") +
          " (work off the thread the timer watches); " + d;
    } else if (extra) {
      result = verify::outcome::review;
      d = "the candidate left " + std::to_string(std::max<std::size_t>(left.left.size(), 1)) +
          " thread(s) running that did no work (under " + fmt(working_thread_ms) +
          " ms of CPU each): idle, but started by the candidate, not by an installed package's import; " + d;
    }
  }
  emit_check(verify::check_id::extra_threads, result, d, now_s() - started);
}

// The judge's whole run: reference and device up, the candidate's own process started and loaded, every stage,
// then the audit rows that need the candidate's last word.
void judge(const std::string& job_path) {
  job j = read_job(job_path);
  runner::ensure_python();
  share_credential_rule();
  c10::NoGradGuard no_grad;  // inference only; Python shares this thread-local mode
  at::Device device = runner::resolve_device(j.device);
  emit(to_json(ready_event{.device = device.str()}));
  kernel_pair pair(j.reference, j.shapes, device, j.seed, j.cache_dir);
  emit_static_scan(j, pair.kernelbench());
  warm_reference(j, pair, device);

  // This process is the judge: it holds the result channel and decides every row. The candidate runs in a
  // process of its own, which cannot read or write this one's memory or descriptors: not dumpable (set after
  // the device is up, since CUDA writes under /proc/self while it starts), and both run without capabilities.
  ::prctl(PR_SET_DUMPABLE, 0);
  candidate_slot candidate(job_path, device);
  std::string phase1, phase2;
  const bool judge_sealed = sandbox::install_filter(1, phase1) && sandbox::install_filter(2, phase2);

  const double t_load = now_s();
  const std::string load_error = candidate.load();
  if (!load_error.empty()) {
    emit_check(verify::check_id::smoke, verify::outcome::fail, load_error, now_s() - t_load);
    std::optional<host_report> h = finish_candidate(candidate.get());
    emit_sealed(candidate, h ? &*h : nullptr, judge_sealed, phase1 + phase2);
    emit(to_json(done_event{}));
    std::_Exit(0);
  }
  verifier v(j, pair, candidate);
  v.run_all();

  emit_costs(candidate.costs());
  const double t = now_s();
  const int threads_after = candidate.get().native_threads();
  const auto left = threads_left(candidate);
  std::optional<host_report> h = finish_candidate(candidate.get());
  emit_extra_threads(candidate, h, left, threads_after, t);
  emit_sealed(candidate, h ? &*h : nullptr, judge_sealed, phase1 + phase2);
  emit(to_json(done_event{}));
}

}  // namespace

int main(int argc, char** argv) {
  {
    std::string host_job;
    int in_fd = -1, out_fd = -1;
    if (candidate_host_args(argc, argv, host_job, in_fd, out_fd)) {
      if (host_job.empty() || in_fd < 0 || out_fd < 0) {
        std::cerr << "usage: rnx-verify-worker --candidate-host --job JOB.json --channel IN,OUT (started by the "
                     "verify worker)\n";
        return 2;
      }
      run_candidate_host(host_job, in_fd, out_fd);
    }
  }
  const runner::worker_args args = runner::parse_worker_args(argc, argv);
  set_result_fd(args.result_fd);
  if (args.job_path.empty()) {
    std::cerr << "usage: rnx-verify-worker --job JOB.json --result-fd N (started by `rnx verify`)\n";
    return 2;
  }
  try {
    judge(args.job_path);
  } catch (const runner::runtime_unavailable& e) {
    emit(to_json(fatal_event{.code = errc::usage, .message = e.what()}));
    std::_Exit(2);
  } catch (const error& e) {
    emit(to_json(fatal_event{.code = e.code(), .message = e.what()}));
    std::_Exit(e.exit_code());
  } catch (const std::exception& e) {
    emit(to_json(fatal_event{.code = errc::internal, .message = e.what()}));
    std::_Exit(3);
  }
  std::fflush(stdout);
  // Skip interpreter teardown: CUDA contexts and leftover candidate objects can hang or crash on exit.
  std::_Exit(0);
}
