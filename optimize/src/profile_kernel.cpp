// The libtorch-profiler collector: Kineto events of a kernel's calls turned into trace_events for aggregate().
#include "rnx/optimize/profile_kernel.hpp"

#include "rnx/common/error.hpp"
#include "rnx/runner/kernel.hpp"

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#ifdef RNX_RUNNER_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_profiler_api.h>
#endif

#include <algorithm>
#include <chrono>
#include <set>

namespace rnx::optimize {

namespace {

namespace prof = torch::autograd::profiler;
namespace impl = torch::profiler::impl;

void synchronize(const at::Device& device) {
#ifdef RNX_RUNNER_CUDA
  if (device.is_cuda()) c10::cuda::device_synchronize();
#else
  (void)device;
#endif
}

// The profiled window marked for a profiler outside the process (Nsight Compute with --profile-from-start off).
void mark_window(const at::Device& device, bool start) {
#ifdef RNX_RUNNER_CUDA
  if (device.is_cuda()) (void)(start ? cudaProfilerStart() : cudaProfilerStop());
#else
  (void)device;
  (void)start;
#endif
}

// The calls alone, marked for an outside profiler; the profile says only what was run.
op_profile run_marked_window(runner::bound_call& call, const at::Device& device, int calls) {
  mark_window(device, true);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) call.invoke();
  synchronize(device);
  auto t1 = std::chrono::steady_clock::now();
  mark_window(device, false);
  op_profile p;
  p.wall_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  p.ranked_by = "none (window marked for an outside profiler)";
  return p;
}

// libkineto::ActivityType values, as KinetoEvent::activityType() reports them (kineto/ActivityType.h).
constexpr std::uint8_t kineto_cpu_op = 0;
constexpr std::uint8_t kineto_concurrent_kernel = 5;

}  // namespace

op_profile profile_kernel(const kernel_spec& spec, const profile_options& options) {
  if (options.calls < 1) throw error(errc::usage, "--calls must be at least 1");
  const std::string dtype_name = options.dtype.empty() ? spec.dtypes.front() : options.dtype;
  const std::int64_t batch =
      options.batch > 0 ? options.batch : *std::max_element(spec.batch.begin(), spec.batch.end());
  at::ScalarType dtype = runner::parse_dtype(dtype_name);
  at::Device device = at::kCPU;
  std::unique_ptr<runner::bound_call> call;
  std::unique_ptr<runner::kernel> k;
  std::vector<at::Tensor> inputs;
  try {
    device = runner::resolve_device(options.device.empty() ? spec.device : options.device);
    k = runner::load_kernel(spec);
    std::uint64_t seed = runner::config_seed(spec.bench.seed, spec.name, batch);
    inputs = k->make_inputs(batch, dtype, device, seed);
    call = k->prepare(options.runtime, inputs, dtype, device, seed);
  } catch (const runner::runtime_unavailable& e) {
    throw error(errc::usage, "kernel " + spec.name + ": cannot profile runtime " + options.runtime + ": " + e.what() +
                                 " (choose another with --runtime or --device)");
  }
  // The manifest's thread count, as the benchmark uses it: shares measured with another count would mislead.
  if (spec.bench.threads > 0) at::set_num_threads(spec.bench.threads);
  for (int i = 0; i < options.warmup_calls; ++i) call->invoke();
  synchronize(device);

  if (options.mark_window_only) {
    op_profile p = run_marked_window(*call, device, options.calls);
    p.kernel = spec.name;
    p.source = "marked window";
    p.device = device.str();
    p.runtime = options.runtime;
    p.dtype = dtype_name;
    p.batch = batch;
    p.profiled_calls = options.calls;
    return p;
  }
  // Host operators always; device kernels when the kernel runs on a GPU, since there the GPU time is the cost.
  std::set<impl::ActivityType> activities{impl::ActivityType::CPU};
  if (device.is_cuda()) activities.insert(impl::ActivityType::CUDA);
  impl::ProfilerConfig config(impl::ProfilerState::KINETO, /*report_input_shapes=*/false, /*profile_memory=*/false);
  prof::prepareProfiler(config, activities);
  prof::enableProfiler(config, activities);
  auto t0 = std::chrono::steady_clock::now();
  try {
    for (int i = 0; i < options.calls; ++i) call->invoke();
    synchronize(device);
  } catch (...) {
    prof::disableProfiler();
    throw;
  }
  auto t1 = std::chrono::steady_clock::now();
  std::unique_ptr<prof::ProfilerResult> result = prof::disableProfiler();

  std::vector<trace_event> events;
  for (const auto& e : result->events()) {
    std::uint8_t kind = e.activityType();
    if (kind != kineto_cpu_op && kind != kineto_concurrent_kernel) continue;
    trace_event t;
    t.name = e.name();
    t.device_kernel = kind == kineto_concurrent_kernel;
    t.thread = std::to_string(t.device_kernel ? static_cast<std::uint64_t>(e.deviceResourceId()) : e.startThreadId());
    t.start_us = static_cast<double>(e.startNs()) / 1000.0;
    t.dur_us = static_cast<double>(e.durationNs()) / 1000.0;
    events.push_back(std::move(t));
  }
  op_profile p = aggregate(events, std::chrono::duration<double, std::milli>(t1 - t0).count());
  p.kernel = spec.name;
  p.source = "libtorch profiler";
  p.device = device.str();
  p.runtime = options.runtime;
  p.dtype = dtype_name;
  p.batch = batch;
  p.profiled_calls = options.calls;
  return p;
}

}  // namespace rnx::optimize
