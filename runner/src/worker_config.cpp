// One configuration inside rnx-runner-worker: load, bind to a runtime, check against float64, time.
#include "worker_config.hpp"

#include "rnx/common/error.hpp"
#include "rnx/runner/timed_calls.hpp"
#include "rnx/runner/timing.hpp"
#include "rnx/runner/tolerance.hpp"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace rnx::runner::detail {

namespace {

// One side of a configuration on its way to being timed. `out` holds what the result event will say of it so far;
// a side that failed (fail) has its status and message set there.
struct side {
  side_outcome out;
  const kernel_spec* spec = nullptr;
  loaded_entry* entry = nullptr;
  bench_settings settings;
  at::Device device{at::kCPU};
  at::ScalarType dtype = at::kFloat;
  std::uint64_t seed = 0;
  std::vector<at::Tensor> inputs;
  std::unique_ptr<bound_call> call;
  std::optional<tolerance> applied;          // what the reference check applied (here, or in an earlier process)
  bool fresh = false;                        // its timed calls get fresh inputs
  result_status status = result_status::ok;  // what `out` says once the side failed
  bool failed() const { return status != result_status::ok; }
  void fail(result_status why, std::string_view message) {
    status = why;
    out.status = why;
    out.message = message;
  }
};

// Runs `step`, turning what it throws into the side's status and message (the kernel's failure, not the run's).
template <typename Step>
void guarded(side& s, const std::string& name, Step&& step) {
  try {
    step();
  } catch (const runtime_unavailable& e) {
    s.fail(result_status::skipped, e.what());
  } catch (const error& e) {
    s.fail(result_status::error, e.what());
  } catch (const c10::Error& e) {
    // CUDA out-of-memory and other libtorch failures surface here, outside the kernel's own call path.
    s.fail(result_status::error, "kernel \"" + name + "\": " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    s.fail(result_status::error, "kernel \"" + name + "\": " + e.what());
  }
}

side load_side(const job_config& c, const manifest& m, const worker_job& job, kernel_cache& cache,
               const std::string& module_prefix) {
  side s;
  s.spec = m.find_kernel(c.kernel);
  if (!s.spec) {
    s.fail(result_status::error, "kernel \"" + c.kernel + "\" is not in " + m.source);
    return s;
  }
  const std::string device = job.device_override.empty() ? s.spec->device : job.device_override;
  bool cuda = false;
  try {
    cuda = resolve_device(device).is_cuda();
  } catch (const std::exception&) {
    // reported below, where the device is resolved for the measurement
  }
  s.settings = settings_for(s.spec->bench, cuda);
  bench_settings& b = s.settings;
  if (job.overrides.min_samples) b.min_samples = *job.overrides.min_samples;
  if (job.overrides.max_samples) b.max_samples = *job.overrides.max_samples;
  if (job.overrides.budget_ms) b.budget_ms = *job.overrides.budget_ms;
  if (job.overrides.warmup_ms) b.warmup_ms = *job.overrides.warmup_ms;
  // This process's share of the configuration's total budget, from the orchestrator's sequential schedule.
  if (c.budget_ms) b.budget_ms = *c.budget_ms;
  if (c.max_samples) b.max_samples = *c.max_samples;
  b.max_samples = std::max(b.max_samples, b.min_samples);
  // A CPU device lane caps the threads at its cores (more would share them and time each other).
  const int cores = job.cores.empty() ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))
                                      : static_cast<int>(job.cores.size());
  const int threads = b.threads > 0 ? std::min(b.threads, cores) : cores;
  at::set_num_threads(threads);
  s.out.threads = threads;
  guarded(s, s.spec->name, [&] {
    s.device = resolve_device(device);
    s.out.device = s.device.str();
    s.dtype = parse_dtype(c.dtype);
    s.seed = config_seed(b.seed, s.spec->name, c.batch);
    loaded_entry& entry = cache[module_prefix + s.spec->name];
    if (!entry.kernel && entry.error.empty()) {
      try {
        load_options options;
        options.cuda_arch = job.cuda_arch;
        options.cache_dir = job.cache_dir;
        options.module_prefix = module_prefix;
        entry.kernel = load_kernel(*s.spec, options);
      } catch (const error& e) {
        entry.error = e.what();
      } catch (const c10::Error& e) {
        entry.error = "kernel \"" + s.spec->name + "\": " + e.what_without_backtrace();
      }
    }
    if (!entry.kernel) throw error(errc::kernel_failed, entry.error);
    s.entry = &entry;
  });
  return s;
}

