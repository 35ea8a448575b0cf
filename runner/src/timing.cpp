// In-process timing: CPU with steady_clock over calibrated blocks, CUDA with events, L2 flush and clock reads;
// one side alone, or two sides (base and head) alternated in randomized ABBA / BAAB blocks.
#include "rnx/runner/timing.hpp"

#include "nvml.hpp"
#include "rnx/common/error.hpp"
#include "rnx/runner/sample_stats.hpp"

#ifdef RNX_RUNNER_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

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

// This thread's involuntary context switches and page faults so far. A CPU sample during which the scheduler
// took the core away measures the machine's load, not the kernel: on a shared 2-core runner about a third of 1 ms
// samples were preempted and landed 4-10x slow. Those samples are taken again (see measure()).
struct thread_counters {
  long preemptions = 0;
  long minor_faults = 0;
  long major_faults = 0;
};

thread_counters counters() {
  struct rusage usage {};
  if (::getrusage(RUSAGE_THREAD, &usage) != 0) return {};
  return {usage.ru_nivcsw, usage.ru_minflt, usage.ru_majflt};
}

// One side's measuring instrument: single warm-up calls, then timed samples (per-call milliseconds).
class sampler {
 public:
  virtual ~sampler() = default;
  virtual double warm_call() = 0;
  // Sizes the samples from the warm-up's calls.
  virtual void calibrate(const std::vector<double>& warm_calls, const timing_options& o) = 0;
  struct sample {
    double ms = 0;
    bool preempted = false;  // to be taken again while retakes last
  };
  virtual sample take() = 0;
  virtual void finish(timing_result& r) { (void)r; }
  std::int64_t calls_per_sample = 1;
};

class cpu_sampler final : public sampler {
 public:
  explicit cpu_sampler(timed_calls& calls) : calls_(calls) {}
  double warm_call() override {
    calls_.prepare_sample(1);
    bound_call& call = calls_.call(0);
    const auto t0 = clock_type::now();
    call.invoke();
    const double ms = ms_since(t0);
    calls_.end_sample();
    return ms;
  }
  void calibrate(const std::vector<double>& calls, const timing_options& o) override {
    // Blocks of calls keep the clock's own cost and resolution far below the measured time.
    const double per_call =
        std::max(median(std::vector<double>(calls.end() - std::min<std::size_t>(calls.size(), 5), calls.end())), 1e-6);
    // Fresh inputs: no more calls than the pool has input sets (a sample may then last less than min_sample_ms).
    calls_per_sample = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(o.min_sample_ms / per_call)), 1,
                                                calls_.max_calls_per_sample());
  }
  sample take() override {
    calls_.prepare_sample(calls_per_sample);  // fresh inputs: redrawn here, outside the clock
    const thread_counters before = counters();
    const int cpu_before = ::sched_getcpu();
    const auto t0 = clock_type::now();
    for (std::int64_t i = 0; i < calls_per_sample; ++i) calls_.call(i).invoke();
    const double elapsed = ms_since(t0);
    const thread_counters after = counters();
    calls_.end_sample();
    migrations_ += ::sched_getcpu() != cpu_before;
    minor_faults_ += after.minor_faults - before.minor_faults;
    major_faults_ += after.major_faults - before.major_faults;
    return {elapsed / static_cast<double>(calls_per_sample), after.preemptions != before.preemptions};
  }
  void finish(timing_result& r) override {
    r.migrations = migrations_;
    r.minor_faults = minor_faults_;
    r.major_faults = major_faults_;
  }

 private:
  timed_calls& calls_;
  std::int64_t migrations_ = 0;
  std::int64_t minor_faults_ = 0;
  std::int64_t major_faults_ = 0;
};

