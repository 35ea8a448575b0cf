// In-process timing: CPU with steady_clock over calibrated blocks, CUDA with events, L2 flush and clock reads.
#include "rnx/runner/timing.hpp"

#include "nvml.hpp"
#include "rnx/common/error.hpp"
#include "rnx/runner/sample_stats.hpp"

#ifdef RNX_RUNNER_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace rnx::runner {

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

// Warm-up ends when the median of the last five calls is within 5% of the five before: compilation, lazy
// initialisation and cold caches stay out of the samples. It never ends before `warmup_ms`, and gives up
// waiting for stability after twenty times that (a kernel that never settles is then judged by its samples).
bool settled(const std::vector<double>& calls) {
  if (calls.size() < 10) return false;
  std::vector<double> last(calls.end() - 5, calls.end());
  std::vector<double> before(calls.end() - 10, calls.end() - 5);
  double a = median(last);
  double b = median(before);
  return b > 0 && std::fabs(a / b - 1) < 0.05;
}

// Involuntary context switches of this thread so far. A CPU sample during which the scheduler took the core away
// measures the machine's load, not the kernel: on a shared 2-core runner about a third of 1 ms samples were
// preempted and landed 4-10x slow. Those samples are taken again (see measure_cpu).
long preemptions() {
  struct rusage usage {};
  if (::getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
  return usage.ru_nivcsw;
}

bool enough(const std::vector<double>& samples, const timing_options& o, double spent_ms) {
  const auto n = static_cast<int>(samples.size());
  if (n >= o.max_samples) return true;
  if (n < o.min_samples) return false;
  if (spent_ms >= o.budget_ms) return true;
  return o.noise > 0 && median_ci_relative_halfwidth(samples) < o.noise;
}

timing_result measure_cpu(bound_call& call, const timing_options& o) {
  timing_result r;
  std::vector<double> calls;
  const auto warm_start = clock_type::now();
  while (true) {
    const auto t0 = clock_type::now();
    call.invoke();
    calls.push_back(ms_since(t0));
    const double elapsed = ms_since(warm_start);
    if (elapsed >= o.warmup_ms && (settled(calls) || elapsed >= 20 * std::max(o.warmup_ms, 1.0))) break;
  }
  r.warmup_ms = ms_since(warm_start);
  r.warmup_calls = static_cast<std::int64_t>(calls.size());
  // Blocks of calls keep the clock's own cost and resolution far below the measured time.
  const double per_call = std::max(median(std::vector<double>(calls.end() - std::min<std::size_t>(calls.size(), 5), calls.end())), 1e-6);
  r.calls_per_sample = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(o.min_sample_ms / per_call)));
  const auto start = clock_type::now();
  // Retaking preempted samples is capped, so a machine that preempts everything still finishes (and its noise
  // then shows in the samples, where `unstable` can see it).
  const std::int64_t max_retakes = 3 * static_cast<std::int64_t>(std::max(o.max_samples, 1));
  while (!enough(r.samples_ms, o, ms_since(start))) {
    const long before = preemptions();
    const auto t0 = clock_type::now();
    for (std::int64_t i = 0; i < r.calls_per_sample; ++i) call.invoke();
    const double elapsed = ms_since(t0);
    if (preemptions() != before && r.preempted_samples < max_retakes) {
      ++r.preempted_samples;
      continue;
    }
    r.samples_ms.push_back(elapsed / static_cast<double>(r.calls_per_sample));
  }
  return r;
}

#ifdef RNX_RUNNER_CUDA
timing_result measure_cuda(bound_call& call, at::Device device, const timing_options& o) {
  c10::cuda::CUDAGuard guard(device);
  const cudaDeviceProp* props = at::cuda::getDeviceProperties(device.index());
  char bus[32];
  std::snprintf(bus, sizeof bus, "%08X:%02X:%02X.0", static_cast<unsigned>(props->pciDomainID),
                static_cast<unsigned>(props->pciBusID), static_cast<unsigned>(props->pciDeviceID));
  // Writing twice the L2 size evicts whatever the previous sample left there, so every sample starts cold.
  const std::int64_t flush_bytes = std::max<std::int64_t>(2 * static_cast<std::int64_t>(props->l2CacheSize), 8 << 20);
  at::Tensor flush = at::empty({flush_bytes / 4}, at::TensorOptions().dtype(at::kInt).device(device));
  at::cuda::CUDAEvent start(cudaEventDefault);
  at::cuda::CUDAEvent stop(cudaEventDefault);

  auto timed_call = [&](bool flush_first) {
    c10::cuda::device_synchronize();
    // No synchronize between the flush and the start event: the flush keeps the GPU busy while the host
    // launches the call, so (as in triton.testing.do_bench) host launch latency is not counted as kernel time.
    if (flush_first) flush.zero_();
    auto stream = at::cuda::getCurrentCUDAStream(device.index());
    start.record(stream);
    call.invoke();
    stop.record(stream);
    // Device-wide: work the kernel queued on other streams must finish inside the sample too.
    c10::cuda::device_synchronize();
    return static_cast<double>(start.elapsed_time(stop));
  };

  timing_result r;
  std::vector<double> calls;
  const auto warm_start = clock_type::now();
  while (true) {
    calls.push_back(timed_call(false));
    const double elapsed = ms_since(warm_start);
    if (elapsed >= o.warmup_ms && (settled(calls) || elapsed >= 20 * std::max(o.warmup_ms, 1.0))) break;
  }
  r.warmup_ms = ms_since(warm_start);
  r.warmup_calls = static_cast<std::int64_t>(calls.size());
  const auto begin = clock_type::now();
  while (!enough(r.samples_ms, o, ms_since(begin))) {
    r.samples_ms.push_back(timed_call(true));
    if (auto mhz = detail::nvml_sm_clock_mhz(bus)) r.sm_clock_mhz.push_back(*mhz);
  }
  return r;
}
#endif

}  // namespace

timing_result measure(bound_call& call, at::Device device, const timing_options& options) {
  if (device.is_cpu()) return measure_cpu(call, options);
#ifdef RNX_RUNNER_CUDA
  if (device.is_cuda()) return measure_cuda(call, device, options);
#endif
  throw runtime_unavailable("timing on " + device.str() + " is not built into this runner (rebuild with a CUDA libtorch)");
}

}  // namespace rnx::runner