// The manifest's tolerance for the side's dtype, else torch.testing's: the base the yardstick widens.
tolerance base_tolerance(const side& s) {
  const std::string dtype(dtype_name(s.dtype));
  if (auto it = s.spec->tolerances.find(dtype); it != s.spec->tolerances.end()) return it->second;
  return default_tolerance(dtype);
}

// The kernel's eager computation in the side's dtype on `inputs`: `got` itself for the eager runtime, else one eager
// call on the same inputs. A kernel with no eager form here (a TorchScript .pt file) has only the runtime's own
// computation.
std::vector<at::Tensor> eager_outputs(side& s, const std::string& runtime, const std::vector<at::Tensor>& inputs,
                                      const std::vector<at::Tensor>& got) {
  if (runtime_kind_from_string(runtime) == runtime_kind::eager) return got;
  try {
    return s.entry->kernel->prepare(to_string(runtime_kind::eager), inputs, s.dtype, s.device, s.seed)->outputs();
  } catch (const runtime_unavailable&) {
    return got;
  }
}

// The least time a correct call can take here (timing.hpp, write_bound_ms), from the checked call's output bytes.
void put_bound(side& s, const std::vector<at::Tensor>& outputs) {
  std::int64_t bytes = 0;
  for (const auto& o : outputs) {
    if (o.defined()) bytes += static_cast<std::int64_t>(o.nbytes());
  }
  s.out.bound = physical_bound{bytes, write_bound_ms(bytes, s.device)};
}

// One call of the bound runtime on `inputs` against the float64 reference under the shared yardstick
// (tolerance.hpp): the base tolerance widened by what the eager computation in this dtype itself loses, measured on
// these very inputs.
struct reference_outcome {
  check_result result;
  tolerance applied;
  std::vector<at::Tensor> got;
};
reference_outcome check_on(side& s, const std::string& runtime, bound_call& call,
                           const std::vector<at::Tensor>& inputs) {
  const tolerance base = base_tolerance(s);
  // The kernel's own call first: when it fails, its error (not the reference's) is the one to report.
  std::vector<at::Tensor> got = call.outputs();
  const std::vector<at::Tensor> ref64 = s.entry->kernel->reference(inputs, s.seed);
  const std::vector<at::Tensor> moved =
      s.entry->kernel->reference(rounding_perturbed(inputs, arithmetic_eps(s.dtype, s.device), s.seed), s.seed);
  const yardstick yard = measure_yardstick(eager_outputs(s, runtime, inputs, got), ref64, s.dtype, &moved,
                                           tf32_allowed(s.dtype, s.device));
  check_result result = check_within(got, ref64, base, yard, yard_basis::self_check);
  return {std::move(result), widen(base, yard, yard_basis::self_check), std::move(got)};
}

// The seed of the second checked input set: a draw of its own, never a timed set's or the audit's.
std::uint64_t second_check_seed(const side& s) { return (s.seed ^ 0x2545F4914F6CDD1DULL) & 0x7FFFFFFFFFFFFFFFULL; }

// Prepares the runtime on the side's inputs (compiling, tracing: the runtime's own cost).
void bind_side(side& s, const std::string& runtime) {
  guarded(s, s.spec->name, [&] { s.call = s.entry->kernel->prepare(runtime, s.inputs, s.dtype, s.device, s.seed); });
}