#ifdef RNX_RUNNER_CUDA
// CUDA samples. Every timed call starts with the L2 flushed (a write over twice its size) and is timed by an event
// pair of its own on the current stream, the flush outside the pair: the state of the cache a call finds is the same
// for every call, every sample, both sides of a pair and every process. (Calls timed back to back found in the L2
// whatever the previous call left there, which depends on where the allocator placed the buffers: the same 64 MB
// row softmax measured 40-140% apart from one process to the next.) A sample is one call when a call lasts
// min_sample_ms or more, else a batch of calls lasting about min_sample_ms; a spin kernel holds the GPU while the
// host queues the whole batch (flushes, events and calls: a microsecond kernel's Python launch can take longer
// than the kernel, and timed one by one such calls measured the launch in some processes and the kernel in
// others), so no call waits for the host. The sample is the mean of its calls' times. With fresh inputs the sets
// of a sample are redrawn first, before the synchronize.
class cuda_sampler final : public sampler {
 public:
  cuda_sampler(timed_calls& calls, at::Device device) : calls_(calls), device_(device) {
    c10::cuda::CUDAGuard guard(device);
    const cudaDeviceProp* props = at::cuda::getDeviceProperties(device.index());
    char bus[32];
    std::snprintf(bus, sizeof bus, "%08X:%02X:%02X.0", static_cast<unsigned>(props->pciDomainID),
                  static_cast<unsigned>(props->pciBusID), static_cast<unsigned>(props->pciDeviceID));
    bus_ = bus;
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device.index()) != cudaSuccess || khz <= 0) {
      (void)cudaGetLastError();
      khz = 2'000'000;  // an upper bound of today's SM clocks: the spin then lasts at least as long as wanted
    }
    max_clock_khz_ = khz;
    const std::int64_t flush_bytes = std::max<std::int64_t>(2 * static_cast<std::int64_t>(props->l2CacheSize), 8 << 20);
    flush_ = at::empty({flush_bytes / 4}, at::TensorOptions().dtype(at::kInt).device(device));
  }
  double warm_call() override {
    const double ms = timed_batch(1);
    host_ms_.push_back(last_enqueue_ms_);
    return ms;
  }
  void calibrate(const std::vector<double>& calls, const timing_options& o) override {
    const auto tail = [](const std::vector<double>& v) {
      return median(std::vector<double>(v.end() - std::min<std::size_t>(v.size(), 5), v.end()));
    };
    const double per_call = std::max(calls.empty() ? 0.0 : tail(calls), 1e-6);
    enqueue_ms_ = host_ms_.empty() ? 0.05 : std::max(tail(host_ms_), 1e-3);
    calibrated_ = true;
    calls_per_sample =
        per_call >= o.min_sample_ms
            ? 1
            : std::min<std::int64_t>(10000, static_cast<std::int64_t>(std::ceil(o.min_sample_ms / per_call)));
    calls_per_sample = std::min(calls_per_sample, calls_.max_calls_per_sample());
  }
  sample take() override {
    const double ms = timed_batch(calls_per_sample);
    if (auto mhz = detail::nvml_sm_clock_mhz(bus_)) clocks_.push_back(*mhz);
    return {ms, false};
  }
  void finish(timing_result& r) override {
    r.sm_clock_mhz = std::move(clocks_);
    r.l2 = l2_state::flushed;
  }

 private:
  // Per-call milliseconds of `calls` calls, each after an L2 flush and between an event pair of its own (warm-up
  // calls too, so the calibration sees what the samples will).
  double timed_batch(std::int64_t calls) {
    c10::cuda::CUDAGuard guard(device_);
    calls_.prepare_sample(calls);  // fresh inputs: the redraw is queued before the synchronize
    while (static_cast<std::int64_t>(starts_.size()) < calls) {
      starts_.push_back(std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault));
      stops_.push_back(std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault));
    }
    c10::cuda::device_synchronize();
    // Hold the GPU for twice the host's measured enqueue time of the batch (at the SM's highest clock, so at
    // least that long), so every flush and call of the batch is queued before the first one starts.
    const double hold_ms = 2 * enqueue_ms_ * static_cast<double>(calls) + 0.02;
    at::cuda::sleep(static_cast<std::int64_t>(hold_ms * max_clock_khz_));
    auto stream = at::cuda::getCurrentCUDAStream(device_.index());
    const auto enqueue_start = clock_type::now();
    for (std::int64_t i = 0; i < calls; ++i) {
      flush_.zero_();
      starts_[static_cast<std::size_t>(i)]->record(stream);
      calls_.call(i).invoke();
      stops_[static_cast<std::size_t>(i)]->record(stream);
    }
    last_enqueue_ms_ = ms_since(enqueue_start) / static_cast<double>(calls);
    // A host slower than the spin assumed (the GPU idled between calls): hold longer from the next sample on. Not
    // during warm-up, whose first calls compile.
    if (calibrated_) enqueue_ms_ = std::max(enqueue_ms_, last_enqueue_ms_);
    // Device-wide: work the kernel queued on other streams must finish inside the sample too.
    c10::cuda::device_synchronize();
    calls_.end_sample();
    double total = 0;
    for (std::int64_t i = 0; i < calls; ++i) {
      const auto k = static_cast<std::size_t>(i);
      total += static_cast<double>(starts_[k]->elapsed_time(*stops_[k]));
    }
    return total / static_cast<double>(calls);
  }

  timed_calls& calls_;
  at::Device device_;
  std::string bus_;
  double max_clock_khz_ = 2'000'000;
  at::Tensor flush_;
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> starts_;  // one pair per call of the largest batch so far
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> stops_;
  std::vector<double> clocks_;
  std::vector<double> host_ms_;  // warm-up: the host's enqueue time of one call
  double enqueue_ms_ = 0.05;
  double last_enqueue_ms_ = 0;
  bool calibrated_ = false;
};
#endif

