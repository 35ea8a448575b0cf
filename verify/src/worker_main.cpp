// rnx-verify-worker: runs the correctness stages and the audit on one candidate inside the sandbox, reporting one
// JSON line per check on the result pipe. Started by rnx::verify::verify_candidate, never by hand.
#include <Python.h>

#include "device_checks.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/runner/kernel.hpp"
#include "rnx/runner/worker_channel.hpp"
#include "sandbox.hpp"
#include "worker_checks.hpp"
#include "worker_kernels.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <c10/core/GradMode.h>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <thread>

namespace bj = boost::json;
using namespace rnx;
using namespace rnx::verify::detail;
using runner::py_ref;


int main(int argc, char** argv) {
  const runner::worker_args args = runner::parse_worker_args(argc, argv);
  const std::string& job_path = args.job_path;
  set_result_fd(args.result_fd);
  if (job_path.empty()) {
    std::cerr << "usage: rnx-verify-worker --job JOB.json --result-fd N (started by `rnx verify`)\n";
    return 2;
  }
  try {
    job j = read_job(job_path);
    runner::ensure_python();
    {
      // One list of secret words: the static scan names the variables the environment filter withholds.
      py_ref words = py_ref::steal(PyList_New(0));
      for (const auto& w : secret_words()) {
        py_ref item = py_ref::steal(PyUnicode_FromString(w.c_str()));
        PyList_Append(words.get(), item.get());
      }
      py_ref args = py_ref::steal(PyTuple_Pack(1, words.get()));
      call_verify("set_secret_words", args.get());
    }
    c10::NoGradGuard no_grad;  // inference only; Python shares this thread-local mode
    at::Device device = runner::resolve_device(j.device);
    emit(bj::object{{"event", "ready"}, {"device", device.str()}});
    kernel_pair pair(j.reference, j.inputs, device, j.seed, j.cache_dir);
    emit_static_scan(j, pair.kernelbench());

    // Warm torch's own pools with the reference first, so threads counted later are the candidate's.
    {
      shape_variant sh{j.batches.empty() ? 1 : j.batches.front(), {}};
      std::vector<at::Tensor> in;
      for (const auto& b : pair.base_inputs(sh, j.seed)) in.push_back(b.to(device));
      pair.reference().call(in, at::kFloat, sh);
      at::ones({1 << 16}).sum();
      synchronize_device(device);
    }
    const int threads_before = native_threads();
    const int py_threads_before = python_threads();

    std::string phase1, phase2;
    bool sealed1 = install_filter(1, phase1);
    py_ref guard = call_verify("namespace_guard", py_ref::steal(PyTuple_New(0)).get());
    // Landlock refuses writes outside the scratch folder (the current directory); this records the attempts.
    py_ref writes = call_verify("watch_writes",
                                py_ref::steal(Py_BuildValue("(s)", std::filesystem::current_path().c_str())).get());
    auto writes_outside = [&] {
      bj::object o{{"count", static_cast<std::int64_t>(PyList_Size(writes.get()))}, {"first", ""}};
      if (PyList_Size(writes.get()) > 0) {
        if (const char* first = PyUnicode_AsUTF8(PyList_GetItem(writes.get(), 0))) o["first"] = first;
      }
      return o;
    };
    verifier v(j, pair);
    v.set_guard(guard);
    const double t_load = now_s();
    try {
      pair.load_candidate(j.candidate);
    } catch (const std::exception& e) {
      v.check_guard("at import");
      emit(bj::object{{"event", "check"}, {"group", "correctness"}, {"name", "smoke"}, {"result", "fail"},
                      {"detail", std::string("the candidate did not load: ") + e.what()},
                      {"seconds", now_s() - t_load}});
      blocked_counts b = blocked();
      emit(bj::object{{"event", "sealed"}, {"seccomp", sealed1}, {"why", phase1}, {"sockets", b.sockets},
                      {"processes", b.processes}, {"io_uring", b.io_uring}, {"writes_outside", writes_outside()}});
      emit(bj::object{{"event", "done"}});
      std::fflush(stdout);
      std::_Exit(0);
    }
    v.check_guard("at import");
    bool sealed2 = sealed1 && install_filter(2, phase2);
    v.run_all();

    const double t = now_s();
    const int threads_after = native_threads();
    const int py_threads_after = python_threads();
    std::string d = "threads: " + std::to_string(threads_before) + " native / " + std::to_string(py_threads_before) +
                    " Python before the candidate, " + std::to_string(threads_after) + " / " +
                    std::to_string(py_threads_after) + " after";
    bool extra = threads_after > threads_before || py_threads_after > py_threads_before;
    emit(bj::object{{"event", "check"}, {"group", "audit"}, {"name", "extra_threads"},
                    {"result", extra ? "fail" : "pass"},
                    {"detail", extra ? "the candidate left threads running (work the timer does not see); " + d : d},
                    {"seconds", now_s() - t}});
    blocked_counts b = blocked();
    emit(bj::object{{"event", "sealed"}, {"seccomp", sealed1 && sealed2}, {"why", phase1 + phase2},
                    {"sockets", b.sockets}, {"processes", b.processes}, {"io_uring", b.io_uring},
                    {"writes_outside", writes_outside()}});
    emit(bj::object{{"event", "done"}});
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
