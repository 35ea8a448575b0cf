// Device-level pieces of the audit: poisoning freed CUDA cache blocks, hidden-work detection, synced timing.
#pragma once

#include <ATen/ATen.h>

#include <cstddef>
#include <functional>
#include <string>

namespace rnx::verify::detail {

struct poison_result {
  std::size_t free_bytes = 0;      // free bytes cached for the current stream before poisoning
  std::size_t poisoned_bytes = 0;  // bytes handed out and filled with 0xff (NaN in every float format)
};

// Fills every block the CUDA caching allocator holds free for the current stream with 0xff bytes, so memory a
// reference (or an earlier call) freed cannot hand its contents to a candidate. A no-op on the CPU, where glibc's
// MALLOC_PERTURB_ (set by the sandbox) does the same for freed heap memory.
poison_result poison_free_memory(at::Device device);

// Waits for all work on the device (every stream), not just the current one.
void synchronize_device(at::Device device);

struct hidden_work_result {
  bool measured = false;
  double timed_stream_ms = 0;  // what a CUDA-event timer on the current stream sees for `calls` calls
  double host_ms = 0;          // host clock, device-wide synchronize before and after
  double lingering_ms = 0;     // device-wide work still running after the current stream finished
  // The same calls again with the current stream first held back by a device-side sleep of hold_ms, so that
  // every launch is queued before any of it runs: then work on a stream the timed stream never waits for runs
  // after the timed stream's stop event however fast the host launches (held_lingering_ms), which the pass
  // above cannot see when the device keeps pace with the host.
  double hold_ms = 0;         // as the device ran it
  bool hold_covered = false;  // the hold outlasted the host's launches, so the held pass is conclusive
  int held_calls = 0;         // calls in the held pass: fewer than `calls` where more would not queue
  double held_stream_ms = 0;  // current-stream events, the hold included
  double held_lingering_ms = 0;
  bool stream_changed = false;  // the candidate left a different current stream behind
  std::string note;
};

// Runs `call` `calls` times back to back between events on the current stream, then measures how long work
// kept running on other streams after the current stream was done (work hidden from the timer); twice, the
// second time behind a device-side hold (see hidden_work_result).
hidden_work_result measure_hidden_work(const std::function<void()>& call, at::Device device, int calls);

// Host-clock time of one call in milliseconds, the device synchronized before and after (every stream).
double time_call_ms(const std::function<void()>& f, at::Device device);

}  // namespace rnx::verify::detail
