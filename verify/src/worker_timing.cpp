// The timing audit: the implausible_speedup row, the eager reference against the candidate on fresh inputs with
// a share of the timed outputs checked.
#include "worker_checks.hpp"

#include "device_checks.hpp"
#include "rnx/runner/timing.hpp"
#include "rnx/runner/tolerance.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace rnx::verify::detail {

namespace {

// On the CPU every other timed call of the reference runs on one thread: where another process holds a core, each
// parallel region of torch's pool waits for its descheduled thread (a scheduler tick, milliseconds against a
// microsecond kernel), and the fastest call, which counts, is then the one-thread call. The reference is judged at
// its best; a candidate is never called implausibly fast against a reference slowed by someone else's load.
class reference_threads {
 public:
  explicit reference_threads(bool one) : saved_(at::get_num_threads()), changed_(one && saved_ > 1) {
    if (changed_) at::set_num_threads(1);
  }
  ~reference_threads() {
    if (changed_) at::set_num_threads(saved_);
  }
  reference_threads(const reference_threads&) = delete;
  reference_threads& operator=(const reference_threads&) = delete;

 private:
  int saved_;
  bool changed_;
};

// Bytes of the outputs a call returned: what a correct call must have written.
std::int64_t output_bytes(const std::vector<at::Tensor>& outputs) {
  std::int64_t bytes = 0;
  for (const auto& o : outputs) {
    if (o.defined()) bytes += static_cast<std::int64_t>(o.nbytes());
  }
  return bytes;
}

}  // namespace

// Implausible speedup: the eager reference in this dtype against the candidate, on the largest declared batch.
void verifier::stage_implausible_speedup(dtype_run& run) {
  const at::ScalarType dtype = run.dtype;
  const std::vector<std::int64_t>& declared = run.declared;
  auto next_seed = [&run] { return run.next_seed(); };
  const double t = now_s();
  {
    const std::int64_t largest = *std::max_element(declared.begin(), declared.end());
    timed_speedup(shape_variant{largest, {}}, dtype, next_seed, t);
  }
}

std::vector<at::Tensor> verifier::rewritten_twin(const std::vector<at::Tensor>& base, std::uint64_t seed) {
  // One element of every floating input takes another element's value: values the inputs could have had, changed
  // where a fingerprint that samples a few positions does not look, and where the output depends on them: both
  // positions hold non-zero values, so a zero that get_inputs() puts by structure (below a triangular matrix's
  // diagonal, a mask's gaps), which a rewrite may rightly never read, is never written.
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<at::Tensor> twin;
  for (const auto& b : base) {
    at::Tensor t = b.clone();
    if (t.is_floating_point() && t.numel() >= 2) {
      at::Tensor flat = t.view({-1});
      const at::Tensor nonzero = flat.ne(0).nonzero().view({-1});
      const std::int64_t n = nonzero.numel();
      if (n >= 2) {
        const std::int64_t at_pos = nonzero[at::randint(n, {1}, gen).item<std::int64_t>()].item<std::int64_t>();
        std::int64_t from_index = at::randint(n - 1, {1}, gen).item<std::int64_t>();
        std::int64_t from = nonzero[from_index].item<std::int64_t>();
        if (from == at_pos) from = nonzero[n - 1].item<std::int64_t>();
        flat[at_pos] = flat[from].item();
      }
    }
    twin.push_back(t);
  }
  return twin;
}

std::string verifier::check_timed_output(const std::vector<at::Tensor>& out, const std::vector<at::Tensor>& base,
                                         at::ScalarType dtype, const shape_variant& shape) {
  std::vector<at::Tensor> wide, narrow;
  for (const auto& b : base) {
    wide.push_back(b.is_floating_point() ? b.to(dtype).to(pair_.device(), at::kDouble) : b.to(pair_.device()));
    narrow.push_back(place(b, dtype, pair_.device(), layout::contiguous));
  }
  const std::vector<at::Tensor> ref64 = pair_.reference().call(wide, at::kDouble, shape);
  const std::vector<at::Tensor> refdt = pair_.reference().call(narrow, dtype, shape);
  if (!all_finite(ref64) || !all_finite(refdt)) return "";  // not judged here, as in every stage
  const runner::yardstick yard = reference_yard(refdt, ref64, wide, dtype, shape);
  const auto [tol, allowance] = tolerance_for(wide, ref64, dtype, shape);
  runner::check_result r = runner::check_within(out, ref64, tol, yard, runner::yard_basis::trusted_reference);
  return r.ok ? "" : r.message + allowance;
}