// Checks the bound runtime against the float64 reference twice: on the side's inputs (the call the runtime was
// prepared on) and then on a second input set drawn by the kernel's own maker (docs/runner.md, the reference check).
// The second catches an answer right only for the inputs the kernel met first (a result kept from the first call
// and handed back for any input, buffers sized or filled on them), which the audit of the timed calls cannot: it
// compares timed calls with the kernel's own untimed answers, which such a kernel keeps too.
void check_side(side& s, const std::string& runtime, std::int64_t batch) {
  guarded(s, s.spec->name, [&] {
    const reference_outcome first = check_on(s, runtime, *s.call, s.inputs);
    put_bound(s, first.got);
    s.applied = first.applied;
    // JSON has no infinity (a NaN output's error is infinite): the largest double stands in, as the reader expects.
    auto json_number = [](double v) { return std::isfinite(v) ? v : 1e308; };
    s.out.check =
        reference_check{json_number(first.result.max_abs_err), json_number(first.result.rel_err), first.applied};
    if (!first.result.ok) {
      s.fail(result_status::diverged,
             runtime + " output differs from the float64 eager reference: " + first.result.message +
                 " (loosen tolerance for this kernel in rnx.toml if the difference is expected)");
      return;
    }
    const std::vector<at::Tensor> other = s.entry->kernel->make_inputs(batch, s.dtype, s.device, second_check_seed(s));
    const reference_outcome second = check_on(s, runtime, *s.call->with_inputs(other), other);
    if (!second.result.ok) {
      s.fail(result_status::diverged,
             runtime +
                 " output on a second input set differs from the float64 eager reference: " + second.result.message +
                 "; it was right on the first inputs it was given, so it answers for the inputs it met first (a "
                 "result kept from an earlier call, buffers sized or filled on them): it is broken, not fast");
    }
  });
}

// The work of one call, counted once per configuration and side (in the process that runs the reference check)
// over the eager reference, on an input set of its own drawn under a seed no timed set comes from: no call,
// counted or timed, sees values another call saw. A count that fails leaves the work unknown and says why; the
// measurement goes on.
void put_work(side& s, std::int64_t batch) {
  try {
    const std::uint64_t seed = (s.seed ^ 0x5DEECE66DULL) & 0x7FFFFFFFFFFFFFFFULL;  // torch seeds are signed
    const std::vector<at::Tensor> inputs = s.entry->kernel->make_inputs(batch, s.dtype, s.device, seed);
    if (auto w = s.entry->kernel->count_work(inputs, s.dtype, s.device, s.seed)) {
      s.out.work = work_info{w->flops, w->bytes, work_source::counted, w->elementwise.value_or(0)};
    }
  } catch (const c10::Error& e) {
    s.out.work_error = e.what_without_backtrace();
  } catch (const std::exception& e) {
    s.out.work_error = e.what();
  }
}

timing_options timing_of(const bench_settings& b) {
  timing_options t;
  t.warmup_ms = b.warmup_ms;
  t.budget_ms = b.budget_ms;
  t.min_sample_ms = b.min_sample_ms;
  t.noise = b.noise;
  t.min_samples = b.min_samples;
  t.max_samples = b.max_samples;
  return t;
}

void put_timing(side_outcome& out, const timing_result& timing) {
  out.status = result_status::ok;
  out.message.clear();
  out.samples_ms = timing.samples_ms;
  out.sm_mhz = timing.sm_clock_mhz;
  out.calls_per_sample = timing.calls_per_sample;
  out.warmup_calls = timing.warmup_calls;
  out.disturbed = disturbances{timing.migrations, timing.minor_faults, timing.major_faults, timing.preempted_samples};
  out.l2 = timing.l2;
}

// The result event of a side measured alone.
result_event event_of(const job_config& c, side& s, const config_phases& phases) {
  result_event e;
  e.index = c.index;
  e.head = std::move(s.out);
  e.phases_ms = phases;
  return e;
}

// Where one configuration's time in this process went, step by step (milliseconds), for the orchestrator's
// split: loading the kernel(s), making inputs, binding the runtime with the reference check, and measuring
// (warm-up and sampling, which the timing result itemises, plus the sampler's own calibration).
class phase_clock {
 public:
  // The time since the last mark is added to `phase` (a member of config_phases).
  void mark(double config_phases::*phase) {
    const auto now = std::chrono::steady_clock::now();
    phases_.*phase += std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
  }
  const config_phases& phases() const { return phases_; }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  config_phases phases_;
};

