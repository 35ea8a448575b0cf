// rnx-verify-worker: runs the correctness stages and the audit on one candidate inside the sandbox, reporting one
// JSON line per check on the result pipe. Started by rnx::verify::verify_candidate, never by hand.
#include <Python.h>

#include "device_checks.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
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

namespace bj = boost::json;
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

// One list of secret words: the static scan names the variables the environment filter withholds.
void share_secret_words() {
  py_ref words = py_ref::steal(PyList_New(0));
  for (const auto& w : sandbox::secret_words()) {
    py_ref item = py_ref::steal(PyUnicode_FromString(w.c_str()));
    PyList_Append(words.get(), item.get());
  }
  py_ref word_args = py_ref::steal(PyTuple_Pack(1, words.get()));
  call_verify("set_secret_words", word_args.get());
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

// The "sealed" event: both processes' seccomp filters and what the candidate's refused.
void emit_sealed(remote_candidate& candidate, const host_report* h, bool judge_sealed, const std::string& judge_why) {
  bj::object writes{{"count", h ? h->writes_outside : 0}, {"first", h ? h->first_write : ""}};
  // A process that ended early has no last word: its filter as it reported it after the import stands.
  const bool host_sealed = h ? h->sealed : candidate.sealed_at_load();
  std::string why = judge_why + (h ? h->why : candidate.why_at_load());
  if (!h && !host_sealed && why.empty()) {
    why = "the candidate's process ended before it reported its filter (" + candidate.ended() + ")";
  }
  const std::string killed = candidate.signal() == SIGSYS ? candidate.ended() : "";
  emit(bj::object{{"event", "sealed"},
                  {"seccomp", judge_sealed && host_sealed},
                  {"why", why},
                  {"killed", killed},
                  {"sockets", h ? h->blocked.sockets : 0},
                  {"processes", h ? h->blocked.processes : 0},
                  {"io_uring", h ? h->blocked.io_uring : 0},
                  {"foreign_abi", h ? h->blocked.foreign_abi : 0},
                  {"other", h ? h->blocked.other : 0},
                  {"calls", h ? h->blocked.calls : ""},
                  {"writes_outside", writes}});
}

// What importing and calling the candidate cost in its own process, for the report's cost line.
void emit_costs(const verify::candidate_costs& c) {
  emit(bj::object{{"event", "costs"},
                  {"compiler_stack_s", c.compiler_stack_s},
                  {"import_s", c.import_s},
                  {"first_call_s", c.first_call_s},
                  {"other_calls_s", c.other_calls_s},
                  {"calls", c.calls}});
}

// The extra_threads row: threads the candidate left running, which the timer does not see.
void emit_extra_threads(remote_candidate& candidate, const std::optional<host_report>& h, int threads_before,
                        int py_threads_before, int threads_after, double started) {
  std::string d;
  bool extra = false;
  if (!h) {
    extra = true;
    d = "the candidate's process did not last to the end of the run: " + candidate.ended();
  } else {
    d = "threads of the candidate's process: " + std::to_string(threads_before) + " native / " +
        std::to_string(py_threads_before) + " Python before the candidate, " + std::to_string(threads_after) + " / " +
        std::to_string(h->python_threads) + " after";
    extra = threads_after > threads_before || h->python_threads > py_threads_before;
    if (extra) d = "the candidate left threads running (work the timer does not see); " + d;
  }
  emit_check(verify::check_id::extra_threads, extra ? verify::outcome::fail : verify::outcome::pass, d,
             now_s() - started);
}

// The judge's whole run: reference and device up, the candidate's own process started and loaded, every stage,
// then the audit rows that need the candidate's last word.
void judge(const std::string& job_path) {
  job j = read_job(job_path);
  runner::ensure_python();
  share_secret_words();
  c10::NoGradGuard no_grad;  // inference only; Python shares this thread-local mode
  at::Device device = runner::resolve_device(j.device);
  emit(bj::object{{"event", "ready"}, {"device", device.str()}});
  kernel_pair pair(j.reference, j.inputs, device, j.seed, j.cache_dir);
  emit_static_scan(j, pair.kernelbench());
  warm_reference(j, pair, device);

  // This process is the judge: it holds the result channel and decides every row. The candidate runs in a
  // process of its own, which cannot read or write this one's memory or descriptors: not dumpable (set after
  // the device is up, since CUDA writes under /proc/self while it starts), and both run without capabilities.
  ::prctl(PR_SET_DUMPABLE, 0);
  remote_candidate candidate(job_path, device);
  std::string phase1, phase2;
  const bool judge_sealed = sandbox::install_filter(1, phase1) && sandbox::install_filter(2, phase2);
  const int threads_before = candidate.native_threads();
  const int py_threads_before = candidate.python_threads_before();

  const double t_load = now_s();
  const std::string load_error = candidate.load();
  if (!load_error.empty()) {
    emit_check(verify::check_id::smoke, verify::outcome::fail, load_error, now_s() - t_load);
    std::optional<host_report> h = finish_candidate(candidate);
    emit_sealed(candidate, h ? &*h : nullptr, judge_sealed, phase1 + phase2);
    emit(bj::object{{"event", "done"}});
    std::_Exit(0);
  }
  verifier v(j, pair, candidate);
  v.run_all();

  emit_costs(candidate.costs());
  const double t = now_s();
  const int threads_after = candidate.native_threads();
  std::optional<host_report> h = finish_candidate(candidate);
  emit_extra_threads(candidate, h, threads_before, py_threads_before, threads_after, t);
  emit_sealed(candidate, h ? &*h : nullptr, judge_sealed, phase1 + phase2);
  emit(bj::object{{"event", "done"}});
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
    emit(bj::object{{"event", "fatal"}, {"code", "usage"}, {"message", e.what()}});
    std::_Exit(2);
  } catch (const error& e) {
    emit(bj::object{{"event", "fatal"}, {"code", std::string(errc_name(e.code()))}, {"message", e.what()}});
    std::_Exit(e.exit_code());
  } catch (const std::exception& e) {
    emit(bj::object{{"event", "fatal"}, {"code", "internal"}, {"message", e.what()}});
    std::_Exit(3);
  }
  std::fflush(stdout);
  // Skip interpreter teardown: CUDA contexts and leftover candidate objects can hang or crash on exit.
  std::_Exit(0);
}
