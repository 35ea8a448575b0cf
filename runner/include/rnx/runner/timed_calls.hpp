// What the timer calls: one bound call on the same inputs every time, or a pool of calls over distinct input sets
// whose values (every dtype) are redrawn outside the clock before each use, by the kernel's own input maker or, for
// declared shapes, an exact rotation of normal reservoirs (fresh inputs); and a decorator that keeps the outputs of
// a few timed calls, chosen at random, for checking.
//
//   auto call = k->prepare("eager", inputs, at::kFloat, dev, seed);
//   rnx::runner::fresh_inputs calls(*call, inputs, [&](std::uint64_t s) { return k->make_inputs(8, at::kFloat, dev, s);
//   },
//                                   seed);
//   auto timing = rnx::runner::measure(calls, dev, {});   // no call sees inputs an earlier call saw
#pragma once

#include "rnx/runner/kernel.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace rnx::runner {

class timed_calls {
 public:
  virtual ~timed_calls() = default;
  // The most calls one sample may make, each on inputs of its own; the samplers cap their calls per sample here.
  virtual std::int64_t max_calls_per_sample() const = 0;
  // Outside the clock, before a sample (or a warm-up call) of `calls` calls: makes the inputs of calls
  // 0..calls-1 ready. `calls` is at most max_calls_per_sample().
  virtual void prepare_sample(std::int64_t calls) = 0;
  // Call `i` of the sample just prepared.
  virtual bound_call& call(std::int64_t i) = 0;
  // Right after a sample's (or a warm-up call's) clock stopped: nothing of the kernel runs in between.
  virtual void end_sample() {}
  // The inputs call `i` of the prepared sample is given; nullptr where they are not known here.
  virtual const std::vector<at::Tensor>* inputs_of(std::int64_t i) const = 0;
};

// The same bound inputs at every call: what `rnx bench` times by default (the kernel called in a loop).
class same_inputs final : public timed_calls {
 public:
  // `inputs` (optional) are the tensors `call` is bound on, for inputs_of().
  explicit same_inputs(bound_call& call, const std::vector<at::Tensor>* inputs = nullptr)
      : call_(call), inputs_(inputs) {}
  std::int64_t max_calls_per_sample() const override { return std::numeric_limits<std::int64_t>::max(); }
  void prepare_sample(std::int64_t) override {}
  bound_call& call(std::int64_t) override { return call_; }
  const std::vector<at::Tensor>* inputs_of(std::int64_t) const override { return inputs_; }

 private:
  bound_call& call_;
  const std::vector<at::Tensor>* inputs_;
};

// How large the pool of fresh_inputs may grow: at most `max_sets` input sets and at most `max_bytes` of them
// together, but never fewer than one set (a set larger than max_bytes is a pool of one).
struct pool_limits {
  std::int64_t max_bytes = std::int64_t{256} << 20;
  std::int64_t max_sets = 64;
};

// What fresh_inputs may assume of the maker's values. standard_normal: every element of every input is i.i.d.
// N(0, 1), drawn in float32 and converted to the input's dtype (kernel::standard_normal_inputs(), the declared
// shapes' maker). The pool then redraws a set without the maker: each input becomes
//   cos(t) * roll(A, j) + sin(t) * roll(B, k)
// of two float32 reservoirs A and B of independent N(0, 1) values (flat, the input's length), for an angle t drawn
// from [0, 2 pi) and offsets j, k from [0, n): element by element a sum of two independent normals whose variances
// add to one, so again exactly i.i.d. N(0, 1), at the cost of a few passes over memory instead of a normal draw per
// element (which took longer than the kernel's own call: 2.5 ms against 2.1 ms for the attention example's b4
// inputs on one CPU thread). One reservoir in turn is drawn anew every reservoir_life redraws, so no run ever
// reuses a source for long; the kernel never sees A or B, only their rotations. any: the maker's law is the file's
// own (get_inputs()): every redraw calls the maker.
enum class input_law { any, standard_normal };

// Inputs no earlier call saw, so that nothing keyed on an input (its address, a few sampled values, its whole
// contents) is ever served again: a pool of input sets, each its own tensors at their own addresses, taken in turn;
// before a sample every set it will use gets new values, drawn by the kernel's own input maker under a seed no
// earlier draw used and copied into the set's memory, or for declared shapes rotated from normal reservoirs
// (input_law) straight into it (outside the clock). The calls of one sample each
// take a different set, so a sample makes at most as many calls as the pool has sets. Every input is redrawn,
// integer and boolean ones (indices, labels, masks, token ids) included: the new values come from the kernel's own
// maker (its get_inputs() under another seed, or the declared shapes' draw), so an index stays a valid index and a
// mask a mask. Memory: the pool (pool_limits) plus one set while a redraw is copied in.
class fresh_inputs final : public timed_calls {
 public:
  // One input set with the kernel's shapes, dtypes and device, drawn under `seed` (kernel::make_inputs).
  using input_maker = std::function<std::vector<at::Tensor>(std::uint64_t seed)>;