// What the side's timed calls are given: a pool of input sets made by the kernel's own input maker and redrawn
// before each use (timed_calls.hpp; the default), or its bound inputs at every call (--same-inputs, or where the
// call cannot be given other inputs: the reason goes into the result's message).
// The redraws' seeds mix in the job's pairing seed, drawn per run and round: another process of the configuration
// never sees the values this one drew (a cache kept on disk would not carry over), while the two sides of a round
// draw alike.
std::unique_ptr<timed_calls> timed_calls_of(side& s, std::int64_t batch, const worker_job& job,
                                            std::uint64_t salt = 0) {
  s.fresh = false;
  if (!job.fresh_inputs) return std::make_unique<same_inputs>(*s.call, &s.inputs);
  runner::kernel* k = s.entry->kernel.get();
  auto make = [k, batch, dtype = s.dtype, device = s.device](std::uint64_t seed) {
    return k->make_inputs(batch, dtype, device, seed);
  };
  try {
    auto pool = std::make_unique<fresh_inputs>(
        *s.call, s.inputs, make, s.seed ^ job.pairing_seed ^ (salt * 0x9E3779B97F4A7C15ULL), pool_limits{},
        k->standard_normal_inputs() ? input_law::standard_normal : input_law::any);
    s.fresh = true;
    return pool;
  } catch (const runtime_unavailable& e) {
    s.out.inputs_note = std::string("timed on the same inputs at every call: ") + e.what();
  } catch (const error& e) {
    if (e.code() != errc::kernel_failed) throw;
    s.out.inputs_note = std::string("timed on the same inputs at every call: ") + e.what();
  }
  return std::make_unique<same_inputs>(*s.call, &s.inputs);
}

// The second side of a pair with the same inputs takes them from the first side's pool (fresh_inputs: one pool,
// taken in turn), so no input buffer is only one side's.
std::unique_ptr<timed_calls> shared_pool(side& s, timed_calls& first) {
  s.fresh = true;
  return std::make_unique<fresh_inputs>(*s.call, dynamic_cast<fresh_inputs&>(first));
}

void put_inputs(side& s) { s.out.inputs = s.fresh ? timed_inputs::fresh : timed_inputs::same; }

// The timed calls' audit (timed_calls.hpp, audited_calls): input sets drawn by the kernel's own maker under seeds
// no other draw uses, and what the kernel itself returns for them on an untimed call, made now, before any timed
// call (its answer in its own dtype and runtime, so the comparison carries no rounding of its own). Only with fresh
// inputs (the audit writes into a set of the pool) and a tolerance to judge by (checked here or in an earlier
// process).
struct timed_audit {
  std::vector<std::vector<at::Tensor>> inputs;
  std::vector<std::vector<at::Tensor>> expected;
};
constexpr int audited_calls_per_process = 4;

timed_audit prepare_audit(const side& s, std::int64_t batch, std::uint64_t seed) {
  timed_audit a;
  if (!s.fresh || !s.applied) return a;
  for (int k = 0; k < audited_calls_per_process; ++k) {
    // Mixed (splitmix64) so that every bit of the seed reaches the low 32 bits, the only ones torch's CPU
    // generator keeps: the rounds' seeds differ in their high bits.
    std::uint64_t draw = seed + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(k + 1);
    draw = (draw ^ (draw >> 30)) * 0xBF58476D1CE4E5B9ULL;
    draw = (draw ^ (draw >> 27)) * 0x94D049BB133111EBULL;
    draw = (draw ^ (draw >> 31)) & 0x7FFFFFFFFFFFFFFFULL;
    a.inputs.push_back(s.entry->kernel->make_inputs(batch, s.dtype, s.device, draw));
    // On copies: the untimed call must not see the very buffers the timed one will be given.
    std::vector<at::Tensor> copies;
    for (const auto& t : a.inputs.back()) copies.push_back(t.clone());
    std::vector<at::Tensor> expected;
    for (const auto& t : s.call->with_inputs(copies)->outputs()) expected.push_back(t.defined() ? t.clone() : t);
    a.expected.push_back(std::move(expected));
  }
  return a;
}

// The audited timed calls against the kernel's own untimed answers for the inputs they were given, under the
// tolerance the reference check applied (docs/runner.md, timed outputs checked). A call that answered otherwise
// fails the side as diverged: its timed calls did not compute what its untimed calls do.
void check_timed_outputs(side& s, const audited_calls& audited, const timed_audit& audit) {
  s.out.timed_checks = static_cast<std::int64_t>(audited.kept().size());
  for (std::size_t k = 0; k < audited.kept().size() && k < audit.expected.size(); ++k) {
    const timed_output& kept = audited.kept()[k];
    const check_result r = compare_outputs(kept.outputs, audit.expected[k], *s.applied);
    if (r.ok) continue;
    s.fail(result_status::diverged,
           "a timed call's output differs from the kernel's own untimed answer for the inputs it was given (timed "
           "sample " +
               std::to_string(kept.sample + 1) + ", warm-up calls counted): " + r.message +
               "; the kernel answers otherwise when called in the timing loop (work skipped after some calls, a "
               "cache keyed on part of its inputs): it is broken, not fast");
    return;
  }
}

