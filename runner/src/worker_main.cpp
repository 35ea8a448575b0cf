// rnx-runner-worker: runs a list of configurations in one process and reports events as JSON lines on a pipe.
//
// The orchestrator (rnx bench) starts several of these per configuration; a crash, hang or out-of-memory here
// costs one configuration's result, never the run.
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/manifest.hpp"
#include "rnx/runner/fingerprint.hpp"
#include "rnx/runner/kernel.hpp"
#include "rnx/runner/worker_channel.hpp"
#include "rnx/runner/sample_stats.hpp"
#include "rnx/runner/timing.hpp"
#include "worker_protocol.hpp"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <c10/core/GradMode.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>

namespace bj = boost::json;
using namespace rnx;

namespace {

int result_fd = 1;

// glibc serves a large allocation (a CPU tensor of a few MiB) with a fresh mmap until freeing such a block
// raises its threshold, and whether that has happened differs from process to process. Where it has not, every
// call maps, faults in and unmaps its outputs: on the 2-core CI machine a softmax over 2 MiB measured 5-9 ms in
// such processes against 1.4-2.8 ms in the others. Fixed thresholds (glibc's largest mmap threshold, 32 MiB)
// make every worker reuse its heap from the first call, as any warmed-up program does.
void steady_allocator() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

void emit(const bj::object& event) { runner::emit_line(result_fd, event); }

bj::object environment_json(const environment& env) {
  run_document doc;
  doc.env = env;
  return bj::value(to_json(doc)).as_object().at("environment").as_object();
}

// Kernels are loaded once per process; a failed load is remembered so each configuration reports it.
struct loaded_entry {
  std::unique_ptr<runner::kernel> kernel;
  std::string error;
};

bj::object run_config(const rnx::runner::detail::job_config& c, const manifest& m, const rnx::runner::detail::worker_job& job,
                      std::map<std::string, loaded_entry>& cache) {
  bj::object out{{"event", "result"}, {"index", c.index}, {"device", "cpu"}};
  const kernel_spec* spec = m.find_kernel(c.kernel);
  if (!spec) {
    out["status"] = "error";
    out["message"] = "kernel \"" + c.kernel + "\" is not in " + m.source;
    return out;
  }
  bench_settings b = spec->bench;
  if (job.overrides.min_samples) b.min_samples = *job.overrides.min_samples;
  if (job.overrides.max_samples) b.max_samples = *job.overrides.max_samples;
  if (job.overrides.budget_ms) b.budget_ms = *job.overrides.budget_ms;
  if (job.overrides.warmup_ms) b.warmup_ms = *job.overrides.warmup_ms;
  b.max_samples = std::max(b.max_samples, b.min_samples);
  const int threads = b.threads > 0 ? b.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);

