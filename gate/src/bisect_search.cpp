// The recursive split of `rnx bisect` over paired comparisons.
#include "bisect_search.hpp"

#include <cmath>

namespace rnx::gate {

std::string_view to_string(step_call call) {
  switch (call) {
    case step_call::step: return "step";
    case step_call::none: return "none";
    case step_call::uncertain: return "uncertain";
  }
  return "uncertain";
}

step_call call_step(const step_estimate& e, const bisect_policy& policy) {
  if (e.p_slower >= policy.probability) return step_call::step;
  if (1 - e.p_slower >= policy.probability) return step_call::none;
  return step_call::uncertain;
}

namespace {

// The comparison of (mid, head) as the quotient of (base, head) and (base, mid). The interval is the conservative
// quotient of the two intervals; the probability comes from a normal approximation of the log ratio with that
// interval as its 95% range.
step_estimate quotient(const step_estimate& whole, const step_estimate& part, double threshold) {
  step_estimate q;
  q.measured = false;
  q.ratio = whole.ratio / part.ratio;
  q.lo = whole.lo / part.hi;
  q.hi = whole.hi / part.lo;
  const double sigma = (std::log(q.hi) - std::log(q.lo)) / (2 * 1.959964);
  const double z = (std::log(q.ratio) - std::log1p(threshold)) / (sigma > 0 ? sigma : 1e-12);
  q.p_slower = 0.5 * std::erfc(-z / std::sqrt(2.0));
  return q;
}

class searcher {
 public:
  searcher(pair_measure& measure, const bisect_policy& policy, bisect_outcome& out)
      : measure_(measure), policy_(policy), out_(out) {}

  step_estimate measure(std::size_t base, std::size_t head) {
    step_estimate e = measure_.compare(base, head);
    e.measured = true;
    (e.reused ? out_.reused_runs : out_.paired_runs) += 1;
    record(base, head, e);
    return e;
  }

  void record(std::size_t base, std::size_t head, const step_estimate& e) {
    out_.comparisons.push_back({base, head, e, call_step(e, policy_)});
  }

  // Worth following: a confirmed step, or an uncertain comparison whose estimate exceeds the threshold.
  bool pursue(const step_estimate& e, step_call call) const {
    return call == step_call::step || (call == step_call::uncertain && e.ratio > 1 + policy_.threshold);
  }

  void search(std::size_t base, std::size_t head, const step_estimate& e, step_call call) {
    if (!pursue(e, call)) return;
    if (head == base + 1) {
      out_.culprits.push_back({head, e, call});
      return;
    }
    const std::size_t mid = base + (head - base) / 2;
    const step_estimate left = measure(base, mid);
    const step_call left_call = call_step(left, policy_);
    if (left_call == step_call::none) {
      // Nothing before mid: the whole change lies after it, and (mid, head) needs no run of its own.
      step_estimate right = quotient(e, left, policy_.threshold);
      record(mid, head, right);
      search(mid, head, right, call);
      return;
    }
    search(base, mid, left, left_call);
    if (pursue(left, left_call)) {
      step_estimate rest = quotient(e, left, policy_.threshold);
      if (rest.ratio <= 1 + policy_.threshold) {
        record(mid, head, rest);  // the first half explains the whole
        return;
      }
    }
    const step_estimate right = measure(mid, head);
    search(mid, head, right, call_step(right, policy_));
  }

 private:
  pair_measure& measure_;
  const bisect_policy& policy_;
  bisect_outcome& out_;
};

}  // namespace

bisect_outcome bisect_range(std::size_t count, pair_measure& measure, const bisect_policy& policy) {
  bisect_outcome out;
  if (count < 2) return out;
  searcher s(measure, policy, out);
  out.whole = s.measure(0, count - 1);
  out.whole_call = call_step(out.whole, policy);
  s.search(0, count - 1, out.whole, out.whole_call);
  return out;
}

}  // namespace rnx::gate