// The seed of a side's audit: drawn per process and side, never known to the kernel.
std::uint64_t audit_seed(const side& s, const worker_job& job, std::uint64_t salt) {
  return job.pairing_seed ^ s.seed ^ (0xD1B54A32D192ED03ULL * (salt + 1));
}

bool same_tensors(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].sizes() != b[i].sizes() || a[i].scalar_type() != b[i].scalar_type() || a[i].device() != b[i].device() ||
        !at::equal(a[i], b[i])) {
      return false;
    }
  }
  return true;
}

// The shortest control window on a CPU: the control compares two windows of one process at different times, and
// a window of a few dozen samples (an eighth of a 300 ms budget) meets a spell of the machine's that the samples'
// spread does not show (docs/runner.md, the control).
constexpr double control_window_ms = 150;

// The base's twin for the control: the base's own file imported a second time under a prefix of its own, so it has
// its own module, weights and inputs as the head will, made and bound as a pair's side is (its inputs the base's
// very tensors where they are equal, as the pair shares them with the head: `shared` says so). Unchecked: it is the
// base's code.
side load_twin(const side& base, const job_config& c, const manifest& base_manifest, const worker_job& job,
               kernel_cache& cache, bool& shared) {
  shared = false;
  side twin = load_side(c, base_manifest, job, cache, "rnx_twin_");
  if (twin.failed()) return twin;
  guarded(twin, twin.spec->name,
          [&] { twin.inputs = twin.entry->kernel->make_inputs(c.batch, twin.dtype, twin.device, twin.seed); });
  if (twin.failed()) return twin;
  shared = same_tensors(base.inputs, twin.inputs);
  if (shared) twin.inputs = base.inputs;
  bind_side(twin, c.runtime);
  return twin;
}

// The control (docs/runner.md, a head cannot steer its base): the base timed before the head's file is imported,
// paired with its twin (load_twin) in the blocks of the pair to come, so the control and the base beside the head
// differ only in whose code the other side of the blocks runs: the base's own or the head's. (Paired with itself,
// one module and one set of weights, the control left out what a second module's weights and inputs cost the base
// in the caches, and identical code beside its head read up to 1.8x its time alone: embedding tables, norms.) An
// eighth of the budget a side, and on a CPU at least control_window_ms. A twin that does not load or bind leaves
// the base paired with itself (two pools of its own inputs).
void time_base_alone(side& base, const job_config& c, const manifest& base_manifest, const worker_job& job,
                     kernel_cache& cache) {
  bool shared = false;
  side twin = load_twin(base, c, base_manifest, job, cache, shared);
  if (!twin.failed()) guarded(twin, twin.spec->name, [&] { rehome_state(*base.call, *twin.call); });
  const bool twinned = !twin.failed();
  const std::unique_ptr<timed_calls> one = timed_calls_of(base, c.batch, job, 1);
  std::unique_ptr<timed_calls> other;
  if (!twinned) {
    other = timed_calls_of(base, c.batch, job, 2);
  } else if (base.fresh && shared) {
    other = shared_pool(twin, *one);
  } else {
    other = timed_calls_of(twin, c.batch, job, 2);
  }
  timing_options t = timing_of(base.settings);
  t.budget_ms = std::max(t.budget_ms / 8, base.device.is_cuda() ? 1.0 : control_window_ms);
  const paired_timing_result timing = measure_paired(*one, *other, base.device, t, job.pairing_seed ^ 0xC0117C0117ULL);
  base.out.control_ms = timing.base.samples_ms;
}

