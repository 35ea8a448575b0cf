// Poisoning of freed CUDA cache blocks, hidden-work measurement across streams, and device-synced timing.
#include "device_checks.hpp"

#ifdef RNX_RUNNER_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/cuda.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

namespace rnx::verify::detail {

namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

#ifdef RNX_RUNNER_CUDA
// Requests above this size come from the allocator's large pool; smaller ones from the small pool.
constexpr std::size_t small_request_limit = std::size_t{1} << 20;
#endif

}  // namespace

poison_result poison_free_memory(at::Device device) {
  poison_result r;
#ifdef RNX_RUNNER_CUDA
  if (!device.is_cuda()) return r;
  c10::cuda::CUDAGuard guard(device);
  auto stream = at::cuda::getCurrentCUDAStream(device.index());
  // The snapshot lists every cached segment; only blocks of the current stream can be handed to the candidate
  // (the allocator never gives a block freed on one stream to another).
  auto snap = c10::cuda::CUDACachingAllocator::snapshot({0, 0}, false);
  std::vector<std::size_t> requests;
  for (const auto& segment : snap.segments) {
    if (segment.device != device.index() || segment.stream != static_cast<void*>(stream.stream())) continue;
    for (const auto& block : segment.blocks) {
      if (block.allocated) continue;
      r.free_bytes += block.size;
      if (segment.is_large) {
        requests.push_back(block.size);
      } else {
        // A free small-pool block may be bigger than the small-request limit; take it in pieces.
        for (std::size_t left = block.size; left > 0;) {
          std::size_t piece = std::min(left, small_request_limit);
          requests.push_back(piece);
          left -= piece;
        }
      }
    }
  }
  std::sort(requests.rbegin(), requests.rend());  // largest first, so best-fit picks the blocks themselves
  std::vector<at::Tensor> held;
  held.reserve(requests.size());
  auto options = at::TensorOptions().dtype(at::kByte).device(device);
  for (std::size_t bytes : requests) {
    at::Tensor t = at::empty({static_cast<std::int64_t>(bytes)}, options);
    t.fill_(0xff);
    r.poisoned_bytes += bytes;
    held.push_back(std::move(t));
  }
  held.clear();  // back to the cache, now full of NaN bit patterns
#else
  (void)device;
#endif
  return r;
}

void synchronize_device(at::Device device) {
#ifdef RNX_RUNNER_CUDA
  if (device.is_cuda()) {
    c10::cuda::CUDAGuard guard(device);
    c10::cuda::device_synchronize();
  }
#else
  (void)device;
#endif
}

hidden_work_result measure_hidden_work(const std::function<void()>& call, at::Device device, int calls) {
  hidden_work_result r;
#ifdef RNX_RUNNER_CUDA
  if (!device.is_cuda()) {
    r.note = "CUDA only";
    return r;
  }
  c10::cuda::CUDAGuard guard(device);
  auto before = at::cuda::getCurrentCUDAStream(device.index());
  call();  // warm-up: lazy initialisation and compilation are not the subject here
  c10::cuda::device_synchronize();
  at::cuda::CUDAEvent start(cudaEventDefault);
  at::cuda::CUDAEvent held(cudaEventDefault);
  at::cuda::CUDAEvent stop(cudaEventDefault);
  struct pass {
    double stream_ms, host_ms, launch_ms, lingering_ms, hold_ms;
  };
  // hold_cycles > 0: a device-side sleep on the current stream right after the start event; its length on the
  // device (clocks move, so cycles are only an estimate) is measured by the event `held` recorded after it.
  auto timed = [&](std::int64_t hold_cycles, int n) {
    const double t0 = now_ms();
    start.record(before);
    if (hold_cycles > 0) {
      at::cuda::sleep(hold_cycles);
      held.record(before);
    }
    for (int i = 0; i < n; ++i) call();
    const double t_launched = now_ms();
    stop.record(before);
    stop.synchronize();
    const double t_stream = now_ms();
    c10::cuda::device_synchronize();
    const double t_device = now_ms();
    return pass{start.elapsed_time(stop), t_device - t0, t_launched - t0, t_device - t_stream,
                hold_cycles > 0 ? static_cast<double>(start.elapsed_time(held)) : 0.0};
  };
  const pass plain = timed(0, calls);
  r.measured = true;
  r.timed_stream_ms = plain.stream_ms;
  r.host_ms = plain.host_ms;
  r.lingering_ms = plain.lingering_ms;
  r.stream_changed = at::cuda::getCurrentCUDAStream(device.index()) != before;
  if (r.stream_changed) {
    at::cuda::setCurrentCUDAStream(before);
    return r;
  }

  // The hold has to outlast the host's launches. Two things can keep it from doing so. The device's clock moves
  // between idle and boost, so a length in cycles is only an estimate: the hold is timed on the device and
  // lengthened. And the device queues only so many launches: with more queued behind the hold the host blocks
  // until the hold ends, and the launches it makes afterwards find the device keeping pace. Then the host took
  // far longer than the same calls without a hold, and the pass is repeated with fewer calls.
  constexpr std::int64_t probe_cycles = 2'000'000;
  start.record(before);
  at::cuda::sleep(probe_cycles);
  stop.record(before);
  stop.synchronize();
  double ms_per_cycle = std::max(static_cast<double>(start.elapsed_time(stop)), 1e-3) / probe_cycles;
  int n = calls;
  double target_ms = 2 * plain.launch_ms + 5;
  pass hold{};
  for (int attempt = 0; attempt < 6; ++attempt) {
    const auto cycles = static_cast<std::int64_t>(target_ms / ms_per_cycle);
    hold = timed(cycles, n);
    if (hold.hold_ms >= 1.2 * hold.launch_ms) break;
    const double unheld_launch_ms = plain.launch_ms * n / calls;
    if (n > 1 && hold.launch_ms > 2 * unheld_launch_ms + 1) {
      n = std::max(1, n / 5);
      target_ms = 2 * plain.launch_ms * n / calls + 5;
    } else {
      if (hold.hold_ms > 0.01) ms_per_cycle = hold.hold_ms / static_cast<double>(cycles);
      target_ms = 2 * hold.launch_ms + 5;
    }
  }
  r.held_calls = n;
  r.hold_ms = hold.hold_ms;
  r.hold_covered = hold.hold_ms >= hold.launch_ms;
  r.held_stream_ms = hold.stream_ms;
  r.held_lingering_ms = hold.lingering_ms;
  if (at::cuda::getCurrentCUDAStream(device.index()) != before) {
    r.stream_changed = true;
    at::cuda::setCurrentCUDAStream(before);
  }
#else
  (void)call;
  (void)device;
  (void)calls;
  r.note = "this verifier was built without CUDA";
#endif
  return r;
}

double time_call_ms(const std::function<void()>& f, at::Device device) {
  synchronize_device(device);
  const double t0 = now_ms();
  f();
  synchronize_device(device);
  return now_ms() - t0;
}

}  // namespace rnx::verify::detail