std::unique_ptr<sampler> make_sampler(timed_calls& calls, at::Device device) {
  if (device.is_cpu()) return std::make_unique<cpu_sampler>(calls);
#ifdef RNX_RUNNER_CUDA
  if (device.is_cuda()) return std::make_unique<cuda_sampler>(calls, device);
#endif
  throw runtime_unavailable("timing on " + device.str() +
                            " is not built into this runner (rebuild with a CUDA libtorch)");
}

// Warm-up of one or more sides, their calls alternated so that each sees the same spell of the machine; ends
// when every side has settled and had `warmup_ms` (see settled()).
void warm_up(const std::vector<sampler*>& sides, const timing_options& o, std::vector<timing_result*> results) {
  std::vector<std::vector<double>> calls(sides.size());
  const double wanted = o.warmup_ms * static_cast<double>(sides.size());
  const double give_up = 20 * std::max(o.warmup_ms, 1.0) * static_cast<double>(sides.size());
  const auto start = clock_type::now();
  while (true) {
    for (std::size_t s = 0; s < sides.size(); ++s) calls[s].push_back(sides[s]->warm_call());
    const double elapsed = ms_since(start);
    const bool all_settled = std::all_of(calls.begin(), calls.end(), [](const auto& c) { return settled(c); });
    if (elapsed >= wanted && (all_settled || elapsed >= give_up)) break;
  }
  const double spent = ms_since(start);
  for (std::size_t s = 0; s < sides.size(); ++s) {
    sides[s]->calibrate(calls[s], o);
    results[s]->warmup_ms = spent;
    results[s]->warmup_calls = static_cast<std::int64_t>(calls[s].size());
    results[s]->calls_per_sample = sides[s]->calls_per_sample;
  }
}

bool enough(std::size_t n_samples, const std::vector<double>& precision_of, const timing_options& o, double spent_ms,
            double budget_ms) {
  const auto n = static_cast<int>(n_samples);
  if (n >= o.max_samples) return true;
  if (n < o.min_samples) return false;
  if (spent_ms >= budget_ms) return true;
  return o.noise > 0 && median_ci_relative_halfwidth(precision_of) < o.noise;
}

// Retaking preempted samples is capped, so a machine that preempts everything still finishes (and its noise
// then shows in the samples, where `unstable` can see it): at most three times the samples a process needs at
// least (or 40, whichever is more), and only while the budget lasts. The cap once followed max_samples; raised to
// 1000, it let a loaded machine retake blocks for minutes before min_samples were reached.
std::int64_t retake_cap(const timing_options& o) { return 3 * static_cast<std::int64_t>(std::max(o.min_samples, 40)); }

bool may_retake(std::int64_t retaken, const timing_options& o, double spent_ms, double budget_ms) {
  return retaken < retake_cap(o) && spent_ms < budget_ms;
}

}  // namespace

double fastest_call_ms(at::Device device, int calls, const std::function<void(int)>& before,
                       const std::function<void(int)>& op) {
  double best = INFINITY;
#ifdef RNX_RUNNER_CUDA
  if (device.is_cuda()) {
    c10::cuda::CUDAGuard guard(device);
    at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
    for (int k = 0; k < calls; ++k) {
      before(k);
      auto stream = at::cuda::getCurrentCUDAStream(device.index());
      start.record(stream);
      op(k);
      stop.record(stream);
      c10::cuda::device_synchronize();
      best = std::min(best, static_cast<double>(start.elapsed_time(stop)));
    }
    return best;
  }
#endif
  for (int k = 0; k < calls; ++k) {
    before(k);
    const auto t0 = clock_type::now();
    op(k);
    best = std::min(best, ms_since(t0));
  }
  return best;
}

double write_bound_ms(std::int64_t bytes, at::Device device) {
  if (bytes <= 0) return 0;
  at::Tensor buffer = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).device(device));
  buffer.fill_(0);
  auto fill = [&](int k) { buffer.fill_(static_cast<std::uint8_t>(k + 1)); };