// Both sides timed together in blocks, each with its audited calls, then each side's audit judged (a side whose
// timed calls answered otherwise is diverged: its own result, not a fallback). False when measuring failed (the
// head's message says why). The pair's own figures go into `e`; `clock` is marked once measured and once audited.
bool measure_pair(side& base, side& head, side& first, side& second, bool shared_inputs, const job_config& c,
                  const worker_job& job, result_event& e, phase_clock& clock) {
  if (!base.applied) base.applied = c.base_tol;
  if (!head.applied) head.applied = c.tol;
  std::optional<audited_calls> base_audit;
  std::optional<audited_calls> head_audit;
  timed_audit base_refs;
  timed_audit head_refs;
  std::unique_ptr<timed_calls> first_calls;
  std::unique_ptr<timed_calls> second_calls;
  guarded(head, head.spec->name, [&] {
    const std::uint64_t seed = job.pairing_seed ^ (0x9e3779b97f4a7c15ULL * (c.index + 1));
    first_calls = timed_calls_of(first, c.batch, job);
    second_calls =
        shared_inputs && first.fresh ? shared_pool(second, *first_calls) : timed_calls_of(second, c.batch, job);
    // Each side's audit sets are its own: no timed call of one sees values the other side was given.
    base_refs = prepare_audit(base, c.batch, audit_seed(base, job, 2));
    head_refs = prepare_audit(head, c.batch, audit_seed(head, job, 1));
    base_audit.emplace(&first == &base ? *first_calls : *second_calls, base_refs.inputs, audit_seed(base, job, 3));
    head_audit.emplace(&first == &head ? *first_calls : *second_calls, head_refs.inputs, audit_seed(head, job, 4));
    const paired_timing_result timing =
        measure_paired(*base_audit, *head_audit, head.device, timing_of(head.settings), seed);
    put_timing(base.out, timing.base);
    put_timing(head.out, timing.head);
    put_inputs(base);
    put_inputs(head);
    e.warmup_ms = timing.head.warmup_ms;
    e.sampling_ms = timing.head.sampling_ms;
    e.retaken_blocks = timing.retaken_blocks;
  });
  if (head.failed()) return false;
  clock.mark(&config_phases::measure);
  guarded(base, base.spec->name, [&] { check_timed_outputs(base, *base_audit, base_refs); });
  guarded(head, head.spec->name, [&] { check_timed_outputs(head, *head_audit, head_refs); });
  clock.mark(&config_phases::audit);
  return true;
}

}  // namespace

result_event run_config(const job_config& c, const manifest& m, const worker_job& job, kernel_cache& cache) {
  phase_clock clock;
  side s = load_side(c, m, job, cache, "rnx_kernel_");
  clock.mark(&config_phases::load);
  if (s.failed()) return event_of(c, s, clock.phases());
  guarded(s, s.spec->name, [&] { s.inputs = s.entry->kernel->make_inputs(c.batch, s.dtype, s.device, s.seed); });
  clock.mark(&config_phases::inputs);
  if (s.failed()) return event_of(c, s, clock.phases());
  bind_side(s, c.runtime);
  clock.mark(&config_phases::bind);
  if (c.check && !s.failed()) {
    check_side(s, c.runtime, c.batch);
    if (!s.failed()) put_work(s, c.batch);
    clock.mark(&config_phases::check);
  }
  if (s.failed()) return event_of(c, s, clock.phases());
  if (!s.applied) s.applied = c.tol;
  std::optional<double> warmup_ms;
  double sampling_ms = 0;
  guarded(s, s.spec->name, [&] {
    const std::unique_ptr<timed_calls> calls = timed_calls_of(s, c.batch, job);
    const timed_audit audit = prepare_audit(s, c.batch, audit_seed(s, job, 0));
    audited_calls audited(*calls, audit.inputs, audit_seed(s, job, 5));
    const timing_result timing = measure(audited, s.device, timing_of(s.settings));
    put_timing(s.out, timing);
    put_inputs(s);
    warmup_ms = timing.warmup_ms;
    sampling_ms = timing.sampling_ms;
    clock.mark(&config_phases::measure);
    check_timed_outputs(s, audited, audit);
  });
  clock.mark(&config_phases::audit);
  result_event e = event_of(c, s, clock.phases());
  e.warmup_ms = warmup_ms;
  e.sampling_ms = sampling_ms;
  return e;
}

