// The fresh-inputs pool: input sets made and bound on demand, redrawn in place before each use.
#include "rnx/runner/timed_calls.hpp"

#include "rnx/common/error.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numbers>
#include <utility>

namespace rnx::runner {

namespace {

std::int64_t set_bytes(const std::vector<at::Tensor>& set) {
  std::int64_t bytes = 0;
  for (const auto& t : set) bytes += static_cast<std::int64_t>(t.nbytes());
  return std::max<std::int64_t>(bytes, 1);
}

// A splitmix64 step: the redraws' seeds stay far from the configuration's own seed (which made set 0).
std::uint64_t mixed(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return (x ^ (x >> 31)) & 0x7FFFFFFFFFFFFFFFULL;  // torch seeds are signed in Python
}

// A uniform draw from [0, 1) off the top 53 bits of a splitmix64 step.
double unit_interval(std::uint64_t& rng) {
  rng = mixed(rng);
  return static_cast<double>(rng >> 10) * 0x1.0p-53;
}

// out += c * roll(src, -offset): the flat source read from `offset` on, wrapping round to its start, in the two
// contiguous runs that makes.
void add_rolled(at::Tensor& out, const at::Tensor& src, std::int64_t offset, double c) {
  const std::int64_t n = out.numel();
  const std::int64_t runs[2][3] = {{0, offset, n - offset}, {n - offset, 0, offset}};  // out start, src start, length
  for (const auto& [at_out, at_src, length] : runs) {
    if (length > 0) out.narrow(0, at_out, length).add_(src.narrow(0, at_src, length), c);
  }
}

// Fills a reservoir with N(0, 1) values drawn under the next seed of `rng`: how each is made and drawn anew.
void fill_normal(at::Tensor& reservoir, std::uint64_t& rng) {
  rng = mixed(rng);
  at::Generator gen = seeded_generator(reservoir.device(), rng);
  reservoir.normal_(0, 1, gen);
}

// The reservoirs of input_law::standard_normal where the inputs allow them: floating-point, contiguous, and the
// two float32 copies of a set within the pool's byte limit.
std::optional<std::pair<std::vector<at::Tensor>, std::vector<at::Tensor>>> normal_sources(
    const std::vector<at::Tensor>& set, std::uint64_t& rng, std::int64_t max_bytes) {
  std::int64_t bytes = 0;
  for (const auto& t : set) {
    if (!t.is_floating_point() || !t.is_contiguous()) return std::nullopt;
    bytes += 2 * 4 * t.numel();
  }
  if (bytes > max_bytes) return std::nullopt;
  std::vector<at::Tensor> a, b;
  for (const auto& t : set) {
    for (auto* into : {&a, &b}) {
      into->push_back(at::empty({t.numel()}, at::TensorOptions().dtype(at::kFloat).device(t.device())));
      fill_normal(into->back(), rng);
    }
  }
  return std::make_pair(std::move(a), std::move(b));
}

}  // namespace

fresh_inputs::fresh_inputs(bound_call& first, std::vector<at::Tensor> first_inputs, input_maker make,
                           std::uint64_t seed, pool_limits limits, input_law law)
    : pool_(std::make_shared<pool>()) {
  pool_->make = std::move(make);
  pool_->next_seed = mixed(seed);
  pool_->capacity = std::clamp<std::int64_t>(limits.max_bytes / set_bytes(first_inputs), 1,
                                             std::max<std::int64_t>(limits.max_sets, 1));
  if (law == input_law::standard_normal) {
    std::uint64_t rng = mixed(seed ^ 0x5EED0F0A11ULL);
    if (auto sources = normal_sources(first_inputs, rng, limits.max_bytes)) {
      pool_->normal = normal_reservoirs{std::move(sources->first), std::move(sources->second), rng, reservoir_life};
    }
  }
  pool_->sets.push_back(std::move(first_inputs));
  calls_.push_back(&first);
  // A second set at once, so a call that cannot be rebound fails before the clock starts, and warm-up calls
  // already alternate between two addresses.
  grow_to(static_cast<std::size_t>(std::min<std::int64_t>(pool_->capacity, 2)));
}

fresh_inputs::fresh_inputs(bound_call& call, const fresh_inputs& owner) : pool_(owner.pool_) {
  calls_.push_back(&call);
  bind_new_sets();
}

std::vector<at::Tensor> fresh_inputs::draw() {
  std::vector<at::Tensor> set = pool_->make(pool_->next_seed);
  pool_->next_seed = mixed(pool_->next_seed);
  const std::vector<at::Tensor>& like = pool_->sets.front();
  bool same = set.size() == like.size();
  for (std::size_t i = 0; same && i < set.size(); ++i) {
    same = set[i].sizes() == like[i].sizes() && set[i].scalar_type() == like[i].scalar_type() &&
           set[i].device() == like[i].device();
  }
  if (!same) {
    throw error(errc::kernel_failed,
                "fresh inputs: the kernel's inputs drawn under another seed differ in number, shape, dtype or "
                "device from the first set (does get_inputs() draw its shapes at random?); time it without fresh "
                "inputs");
  }
  return set;
}

void fresh_inputs::grow_to(std::size_t count) {
  while (pool_->sets.size() < count) pool_->sets.push_back(draw());
  bind_new_sets();
}

// This side's calls on the sets the pool has made since it last looked (by this side or the other).
void fresh_inputs::bind_new_sets() {
  while (calls_.size() < pool_->sets.size()) {
    owned_.push_back(calls_.front()->with_inputs(pool_->sets[calls_.size()]));
    calls_.push_back(owned_.back().get());
  }
}

void fresh_inputs::redraw(std::size_t set) {
  std::vector<at::Tensor>& target = pool_->sets[set];
  if (pool_->normal) {
    rotate_into(target);
  } else {
    const std::vector<at::Tensor> values = draw();
    for (std::size_t i = 0; i < target.size(); ++i) target[i].copy_(values[i]);
  }
  ++pool_->redraws;
}

// input_law::standard_normal's redraw (timed_calls.hpp): each input becomes cos(t) * roll(A) + sin(t) * roll(B), in
// float32, converted into the set's own memory; first, where its time has come, one reservoir is drawn anew.
void fresh_inputs::rotate_into(std::vector<at::Tensor>& target) {
  normal_reservoirs& r = *pool_->normal;
  if (--r.until_fresh <= 0) {
    for (auto& source : r.fresh_a ? r.a : r.b) fill_normal(source, r.rng);
    r.fresh_a = !r.fresh_a;
    r.until_fresh = reservoir_life;
  }
  for (std::size_t i = 0; i < target.size(); ++i) {
    const std::int64_t n = r.a[i].numel();
    const double t = 2 * std::numbers::pi * unit_interval(r.rng);
    const auto j = static_cast<std::int64_t>(unit_interval(r.rng) * static_cast<double>(n));
    const auto k = static_cast<std::int64_t>(unit_interval(r.rng) * static_cast<double>(n));
    const bool in_place = target[i].scalar_type() == at::kFloat;
    at::Tensor sum = in_place ? target[i].view({-1}) : at::empty({n}, r.a[i].options());
    sum.zero_();
    add_rolled(sum, r.a[i], j, std::cos(t));
    add_rolled(sum, r.b[i], k, std::sin(t));
    if (!in_place) target[i].view({-1}).copy_(sum);
  }
}

void fresh_inputs::prepare_sample(std::int64_t calls) {
  const auto wanted = static_cast<std::size_t>(std::clamp<std::int64_t>(calls, 1, pool_->capacity));
  grow_to(std::max(wanted, pool_->sets.size()));
  current_.resize(wanted);
  for (std::size_t i = 0; i < wanted; ++i) {
    const std::size_t set = (cursor_ + i) % pool_->sets.size();
    redraw(set);
    current_[i] = set;
  }
  cursor_ = (cursor_ + wanted) % pool_->sets.size();
}

bound_call& fresh_inputs::call(std::int64_t i) {
  if (i < 0 || static_cast<std::size_t>(i) >= current_.size()) {
    throw error(errc::internal, "fresh inputs: call " + std::to_string(i) + " of a sample prepared for " +
                                    std::to_string(current_.size()));
  }
  return *calls_[current_[static_cast<std::size_t>(i)]];
}

const std::vector<at::Tensor>* fresh_inputs::inputs_of(std::int64_t i) const {
  if (i < 0 || static_cast<std::size_t>(i) >= current_.size()) return nullptr;
  return &pool_->sets[current_[static_cast<std::size_t>(i)]];
}

audited_calls::audited_calls(timed_calls& inner, std::vector<std::vector<at::Tensor>> audit_inputs, std::uint64_t seed)
    : inner_(inner), audit_inputs_(std::move(audit_inputs)), rng_(mixed(seed ^ 0xA0D17ULL)) {
  schedule_next();
}

void audited_calls::schedule_next() {
  // The first audit within the first 8 samples (warm-up counted; 8 is the least number of samples a process takes
  // by default), so a short process is audited too; the later gaps reach far into a long run.
  static constexpr std::uint64_t gaps[] = {8, 32, 96, 256};
  const std::size_t k = std::min(kept_.size(), std::size(gaps) - 1);
  rng_ = mixed(rng_);
  next_audit_ = sample_ + 1 + static_cast<std::int64_t>(rng_ % gaps[k]);
}

void audited_calls::prepare_sample(std::int64_t calls) {
  inner_.prepare_sample(calls);
  prepared_ = std::max<std::int64_t>(calls, 1);
  ++sample_;
  auditing_ = sample_ == next_audit_ && kept_.size() < audit_inputs_.size();
  keeping_.target = nullptr;
  keeping_.kept.clear();
  if (!auditing_) return;
  const std::vector<at::Tensor>* set = inner_.inputs_of(prepared_ - 1);
  const std::vector<at::Tensor>& audit = audit_inputs_[kept_.size()];
  if (!set || set->size() != audit.size()) {
    auditing_ = false;
    return;
  }
  for (std::size_t i = 0; i < audit.size(); ++i) (*set)[i].copy_(audit[i]);
}

bound_call& audited_calls::call(std::int64_t i) {
  bound_call& target = inner_.call(i);
  if (!auditing_ || i != prepared_ - 1) return target;
  keeping_.target = &target;
  return keeping_;
}

void audited_calls::end_sample() {
  inner_.end_sample();
  if (!auditing_) return;
  auditing_ = false;
  if (!keeping_.target) return;  // the sampler stopped before the last call
  timed_output kept{sample_, {}};
  for (const auto& t : keeping_.kept) kept.outputs.push_back(t.defined() ? t.clone() : t);
  keeping_.kept.clear();
  kept_.push_back(std::move(kept));
  schedule_next();
}

}  // namespace rnx::runner