#ifdef RNX_RUNNER_CUDA
  if (device.is_cuda()) {
    const cudaDeviceProp* props = at::cuda::getDeviceProperties(device.index());
    at::Tensor flush = at::empty({std::max<std::int64_t>(2 * static_cast<std::int64_t>(props->l2CacheSize), 8 << 20)},
                                 at::TensorOptions().dtype(at::kByte).device(device));
    return fastest_call_ms(
        device, 5, [&](int k) { flush.fill_(static_cast<std::uint8_t>(k)); }, fill);
  }
#endif
  // On the CPU every other fill runs on one thread: on a loaded machine a parallel fill waits for a descheduled
  // thread (a scheduler tick, milliseconds), and a bound measured slow could call an honest kernel impossible. And
  // at least ten fills, as many more as fit in fill_span_ms (at most max_fills): the fastest of ten small fills can
  // all meet a busy moment, while the call held against the bound was the fastest of many (an honest kernel's 33 KiB
  // output read 2x past a bound of 0.034 ms from ten fills, the test suite run beside two builds).
  constexpr double fill_span_ms = 20;
  constexpr int max_fills = 1000;
  const int threads = at::get_num_threads();
  const auto began = clock_type::now();
  double best = INFINITY;
  for (int done = 0; done < max_fills && (done < 10 || ms_since(began) < fill_span_ms); done += 10) {
    best = std::min(
        best, fastest_call_ms(
                  device, 10, [&](int k) { at::set_num_threads(k % 2 == 1 && threads > 1 ? 1 : threads); }, fill));
  }
  at::set_num_threads(threads);
  return best;
}

timing_result measure(bound_call& call, at::Device device, const timing_options& options) {
  same_inputs calls(call);
  return measure(calls, device, options);
}

timing_result measure(timed_calls& calls, at::Device device, const timing_options& options) {
  auto s = make_sampler(calls, device);
  timing_result r;
  warm_up({s.get()}, options, {&r});
  const auto start = clock_type::now();
  while (!enough(r.samples_ms.size(), r.samples_ms, options, ms_since(start), options.budget_ms)) {
    const sampler::sample x = s->take();
    if (x.preempted && may_retake(r.preempted_samples, options, ms_since(start), options.budget_ms)) {
      ++r.preempted_samples;
      continue;
    }
    r.samples_ms.push_back(x.ms);
  }
  r.sampling_ms = ms_since(start);
  s->finish(r);
  return r;
}

paired_timing_result measure_paired(timed_calls& base, timed_calls& head, at::Device device,
                                    const timing_options& options, std::uint64_t seed) {
  auto b = make_sampler(base, device);
  auto h = make_sampler(head, device);
  paired_timing_result r;
  warm_up({b.get(), h.get()}, options, {&r.base, &r.head});
  std::mt19937_64 rng(seed);
  const bool base_starts = (rng() & 1) != 0;
  std::vector<double> block_ratios;
  const auto start = clock_type::now();
  // Each side gets the single-side budget; samples per side count towards min/max_samples.
  while (!enough(r.head.samples_ms.size(), block_ratios, options, ms_since(start), 2 * options.budget_ms)) {
    // ABBA then BAAB (which of the two comes first is drawn once per process): each side is measured three
    // times right after the other side and once after itself, so a cost of switching between them falls on both
    // alike, and a linear drift within the block cancels in the sums.
    sampler* first = base_starts ? b.get() : h.get();
    sampler* second = base_starts ? h.get() : b.get();
    const sampler* order[paired_block * 2] = {first, second, second, first, second, first, first, second};
    double base_ms[paired_block], head_ms[paired_block];
    int nb = 0, nh = 0;
    bool preempted = false;
    for (const sampler* s : order) {
      const sampler::sample x = const_cast<sampler*>(s)->take();
      preempted = preempted || x.preempted;
      if (s == b.get())
        base_ms[nb++] = x.ms;
      else
        head_ms[nh++] = x.ms;
    }
    if (preempted && may_retake(r.retaken_blocks, options, ms_since(start), 2 * options.budget_ms)) {
      ++r.retaken_blocks;
      continue;
    }
    double base_sum = 0, head_sum = 0;
    for (int i = 0; i < paired_block; ++i) {
      r.base.samples_ms.push_back(base_ms[i]);
      r.head.samples_ms.push_back(head_ms[i]);
      base_sum += base_ms[i];
      head_sum += head_ms[i];
    }
    block_ratios.push_back(head_sum / std::max(base_sum, 1e-12));
  }
  r.base.sampling_ms = r.head.sampling_ms = ms_since(start);
  b->finish(r.base);
  h->finish(r.head);
  r.base.preempted_samples = r.head.preempted_samples = paired_block * r.retaken_blocks;
  return r;
}

}  // namespace rnx::runner