result_event run_paired_config(const job_config& c, const manifest& head_manifest, const manifest& base_manifest,
                               const worker_job& job, kernel_cache& cache) {
  auto fallback = [&](const std::string& reason) {
    result_event e;
    e.index = c.index;
    e.pair_fallback = reason;
    return e;
  };
  // Every step that allocates or imports runs first for one side and then for the other; which side goes first
  // alternates across processes (c.base_first), so an advantage of being first or second (where a module's
  // weights land, which tensors the allocator placed first, the import order) is not always the same side's.
  phase_clock clock;
  side base;
  side head;
  side* const first = c.base_first ? &base : &head;
  side* const second = c.base_first ? &head : &base;
  auto load = [&](side* s) {
    *s = s == &base ? load_side(c, base_manifest, job, cache, "rnx_base_")
                    : load_side(c, head_manifest, job, cache, "rnx_head_");
  };
  auto loaded = [&](side* s) -> std::optional<std::string> {
    if (s->failed()) {
      return std::string(s == &base ? "the base" : "the head") + " side did not load here (" + s->out.message + ")";
    }
    const auto local = s->entry->kernel->local_modules();
    if (local.empty()) return std::nullopt;
    std::string names;
    for (const auto& n : local) names += (names.empty() ? "" : ", ") + n;
    return s->spec->path + " imports modules from its own folder (" + names +
           "), which two revisions in one process would share";
  };
  auto make = [&](side* s) {
    guarded(*s, s->spec->name,
            [&] { s->inputs = s->entry->kernel->make_inputs(c.batch, s->dtype, s->device, s->seed); });
  };
  // Binds a side, then (where this process checks it) checks it and counts its work: each step's time to its phase.
  auto bind = [&](side* s) {
    if (s->failed()) return;
    bind_side(*s, c.runtime);
    clock.mark(&config_phases::bind);
    if (s->failed() || !(s == &base ? c.check_base : c.check)) return;
    check_side(*s, c.runtime, c.batch);
    if (!s->failed()) put_work(*s, c.batch);
    clock.mark(&config_phases::check);
  };
  // The control (docs/runner.md, a head cannot steer its base): in a process whose base goes first, the base is
  // loaded, bound and timed alone before the head's file is even imported, so nothing the head does can reach
  // those samples; the orchestrator holds them against the base's samples beside the head in the same process.
  const bool control = c.control_base && c.base_first;
  if (control) {
    load(&base);
    if (auto why = loaded(&base)) return fallback(*why);
    make(&base);
    clock.mark(&config_phases::load);
    bind(&base);
    if (!base.failed()) {
      guarded(base, base.spec->name, [&] { time_base_alone(base, c, base_manifest, job, cache); });
    }
    clock.mark(&config_phases::control);
    load(&head);
    if (auto why = loaded(&head)) return fallback(*why);
    make(&head);
  } else {
    load(first);
    load(second);
    for (side* s : {&base, &head}) {
      if (auto why = loaded(s)) return fallback(*why);
    }
    make(first);
    make(second);
  }
  clock.mark(&config_phases::load);
  // The very same tensors for both sides where the revisions make equal inputs: same values, same memory (the
  // first side's, made first).
  bool shared_inputs = false;
  if (!base.failed() && !head.failed() && same_tensors(base.inputs, head.inputs)) {
    second->inputs = first->inputs;
    shared_inputs = true;
  }
  if (control) {
    bind(&head);
  } else {
    bind(first);
    bind(second);
  }
  for (side* s : {&base, &head}) {
    if (s->failed()) {
      return fallback(std::string(s == &base ? "the base" : "the head") + " side is " +
                      std::string(to_string(s->status)) + " here");
    }
  }
  // Where each side's weights landed is not the kernel's doing, but it was measured: the module allocated first
  // ran ~1% slower on the H200. Moving both sides' weights to new memory, interleaved, removes that.
  std::size_t rehomed = 0;
  guarded(head, head.spec->name, [&] { rehomed = rehome_state(*first->call, *second->call); });
  if (head.failed()) return fallback("moving the two sides' weights failed: " + head.out.message);
  result_event e;
  if (!measure_pair(base, head, *first, *second, shared_inputs, c, job, e, clock)) {
    return fallback("measuring the two sides together failed: " + head.out.message);
  }
  e.index = c.index;
  e.head = std::move(head.out);
  e.base = std::move(base.out);
  e.first_side = c.base_first ? pair_side::base : pair_side::head;
  e.shared_inputs = shared_inputs;
  e.rehomed_tensors = static_cast<std::int64_t>(rehomed);
  e.phases_ms = clock.phases();
  return e;
}

}  // namespace rnx::runner::detail
