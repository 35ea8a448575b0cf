// The checks that a head cannot steer its base in a shared process (docs/runner.md, a head cannot steer its base):
// the control, timed in every process with the base first, confirmed before it splits a pair, and the load-order
// check over the pair's processes.
#include "orchestrator.hpp"

#include "rnx/runner/sample_stats.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace rnx::runner::detail {

namespace {

// How far the base beside its head may run from the base beside its twin in the same process before the head is taken
// to have steered it, beyond the two medians' own noise: binding the head and moving both sides' weights between the
// two measurements moves the base by about 1% (docs/runner.md).
constexpr double base_control_limit = 0.05;

// The standard error of the log of a median of `v`: about 1.25 standard deviations (the MAD's) over sqrt(n).
double median_log_se(const std::vector<double>& v) {
  return v.size() < 2 ? 0.0 : 1.2533 * relative_mad(v) / std::sqrt(static_cast<double>(v.size()));
}

// "the base ran 1.069x beside the head its time beside its twin": how a control read, the start of every line about
// it.
std::string control_words(const base_control_check& c) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(3) << "the base ran " << c.ratio
     << "x beside the head its time beside its twin";
  return os.str();
}

}  // namespace

// The base beside the head (this process's in-process samples) against the base beside its twin in the same process,
// timed before the head was imported (the control, worker_config.cpp). At most 1 + (base_control_limit + three standard
// errors of the log ratio, from the two sample sets' spreads) the head did not slow its base. Beyond it once, that
// process's samples are dropped, the next process (its base first) runs the control again, and the pair decides nothing
// until it has: the two windows of one process drift apart by more than their samples' spread on a busy machine (a
// 2-core CPU timing two threads: 1.07x and 1.12x for identical code), while a head that steers its base does so in
// every process. Beyond it twice, the pair's in-process samples are dropped and it is measured by process pairing from
// this round on, where nothing of the head runs beside the base.
void orchestrator::judge_control(int round, planned& head) {
  planned& base = plan_[*head.partner];
  const std::vector<double> beside(base.result.samples_ms.end() - base.result.groups.back(),
                                   base.result.samples_ms.end());
  const std::vector<double> alone = std::move(base.control_ms);
  base.control_ms.clear();
  if (beside.size() < 2 || alone.size() < 2 || !(median(alone) > 0) || !(median(beside) > 0)) return;
  const double ratio = median(beside) / median(alone);
  const double noise = 3 * std::hypot(median_log_se(beside), median_log_se(alone));
  const double limit = std::exp(std::log1p(base_control_limit) + noise) - 1;
  // One-sided: a base slowed beside its head hides the head's regression; a base sped up only makes its head read
  // slower, and the window timed first (the control) is the colder one, so most noise reads below 1.
  const base_control_check check{ratio, limit, std::log(ratio) > std::log1p(limit)};
  std::ostringstream os;
  os << std::fixed << std::setprecision(3) << control_words(check);
  if (!check.steered) {
    // The result carries the control that came nearest its limit; the run says the first and a confirming one.
    const bool first = !head.result.base_control;
    if (first || check.ratio > head.result.base_control->ratio) {
      head.result.base_control = base.result.base_control = check;
    }
    if (!first && !head.control_trip) return;
    if (head.control_trip) os << " (a second control; the first found " << head.control_trip->ratio << "x)";
    head.control_trip.reset();
    progress("[control] " + label(head) + ": " + os.str() + " (within the limit)", true);
    return;
  }
  os << " (the base beside its twin, the base's own file imported once more, timed in the same process before the "
        "head was imported; the limit is 1 + "
     << std::setprecision(3) << limit << ")";
  if (!head.control_trip) {
    head.control_trip = check;
    drop_last_process(head);
    progress("[control] " + label(head) + ": " + os.str() +
                 ": this process's samples are not counted, and the next process loads the base first and times it "
                 "again",
             true);
    return;
  }
  os << ", " << head.control_trip->ratio
     << "x in an earlier process: the head changes the base's time when they share a process, so they are measured in "
        "processes of their own";
  head.control_trip.reset();
  head.result.base_control = base.result.base_control = check;
  drop_in_process(round, head, os.str());
}