  // `first` is the call bound (and checked) on `first_inputs`, the pool's set 0; further sets are made by `make`
  // and bound through first.with_inputs() as the samples need them. `seed` starts the redraws' seeds. Throws
  // runtime_unavailable when the call cannot be given other inputs, rnx::error(kernel_failed) when the maker
  // gives other shapes or dtypes than the first set's.
  fresh_inputs(bound_call& first, std::vector<at::Tensor> first_inputs, input_maker make, std::uint64_t seed,
               pool_limits limits = {}, input_law law = input_law::any);
  // The other side of an in-process pair whose inputs are the same tensors as `owner`'s (`call` is bound on the
  // owner's set 0): both sides take their calls' inputs from one pool in the same order (each side's n-th sample
  // reads the buffers the other's n-th sample read, redrawn in between), so where the inputs lie in memory cannot
  // favour one side. `owner` must outlive this.
  fresh_inputs(bound_call& call, const fresh_inputs& owner);

  std::int64_t max_calls_per_sample() const override { return pool_->capacity; }
  void prepare_sample(std::int64_t calls) override;
  bound_call& call(std::int64_t i) override;
  const std::vector<at::Tensor>* inputs_of(std::int64_t i) const override;

  std::int64_t sets() const { return static_cast<std::int64_t>(pool_->sets.size()); }  // made so far
  std::int64_t redraws() const { return pool_->redraws; }
  // True when redraws rotate normal reservoirs (input_law::standard_normal, and the reservoirs fit max_bytes).
  bool rotates() const { return pool_->normal.has_value(); }
  // Redraws between two reservoir draws.
  static constexpr std::int64_t reservoir_life = 32;

 private:
  // The input sets, shared by the sides that use them.
  // input_law::standard_normal's sources: per input, two flat float32 tensors of N(0, 1) values on its device.
  struct normal_reservoirs {
    std::vector<at::Tensor> a, b;
    std::uint64_t rng = 0;         // the angles', offsets' and reservoir draws' splitmix64 state
    std::int64_t until_fresh = 0;  // redraws before the next reservoir is drawn anew
    bool fresh_a = true;           // which one that is
  };
  struct pool {
    input_maker make;
    std::vector<std::vector<at::Tensor>> sets;
    std::int64_t capacity = 1;
    std::uint64_t next_seed = 0;
    std::int64_t redraws = 0;
    std::optional<normal_reservoirs> normal;
  };
  void grow_to(std::size_t count);
  void bind_new_sets();
  void redraw(std::size_t set);
  void rotate_into(std::vector<at::Tensor>& target);
  std::vector<at::Tensor> draw();

  std::shared_ptr<pool> pool_;
  std::vector<bound_call*> calls_;                  // this side's, one per set; calls_[0] is the caller's
  std::vector<std::unique_ptr<bound_call>> owned_;  // the others
  std::vector<std::size_t> current_;                // the set of each call of the prepared sample
  std::size_t cursor_ = 0;                          // the set this side's next sample starts with
};

// One audited timed call: which sample it closed and what it returned.
struct timed_output {
  std::int64_t sample = 0;  // 0-based, warm-up calls counted (each is a sample of one call)
  std::vector<at::Tensor> outputs;
};

// The timed calls of `inner` (a fresh_inputs pool), with a few of them audited: the last call of samples drawn at
// random (from `seed`: the kernel cannot tell which) is given one of `audit_inputs`, input sets the kernel has not
// been called on in its dtype (the caller computed their float64 reference before the clock started), is made
// through bound_call::outputs() instead of invoke(), and its outputs are copied once the sample's clock has
// stopped. The caller then checks them against those references (worker_config.cpp): a kernel whose timed calls
// answer otherwise than its checked call (it skips work after so many calls, or when called in a loop) is caught on
// the very calls that were timed. The gaps between audits are drawn from 1..8, 1..32, 1..96, 1..256 samples, so
// every process is audited early and the audits reach far into a long run. The audit inputs are copied into the call's
// set outside the clock; the outputs() call differs from invoke() only by wrapping the returned tensors (microseconds,
// in one call of a few samples).
class audited_calls final : public timed_calls {
 public:
  audited_calls(timed_calls& inner, std::vector<std::vector<at::Tensor>> audit_inputs, std::uint64_t seed);

  std::int64_t max_calls_per_sample() const override { return inner_.max_calls_per_sample(); }
  void prepare_sample(std::int64_t calls) override;
  bound_call& call(std::int64_t i) override;
  void end_sample() override;
  const std::vector<at::Tensor>* inputs_of(std::int64_t i) const override { return inner_.inputs_of(i); }

  // The audited calls so far, in order: kept()[k] was given audit_inputs[k].
  const std::vector<timed_output>& kept() const { return kept_; }

 private:
  // Forwards to the inner call, keeping the outputs of the one call it makes.
  class keeping_call final : public bound_call {
   public:
    void invoke() override { kept = target->outputs(); }
    std::vector<at::Tensor> outputs() override { return kept = target->outputs(); }
    std::unique_ptr<bound_call> with_inputs(const std::vector<at::Tensor>& inputs) override {
      return target->with_inputs(inputs);
    }
    bound_call* target = nullptr;
    std::vector<at::Tensor> kept;
  };
  void schedule_next();

  timed_calls& inner_;
  std::vector<std::vector<at::Tensor>> audit_inputs_;
  std::uint64_t rng_;
  std::int64_t prepared_ = 0;    // calls of the sample prepared now
  std::int64_t sample_ = -1;     // the sample prepared now (-1: none yet)
  std::int64_t next_audit_ = 0;  // the sample to audit next
  bool auditing_ = false;        // the prepared sample is audited
  keeping_call keeping_;
  std::vector<timed_output> kept_;
};

}  // namespace rnx::runner