void verifier::timed_speedup(const shape_variant& sh, at::ScalarType dtype,
                             const std::function<std::uint64_t()>& next_seed, double started) {
  // Three rounds, each: a warm-up set and three timed sets for the reference here, the same values for the
  // candidate in its process; every timed call of the candidate gets values and memory no earlier call saw (drawn
  // before the clock starts), so a result cached on an input cannot be served. The fastest call counts (load on a
  // shared machine only adds time); the trusted reference is called three times back to back on each set, the
  // second on one thread (reference_threads), so a thread pool woken late on a busy machine does not pass for a slow
  // reference. Up to three more rounds run while
  // the speedup looks implausible: only one that stays so is. Then the candidate's timed outputs are checked: one
  // timed call per round chosen after it ran, and the call made after the first timed set's memory was rewritten
  // in place with new values.
  constexpr int rounds = 3;
  constexpr int extra_rounds = 3;
  constexpr int timed = 3;
  constexpr int reference_repeats = 3;
  std::mt19937_64 pick(std::random_device{}());
  double ref_ms = INFINITY, cand_ms = INFINITY;
  std::int64_t written = 0;  // bytes of output of the candidate's timed calls
  int checked = 0;
  int rounds_run = 0;
  std::string wrong;
  try {
    for (int round = 0; round < rounds + extra_rounds && wrong.empty(); ++round) {
      if (round >= rounds && ref_ms / std::max(cand_ms, 1e-6) <= job_.speedup_limit) break;
      ++rounds_run;
      std::vector<std::vector<at::Tensor>> bases;
      for (int k = 0; k <= timed; ++k) bases.push_back(make_base({"", sh, next_seed(), {}, {}}));
      bases.push_back(rewritten_twin(bases[1], next_seed()));
      std::vector<std::vector<at::Tensor>> for_reference, for_candidate;
      for (const auto& set : bases) {
        std::vector<at::Tensor> r, c;
        for (const auto& b : set) {
          r.push_back(place(b, dtype, pair_.device(), layout::contiguous));
          c.push_back(place(b, dtype, pair_.device(), layout::contiguous));
        }
        for_reference.push_back(std::move(r));
        for_candidate.push_back(std::move(c));
      }
      pair_.reference().call(for_reference[0], dtype, sh);
      for (int k = 1; k <= timed; ++k) {
        const std::vector<at::Tensor>& in = for_reference[static_cast<std::size_t>(k)];
        for (int r = 0; r < reference_repeats; ++r) {
          const reference_threads threads(r % 2 == 1 && pair_.device().is_cpu());
          ref_ms = std::min(ref_ms, time_call_ms([&] { pair_.reference().call(in, dtype, sh); }, pair_.device()));
        }
      }
      for_reference.clear();
      const remote_candidate::fresh_timing f = candidate().time_fresh(for_candidate, dtype, sh);
      cand_ms = std::min(cand_ms, f.fastest_ms);
      const std::size_t chosen = std::uniform_int_distribution<std::size_t>(0, timed - 1)(pick);
      written = output_bytes(f.outputs[chosen]);
      std::string bad = check_timed_output(f.outputs[chosen], bases[chosen + 1], dtype, sh);
      ++checked;
      if (!bad.empty()) {
        wrong = "timed call " + std::to_string(static_cast<std::size_t>(round) * timed + chosen + 1) +
                " returned a wrong result: " + bad;
        break;
      }
      bad = check_timed_output(f.outputs.back(), bases.back(), dtype, sh);
      ++checked;
      if (!bad.empty()) {
        wrong =
            "after new values were written into an input's memory (an address it had seen), the output did not "
            "follow (a result cached on the input's address?): " +
            bad;
      }
    }
  } catch (const std::exception& e) {
    row(check_id::implausible_speedup, outcome::fail, e.what(), started, dtype);
    return;
  }
  if (!wrong.empty()) {
    row(check_id::implausible_speedup, outcome::fail, wrong, started, dtype);
    return;
  }
  const double speedup = ref_ms / std::max(cand_ms, 1e-6);
  const bool implausible = speedup > job_.speedup_limit;
  // Physics first: a call faster than writing its own output is not a computation, whatever the factor.
  double bound_ms = 0;
  try {
    // Every timed call of the candidate gets inputs and memory no earlier call saw, so a correct one writes its
    // whole output; the runner's bound (the device's fastest fill of that many bytes, kernel time only on CUDA) is
    // below the host-clocked call the candidate was timed by.
    bound_ms = runner::write_bound_ms(written, pair_.device());
    // A bound the candidate beats is measured again and the lower kept, as the runner's peaks are: a fill timed while
    // the machine was busy reads slow, and only a call that still beats the machine's best is not a computation.
    if (rnx::beyond_physics(physical_bound{written, bound_ms}, cand_ms)) {
      bound_ms = std::min(bound_ms, runner::write_bound_ms(written, pair_.device()));
    }
  } catch (const std::exception& e) {
    row(check_id::implausible_speedup, outcome::fail,
        std::string("the physical bound could not be measured: ") + e.what(), started, dtype);
    return;
  }
  const bool beyond_physics = rnx::beyond_physics(physical_bound{written, bound_ms}, cand_ms);
  emit(to_json(speedup_event{.dtype = std::string(runner::dtype_name(dtype)), .value = speedup}));
  std::string d = fmt(speedup) + "x vs the eager reference (" + fmt(ref_ms) + " ms -> " + fmt(cand_ms) + " ms, " +
                  sh.label() + "; " + std::to_string(rounds_run * timed) + " timed calls, each on new inputs, " +
                  std::to_string(checked) + " outputs checked)";
  d += "; the physical bound: writing its " + fmt(static_cast<double>(written) / 1048576.0) +
       " MiB of output takes this device at least " + fmt(bound_ms) + " ms";
  outcome result = outcome::pass;
  if (beyond_physics) {
    result = outcome::fail;
    d += ", and the candidate's fastest call took " + fmt(cand_ms) + " ms: beyond what the device can do (more than " +
         fmt(rnx::physics_margin) + "x faster than its own fill of that many bytes), so the time measured is not the " +
         "computation's; rejected";
  } else if (implausible && job_.implausible_speedup == on_implausible::review) {
    result = outcome::review;
    d += "; over " + fmt(job_.speedup_limit) + "x: have a person look";
  } else if (implausible) {
    result = outcome::fail;
    d += "; over " + fmt(job_.speedup_limit) + "x, rejected (--speedup-review marks it for a person instead)";
  }
  row(check_id::implausible_speedup, result, d, started, dtype);
}

}  // namespace rnx::verify::detail