// The samples of a pair's latest process, both sides: a process whose control found the base moved counts for
// neither verdict, whether a second control confirms it or not (a head that steers only the processes it expects
// no second control in gains nothing).
void orchestrator::drop_last_process(planned& head) {
  for (planned* p : {&head, &plan_[*head.partner]}) {
    auto& r = p->result;
    if (r.groups.empty()) continue;
    if (p->process_notes.size() == r.groups.size()) p->process_notes.pop_back();
    r.samples_ms.erase(r.samples_ms.end() - r.groups.back(), r.samples_ms.end());
    r.groups.pop_back();
    if (r.first_sides.size() > r.groups.size()) r.first_sides.pop_back();
  }
}

// A pair whose first control found its base moved and no second came (no process with the base first was left):
// unconfirmed, so measured by process pairing, where the head cannot reach the base.
void orchestrator::settle_unconfirmed_control(int round, planned& head) {
  const base_control_check trip = *head.control_trip;
  head.control_trip.reset();
  head.result.base_control = plan_[*head.partner].result.base_control = trip;
  std::ostringstream os;
  os << std::fixed << std::setprecision(3) << control_words(trip) << " (the limit is 1 + " << trip.limit
     << ") and no later process could time it again: measured in processes of their own";
  drop_in_process(round, head, os.str());
}

// Where the head goes first, it is imported before the base and could slow the base only in such processes, which
// no control sees (the control's process has the base first). Unchanged code gives the same ratio whichever side
// goes first (within about 1%: where the weights land); so the pair's ratio among processes with the base first
// against its ratio among processes with the head first, beyond base_control_limit plus three standard errors of
// the two, means a head that behaves by its order: the pair goes on by process pairing.
void orchestrator::check_orders(int round, planned& head) {
  const planned& base = plan_[*head.partner];
  if (!head.in_process || head.result.first_sides.size() != head.result.groups.size() ||
      base.result.groups.size() != head.result.groups.size()) {
    return;
  }
  std::vector<double> by_order[2];  // log block ratios: [0] base first, [1] head first
  std::size_t at = 0;
  for (std::size_t g = 0; g < head.result.groups.size(); ++g) {
    const auto n = static_cast<std::size_t>(head.result.groups[g]);
    if (static_cast<std::size_t>(base.result.groups[g]) != n) return;
    for (std::size_t j = at; j + in_process_block <= at + n; j += in_process_block) {
      double h = 0, b = 0;
      for (std::size_t k = j; k < j + in_process_block; ++k) {
        h += head.result.samples_ms[k];
        b += base.result.samples_ms[k];
      }
      if (h > 0 && b > 0) by_order[head.result.first_sides[g] == pair_side::head].push_back(h / b);
    }
    at += n;
  }
  if (by_order[0].size() < 2 || by_order[1].size() < 2) return;
  const double apart = median(by_order[1]) / median(by_order[0]);
  const double noise = 3 * std::hypot(median_log_se(by_order[0]), median_log_se(by_order[1]));
  const double limit = std::exp(std::log1p(base_control_limit) + noise) - 1;
  if (std::abs(std::log(apart)) <= std::log1p(limit)) return;
  std::ostringstream os;
  os << std::fixed << std::setprecision(3) << "the ratio with the head loaded first is " << apart
     << "x the ratio with the base loaded first (the limit is 1 ± " << limit
     << "): the head behaves otherwise by the order the two were loaded in, so they are measured in processes of "
        "their own";
  head.result.base_control = plan_[*head.partner].result.base_control = base_control_check{apart, limit, true};
  drop_in_process(round, head, os.str());
}

}  // namespace rnx::runner::detail