  try {
    at::Device device = runner::resolve_device(job.device_override.empty() ? spec->device : job.device_override);
    out["device"] = device.str();
    at::ScalarType dtype = runner::parse_dtype(c.dtype);
    auto& entry = cache[spec->name];
    if (!entry.kernel && entry.error.empty()) {
      try {
        runner::load_options options;
        options.cuda_arch = job.cuda_arch;
        options.cache_dir = job.cache_dir;
        entry.kernel = runner::load_kernel(*spec, options);
      } catch (const error& e) {
        entry.error = e.what();
      } catch (const c10::Error& e) {
        entry.error = "kernel \"" + spec->name + "\": " + e.what_without_backtrace();
      }
    }
    if (!entry.kernel) throw error(errc::kernel_failed, entry.error);
    const std::uint64_t seed = runner::config_seed(b.seed, spec->name, c.batch);
    std::vector<at::Tensor> inputs = entry.kernel->make_inputs(c.batch, dtype, device, seed);
    std::unique_ptr<runner::bound_call> call = entry.kernel->prepare(c.runtime, inputs, dtype, device, seed);
    if (c.check) {
      tolerance tol = default_tolerance(c.dtype);
      if (auto it = spec->tolerances.find(c.dtype); it != spec->tolerances.end()) tol = it->second;
      std::vector<at::Tensor> got = call->outputs();
      runner::check_result check = runner::compare_outputs(got, entry.kernel->reference(inputs, seed), tol);
      out["max_abs_err"] = check.max_abs_err;
      out["rel_err"] = check.rel_err;
      out["rtol"] = tol.rtol;
      out["atol"] = tol.atol;
      if (!check.ok) {
        out["status"] = "diverged";
        out["message"] = c.runtime + " output differs from the float64 eager reference: " + check.message +
                         " (loosen tolerance for this kernel in rnx.toml if the difference is expected)";
        return out;
      }
    }
    runner::timing_options t;
    t.warmup_ms = b.warmup_ms;
    t.budget_ms = b.budget_ms;
    t.min_sample_ms = b.min_sample_ms;
    t.noise = b.noise;
    t.min_samples = b.min_samples;
    t.max_samples = b.max_samples;
    runner::timing_result timing = runner::measure(*call, device, t);
    bj::array samples;
    for (double s : timing.samples_ms) samples.push_back(s);
    bj::array clocks;
    for (double s : timing.sm_clock_mhz) clocks.push_back(s);
    out["status"] = "ok";
    out["samples_ms"] = std::move(samples);
    out["sm_mhz"] = std::move(clocks);
    out["calls_per_sample"] = timing.calls_per_sample;
    out["warmup_calls"] = timing.warmup_calls;
    out["preempted_samples"] = timing.preempted_samples;
    out["threads"] = threads;
    out["message"] = "";
  } catch (const runner::runtime_unavailable& e) {
    out["status"] = "skipped";
    out["message"] = e.what();
  } catch (const error& e) {
    out["status"] = "error";
    out["message"] = e.what();
  } catch (const c10::Error& e) {
    // CUDA out-of-memory and other libtorch failures surface here, outside the kernel's own call path.
    out["status"] = "error";
    out["message"] = "kernel \"" + spec->name + "\": " + e.what_without_backtrace();
  } catch (const std::exception& e) {
    out["status"] = "error";
    out["message"] = "kernel \"" + spec->name + "\": " + e.what();
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  steady_allocator();
  const runner::worker_args args = runner::parse_worker_args(argc, argv);
  const std::string& job_path = args.job_path;
  result_fd = args.result_fd;
  if (job_path.empty()) {
    std::cerr << "usage: rnx-runner-worker --job JOB.json [--result-fd N]\n"
                 "(started by `rnx bench`; not meant to be run by hand)\n";
    return 2;
  }
  try {
    rnx::runner::detail::worker_job job = rnx::runner::detail::job_from_json(json::parse_file(job_path));
    manifest m = load_manifest(job.manifest);
    runner::ensure_python();
    c10::NoGradGuard no_grad;  // kernels are measured for inference; Python shares this thread-local mode
    at::set_num_threads(m.bench.threads > 0 ? m.bench.threads
                                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    at::Device fp_device(at::kCPU);
    try {
      fp_device = runner::resolve_device(job.fingerprint_device);
    } catch (const runner::runtime_unavailable&) {
      // The configurations that need the missing GPU will say so one by one.
    }
    emit(bj::object{{"event", "ready"}, {"environment", environment_json(runner::collect_environment(fp_device))}});
    std::map<std::string, loaded_entry> cache;
    for (const auto& c : job.configs) {
      emit(bj::object{{"event", "start"}, {"index", c.index}});
      emit(run_config(c, m, job, cache));
    }
  } catch (const error& e) {
    std::cerr << "rnx-runner-worker: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "rnx-runner-worker: internal error: " << e.what() << "\n";
    return 3;
  }
  std::fflush(stdout);
  // Skip interpreter and static teardown: torch.compile worker pools and CUDA contexts can hang or crash on
  // exit, and everything worth keeping has been reported.
  std::_Exit(0);
}
