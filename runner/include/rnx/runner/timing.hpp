// Timing one bound kernel inside a process: warm-up until the per-call time settles, then samples.
#pragma once

#include "rnx/common/run_document.hpp"
#include "rnx/runner/kernel.hpp"
#include "rnx/runner/timed_calls.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace rnx::runner {

struct timing_options {
  double warmup_ms = 300;
  double budget_ms = 1500;
  double min_sample_ms = 0.1;  // calls per sample are raised until a sample lasts this long (CUDA: GPU time)
  double noise = 0.005;
  int min_samples = 8;
  int max_samples = 40;
};

struct timing_result {
  std::vector<double> samples_ms;  // per call
  std::int64_t calls_per_sample = 1;
  std::int64_t warmup_calls = 0;
  double warmup_ms = 0;
  double sampling_ms = 0;              // wall time of the timed samples (retaken ones included)
  std::int64_t preempted_samples = 0;  // CPU: samples retaken because the thread was preempted during them
  std::vector<double> sm_clock_mhz;    // CUDA: SM clock read after each sample, where NVML can read it
  l2_state l2 = l2_state::unstated;    // CUDA: flushed (every timed call starts with the L2 flushed); CPU: unstated
  // CPU: what the process went through while sampling, to tell the causes of slow samples apart.
  std::int64_t migrations = 0;    // samples during which the thread moved to another core
  std::int64_t minor_faults = 0;  // page faults (no disk) during the samples
  std::int64_t major_faults = 0;  // page faults that read from disk
};

// CPU: steady_clock around blocks of calls; a block during which the thread was involuntarily switched out
// (getrusage RUSAGE_THREAD) is retaken while the budget lasts (timing.cpp: retake_cap). CUDA: every call after an L2
// flush (a write over twice its size) and between an event pair of its own on the current stream; a sample is one
// call, or for a call shorter than min_sample_ms a batch of such calls queued behind a spin kernel (timing.cpp), and
// a device-wide synchronize after it. `calls` gives each call its inputs: the same ones every time (same_inputs), or
// inputs no earlier call saw (fresh_inputs: redrawn before each sample, outside the clock, and on CUDA before the L2
// flush; a sample makes no more calls than the pool has input sets).
timing_result measure(timed_calls& calls, at::Device device, const timing_options& options);
// The same bound inputs at every call.
timing_result measure(bound_call& call, at::Device device, const timing_options& options);

// The least time a correct call that returns `bytes` of output can take on `device`: the device's own fastest fill
// of a buffer that size, timed as the samples are (CUDA: after an L2 flush, between an event pair; CPU: the steady
// clock around the call), the fastest of five. A sample below it did not write its output: a result kept from an
// earlier call (docs/runner.md, the physical bound).
double write_bound_ms(std::int64_t bytes, at::Device device);

// The fastest of `calls` timed calls of `op(k)`, each after `before(k)`, which is not timed: on CUDA between an event
// pair on the current stream and a device-wide synchronize, on the CPU by the steady clock around the call. The
// one way the runner times a single call at its best (the physical bound, the machine's peaks).
double fastest_call_ms(at::Device device, int calls, const std::function<void(int)>& before,
                       const std::function<void(int)>& op);

inline constexpr int paired_block = static_cast<int>(in_process_block);  // samples a side per block

struct paired_timing_result {
  timing_result base;  // samples in block order: 4j..4j+3 were taken in block j, as for head
  timing_result head;
  std::int64_t retaken_blocks = 0;
};

// Base and head alternated in blocks of eight samples, ABBA BAAB or BAAB ABBA (from `seed`), each side's calls
// given their inputs by its `timed_calls`, in the same process, so both sides share every spell of the machine; a block
// with a preempted sample is taken again. Warm-up alternates single calls of the two. Sampling stops at max_samples a
// side, or after min_samples once twice the budget is spent or the median block ratio is known to within `noise`.
paired_timing_result measure_paired(timed_calls& base, timed_calls& head, at::Device device,
                                    const timing_options& options, std::uint64_t seed);

}  // namespace rnx::runner
