// Posterior of a per-side statistic (Bayesian bootstrap, two-level over processes) and the ROPE decision.
#include "rnx/stats/posterior.hpp"
#include "rnx/stats/look_schedule.hpp"
#include "rnx/stats/summary.hpp"

#include "random.hpp"
#include "student_t.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <memory>
#include <mutex>
#include <numeric>
#include <sstream>

namespace rnx::stats {

namespace {

using detail::xoshiro256;

// One process's samples, sorted, ready for repeated draws.
struct process_samples {
  std::vector<double> sorted;
  std::vector<double> log_sorted;  // for the two-level median, so draws need no log()
};

std::vector<process_samples> split_processes(const sample_view& side, bool flat) {
  std::vector<process_samples> out;
  if (flat || side.groups.size() < 2) {
    out.push_back({std::vector<double>(side.samples.begin(), side.samples.end())});
  } else {
    std::size_t offset = 0;
    for (auto count : side.groups) {
      auto first = side.samples.begin() + static_cast<std::ptrdiff_t>(offset);
      out.push_back({std::vector<double>(first, first + count)});
      offset += static_cast<std::size_t>(count);
    }
  }
  for (auto& p : out) {
    std::sort(p.sorted.begin(), p.sorted.end());
    p.log_sorted.reserve(p.sorted.size());
    for (double x : p.sorted) p.log_sorted.push_back(std::log(std::max(x, 1e-300)));
  }
  return out;
}

// Processes an arm needs before the level over processes takes two arms: with two a side the Student-t would have
// 2 degrees of freedom where one arm of four has 3 (an interval a third wider wherever the orders do not differ);
// with three a side, 4 against 5 (8% wider), which an order effect of a seventh of the processes' variance repays.
constexpr std::size_t arm_processes = 3;

// The arm (0 or 1) of each of `processes` processes where `side` names two arms of at least arm_processes
// processes each; empty where it does not (the processes are then one arm).
std::vector<int> two_arms(const sample_view& side, std::size_t processes) {
  if (side.arms.size() != processes || processes < 2 * arm_processes) return {};
  std::size_t ones = 0;
  for (int a : side.arms) {
    if (a != 0 && a != 1) return {};
    ones += static_cast<std::size_t>(a);
  }
  if (ones < arm_processes || processes - ones < arm_processes) return {};
  return {side.arms.begin(), side.arms.end()};
}

// The level over processes, for their log statistics: the centre (their mean; with two arms the mean of the two
// arms' means, so each arm weighs alike however many processes it has), the spread of a process about its own arm's
// mean (sd, on `df` degrees of freedom: k - 1, or k - 2 with two arms) and the standard error of the centre.
struct process_level {
  double centre = 0;
  double sd = 0;
  double se = 0;
  int df = 0;
};

process_level over_processes(const std::vector<double>& logs, const std::vector<int>& arms) {
  process_level out;
  const auto k = static_cast<double>(logs.size());
  if (arms.empty()) {
    out.centre = std::accumulate(logs.begin(), logs.end(), 0.0) / k;
    double squares = 0;
    for (double l : logs) squares += (l - out.centre) * (l - out.centre);
    out.df = static_cast<int>(logs.size()) - 1;
    out.sd = out.df > 0 ? std::sqrt(squares / out.df) : 0;
    out.se = out.df > 0 ? std::sqrt(squares * (1.0 / (static_cast<double>(out.df) * k))) : 0;
    return out;
  }
  double sum[2] = {0, 0};
  double n[2] = {0, 0};
  for (std::size_t j = 0; j < logs.size(); ++j) {
    sum[arms[j]] += logs[j];
    n[arms[j]] += 1;
  }
  const double mean[2] = {sum[0] / n[0], sum[1] / n[1]};
  double squares = 0;
  for (std::size_t j = 0; j < logs.size(); ++j) squares += (logs[j] - mean[arms[j]]) * (logs[j] - mean[arms[j]]);
  out.centre = (mean[0] + mean[1]) / 2;
  out.df = static_cast<int>(logs.size()) - 2;
  out.sd = std::sqrt(squares / out.df);
  out.se = out.sd * std::sqrt(1 / n[0] + 1 / n[1]) / 2;
  return out;
}

double plain_mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// One Bayesian-bootstrap draw of a process's statistic. For the median the Dirichlet-weighted median
// of sorted data is the sample at rank Binomial(n-1, 1/2), so no weights need to be drawn.
double bootstrap_statistic(const process_samples& p, statistic stat, xoshiro256& rng, Eigen::VectorXd& weights) {
  const auto n = static_cast<std::int64_t>(p.sorted.size());
  if (stat == statistic::median) return p.sorted[static_cast<std::size_t>(rng.binomial_half(n - 1))];
  weights.resize(n);
  for (std::int64_t i = 0; i < n; ++i) weights[i] = rng.exponential();
  Eigen::Map<const Eigen::VectorXd> values(p.sorted.data(), n);
  return weights.dot(values) / weights.sum();
}

// Why a side cannot be judged, or empty when it can (instability is weighed later, against the change).
std::string data_problem(const sample_view& side, const char* name, int min_samples) {
  std::ostringstream why;
  if (side.samples.empty()) {
    why << "no samples in " << name;
    return why.str();
  }
  for (double s : side.samples) {
    if (!std::isfinite(s) || s < 0) {
      why << name << " has a non-finite or negative sample (" << s << ")";
      return why.str();
    }
  }
  if (static_cast<std::int64_t>(side.samples.size()) < min_samples) {
    why << "too few samples: " << name << " has " << side.samples.size() << ", min_samples is " << min_samples;
    return why.str();
  }
  if (!side.groups.empty()) {
    std::int64_t total = 0;
    for (auto g : side.groups) {
      if (g < 1) {
        why << name << " has an empty process group";
        return why.str();
      }
      total += g;
    }
    if (total != static_cast<std::int64_t>(side.samples.size())) {
      why << name << " groups add up to " << total << " samples, not " << side.samples.size();
      return why.str();
    }
  }
  return {};
}

// Why the two sides cannot be compared under `opt`, or empty when they can.
std::string sides_problem(const sample_view& base, const sample_view& head, const comparison_options& opt) {
  if (auto why = data_problem(base, "base", opt.min_samples); !why.empty()) return why;
  if (auto why = data_problem(head, "head", opt.min_samples); !why.empty()) return why;
  if (!(opt.resamples >= 1) || !(opt.rope > 0) || !(opt.probability > 0 && opt.probability <= 1)) {
    return "invalid options: resamples, rope and probability must be positive";
  }
  return {};
}

// Median and spread of the per-process statistics of paired log ratios, for the advice of an abstain: whether
// processes disagree (more processes help) or each process is noisy (a longer budget helps).
process_spread spread_of(const sample_view& ratios) {
  process_spread out;
  std::vector<double> medians;
  std::vector<double> errors;
  std::size_t offset = 0;
  std::vector<std::int64_t> groups(ratios.groups.begin(), ratios.groups.end());
  if (groups.empty()) groups.push_back(static_cast<std::int64_t>(ratios.samples.size()));
  for (auto count : groups) {
    std::vector<double> logs;
    for (std::int64_t i = 0; i < count; ++i) logs.push_back(std::log(std::max(ratios.samples[offset + i], 1e-300)));
    offset += static_cast<std::size_t>(count);
    // Upper medians (always one of the values), as this advice has been computed from the start.
    const double m = upper_median(logs);
    std::vector<double> deviations;
    deviations.reserve(logs.size());
    for (double l : logs) deviations.push_back(std::fabs(l - m));
    medians.push_back(m);
    // 1.2533 = sqrt(pi / 2): a normal sample's median is that much less certain than its mean.
    errors.push_back(1.2533 * mad_to_sd * upper_median(std::move(deviations)) /
                     std::sqrt(static_cast<double>(logs.size())));
  }
  out.processes = static_cast<int>(medians.size());
  if (medians.size() > 1) out.between = over_processes(medians, two_arms(ratios, medians.size())).sd;
  out.within = upper_median(std::move(errors));
  return out;
}

std::uint64_t side_seed(const sample_view& side, std::uint64_t hash) {
  hash = detail::fnv1a(side.samples.data(), side.samples.size_bytes(), hash);
  hash = detail::fnv1a(side.groups.data(), side.groups.size_bytes(), hash);
  return detail::fnv1a(side.arms.data(), side.arms.size_bytes(), hash);
}

// Both ends by selection over all values: the upper end only among those the lower end's selection left
// above it.
std::pair<double, double> interval_by_selection(std::vector<double>& values, double position_low,
                                                double position_high) {
  const double low = value_at_rank(values, position_low);
  const double high = value_at_rank(values, position_high, static_cast<std::size_t>(std::floor(position_low)));
  return {low, high};
}

// Posterior draws of a baseline are the same for every head compared with it (their seed comes from the
// baseline's own data), so the most recently used ones are kept: a service that judges many pull requests
// against one baseline, or `rnx compare` over many configurations of one, draws each baseline once.
class draws_cache {
 public:
  std::shared_ptr<const std::vector<double>> get(const sample_view& side, const comparison_options& opt,
                                                 std::uint64_t seed, bool flat) {
    {
      std::lock_guard lock(mutex_);
      if (auto kept = find(side, opt, seed, flat)) return kept;
    }
    // Drawn outside the lock: two threads may draw the same side at once, and both get the same numbers; the
    // one that comes second keeps the first one's entry.
    auto draws = std::make_shared<const std::vector<double>>(posterior_draws(side, opt, seed, flat));
    std::lock_guard lock(mutex_);
    if (auto kept = find(side, opt, seed, flat)) return kept;
    entry fresh{seed,
                opt.resamples,
                opt.stat,
                flat,
                {side.samples.begin(), side.samples.end()},
                {side.groups.begin(), side.groups.end()},
                draws,
                ++clock_};
    if (entries_.size() < capacity) {
      entries_.push_back(std::move(fresh));
    } else {
      *std::ranges::min_element(entries_, {}, &entry::used) = std::move(fresh);
    }
    return draws;
  }

 private:
  // The kept draws of this side, marked as just used; null when none are kept. Called under the lock.
  std::shared_ptr<const std::vector<double>> find(const sample_view& side, const comparison_options& opt,
                                                  std::uint64_t seed, bool flat) {
    for (auto& e : entries_) {
      if (e.seed == seed && e.resamples == opt.resamples && e.stat == opt.stat && e.flat == flat &&
          std::ranges::equal(e.samples, side.samples) && std::ranges::equal(e.groups, side.groups)) {
        e.used = ++clock_;
        return e.draws;
      }
    }
    return nullptr;
  }

  // 256 baselines' configurations of 2,000 draws: 4 MB.
  static constexpr std::size_t capacity = 256;
  struct entry {
    std::uint64_t seed;
    int resamples;
    statistic stat;
    bool flat;
    std::vector<double> samples;
    std::vector<std::int64_t> groups;
    std::shared_ptr<const std::vector<double>> draws;
    std::uint64_t used;
  };
  std::mutex mutex_;
  std::vector<entry> entries_;
  std::uint64_t clock_ = 0;
};

}  // namespace

std::pair<double, double> central_interval(std::vector<double>& values, double q) {
  const std::size_t n = values.size();
  if (n == 0) return {NAN, NAN};
  const double last = static_cast<double>(n - 1);
  const double position_low = q * last;
  const double position_high = (1 - q) * last;
  // The ends need the values at ranks floor(position) and the one after: the `need_low` smallest and the
  // `need_high` largest values.
  const auto rank_low = static_cast<std::size_t>(std::floor(position_low));
  const auto rank_high = static_cast<std::size_t>(std::floor(position_high));
  const std::size_t need_low = std::min(n, rank_low + 2);
  const std::size_t need_high = n - rank_high;
  if (n < 256 || need_low + need_high > n / 8) return interval_by_selection(values, position_low, position_high);

  // Thresholds from every 16th value, with room to spare, so that one pass keeps only the few values near each
  // end; when a threshold kept too few (an unlucky pilot), the selection over all values decides.
  std::vector<double> pilot;
  pilot.reserve(n / 16 + 1);
  for (std::size_t i = 0; i < n; i += 16) pilot.push_back(values[i]);
  std::sort(pilot.begin(), pilot.end());
  const std::size_t p = pilot.size();
  auto pilot_rank = [&](std::size_t need) { return std::min(p - 1, 2 * need * p / n + 4); };
  const double at_most = pilot[pilot_rank(need_low)];
  const double at_least = pilot[p - 1 - pilot_rank(need_high)];
  std::vector<double> low_end, high_end;
  low_end.reserve(4 * need_low + 64);
  high_end.reserve(4 * need_high + 64);
  for (double v : values) {
    if (v <= at_most) low_end.push_back(v);
    if (v >= at_least) high_end.push_back(v);
  }
  if (low_end.size() < need_low || high_end.size() < need_high) {
    return interval_by_selection(values, position_low, position_high);
  }
  // Every value of rank below need_low is in low_end at the same rank; every value of rank rank_high or above
  // is in high_end, shifted down by the n - high_end.size() values left out below it.
  const double low = value_at_rank(low_end, position_low);
  const double high = value_at_rank(high_end, position_high - static_cast<double>(n - high_end.size()));
  return {low, high};
}

std::optional<double> observed_statistic(const sample_view& side, statistic stat) {
  if (side.samples.empty()) return std::nullopt;
  auto processes = split_processes(side, false);
  if (processes.size() == 1) {
    const auto& v = processes.front().sorted;
    return stat == statistic::median ? median_of_sorted(v) : plain_mean(v);
  }
  std::vector<double> logs;
  for (const auto& p : processes) {
    const double s = stat == statistic::median ? median_of_sorted(p.sorted) : plain_mean(p.sorted);
    if (!(s > 0)) return std::nullopt;
    logs.push_back(std::log(s));
  }
  return std::exp(over_processes(logs, two_arms(side, processes.size())).centre);
}

std::vector<double> posterior_draws(const sample_view& side, const comparison_options& opt, std::uint64_t seed,
                                    bool flat) {
  const auto processes = split_processes(side, flat);
  xoshiro256 rng(seed);
  Eigen::VectorXd weights;
  std::vector<double> draws(static_cast<std::size_t>(opt.resamples));
  if (processes.size() == 1) {
    const auto& p = processes.front();
    const auto last = static_cast<std::int64_t>(p.sorted.size()) - 1;
    for (auto& d : draws) {
      d = opt.stat == statistic::median ? p.log_sorted[static_cast<std::size_t>(rng.binomial_half(last))]
                                        : std::log(std::max(bootstrap_statistic(p, opt.stat, rng, weights), 1e-300));
    }
    return draws;
  }
  // Two levels: each process's statistic is a Bayesian-bootstrap draw; across processes the log
  // statistics are treated as normal with unknown mean and spread (Jeffreys prior), whose posterior
  // for the mean is mean + sd/sqrt(k) * t(k-1). With 3-5 processes this keeps run-to-run drift from
  // looking like a change, where a Dirichlet over so few processes would not. Where the processes form two arms
  // (an in-process pair's load orders), the centre is the mean of the arms' means, its spread the pooled spread
  // within the arms, on k - 2 degrees of freedom. The t variates are the stratified set of student_t_strata in a
  // random order.
  const auto k = static_cast<int>(processes.size());
  const std::vector<int> arms = two_arms(side, processes.size());
  const auto strata = detail::student_t_strata(arms.empty() ? k - 1 : k - 2, opt.resamples);
  std::vector<std::uint32_t> order(draws.size());
  std::iota(order.begin(), order.end(), 0u);
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  std::vector<double> logs(static_cast<std::size_t>(k));
  for (std::size_t i = 0; i < draws.size(); ++i) {
    for (int j = 0; j < k; ++j) {
      const auto& p = processes[static_cast<std::size_t>(j)];
      double& l = logs[static_cast<std::size_t>(j)];
      if (opt.stat == statistic::median) {
        l = p.log_sorted[static_cast<std::size_t>(rng.binomial_half(static_cast<std::int64_t>(p.sorted.size()) - 1))];
      } else {
        l = std::log(std::max(bootstrap_statistic(p, opt.stat, rng, weights), 1e-300));
      }
    }
    const process_level level = over_processes(logs, arms);
    draws[i] = level.centre + level.se * (*strata)[order[i]];
  }
  return draws;
}

double decision_threshold(const comparison_options& opt) {
  return look_threshold(opt.probability, opt.look, opt.looks);
}

namespace {

// The ROPE decision over posterior draws of the log ratio (reordered): probabilities, interval, minimum
// detectable effect and the outcome; `out.ratio` is set by the caller.
void decide(comparison& out, std::vector<double>& log_ratios, const comparison_options& opt) {
  const double log_low = std::log(1 - opt.rope);
  const double log_high = std::log(1 + opt.rope);
  std::int64_t below = 0;
  std::int64_t above = 0;
  for (double l : log_ratios) {
    below += l < log_low;
    above += l > log_high;
  }
  const double total = static_cast<double>(log_ratios.size());
  out.threshold = decision_threshold(opt);
  out.p_faster = static_cast<double>(below) / total;
  out.p_slower = static_cast<double>(above) / total;
  // Counted, not 1 - p_faster - p_slower, whose rounding once printed -5.4e-17.
  out.p_equivalent =
      std::clamp(static_cast<double>(log_ratios.size() - static_cast<std::size_t>(below + above)) / total, 0.0, 1.0);
  const auto [log_lo, log_hi] = central_interval(log_ratios, 0.025);
  out.ci_lo = std::exp(log_lo);
  out.ci_hi = std::exp(log_hi);
  // A true slowdown d shifts the draws by log(1 + d) from where they are centred now; it is called slower once
  // their (1 - threshold) quantile passes log(1 + rope).
  const double centre = central_interval(log_ratios, 0.5).first;
  const double lower_tail = central_interval(log_ratios, std::min(1 - out.threshold, 0.5)).first;
  out.mde = std::max(opt.rope, (1 + opt.rope) * std::exp(centre - lower_tail) - 1);

  // The rule is one-sided: a slower needs the (1 - threshold) quantile of the ratio above 1 + rope, not the
  // two-sided interval. Where the shown 95% interval reaches into the band (or past 1.0) the decision looks
  // contradicted by it, so the reason shows the bound the rule used.
  // The bound is an order statistic of the draws, not an interpolated quantile, so that it agrees exactly with the
  // counted probability: P(ratio > edge) >= threshold exactly when the `need`-th largest draw lies above the edge.
  const auto n = static_cast<std::int64_t>(log_ratios.size());
  auto need = static_cast<std::int64_t>(std::ceil(out.threshold * static_cast<double>(n) - 1e-9));
  while (need > 1 && static_cast<double>(need - 1) / total >= out.threshold) --need;
  while (need < n && static_cast<double>(need) / total < out.threshold) ++need;
  auto order_statistic = [&](std::int64_t index) {
    std::nth_element(log_ratios.begin(), log_ratios.begin() + index, log_ratios.end());
    return std::exp(log_ratios[static_cast<std::size_t>(index)]);
  };
  auto one_sided = [&](const char* side, double edge, double p, double quantile_at, double bound, const char* end,
                       double interval_end) {
    char text[320];
    std::snprintf(text, sizeof text,
                  "one-sided rule: P(ratio %s %.3f) = %.3f >= %.4g, so the ratio's %.4g%% quantile %.3f is %s %.3f; "
                  "the two-sided 95%% interval shown (%s end %.3f) is not what decides",
                  side, edge, p, out.threshold, 100 * quantile_at, bound, *side == '>' ? "above" : "below", edge, end,
                  interval_end);
    out.reason = text;
  };
  if (*out.p_slower >= out.threshold) {
    out.result = decision::slower;
    if (*out.ci_lo <= 1 + opt.rope) {
      one_sided(">", 1 + opt.rope, *out.p_slower, 1 - out.threshold, order_statistic(n - need), "low", *out.ci_lo);
    }
  } else if (*out.p_faster >= out.threshold) {
    out.result = decision::faster;
    if (*out.ci_hi >= 1 - opt.rope) {
      one_sided("<", 1 - opt.rope, *out.p_faster, out.threshold, order_statistic(need - 1), "high", *out.ci_hi);
    }
  } else if (*out.p_equivalent >= out.threshold) {
    out.result = decision::equivalent;
  } else {
    std::ostringstream why;
    why.precision(2);
    // With several looks the threshold is not the policy's probability; the verdict's rule line says so once, and
    // a second number here would read as a contradiction of it.
    why << std::fixed << "no outcome reaches ";
    if (opt.looks > 1) {
      why << "the threshold of each look (see the rule)";
    } else {
      why << out.threshold;
    }
    why << ": P(faster)=" << *out.p_faster << " P(equivalent)=" << *out.p_equivalent << " P(slower)=" << *out.p_slower;
    out.reason = why.str();
  }
}

// What would decide an abstain between separate runs. rnx bench measures paired; an imported harness's results
// cannot be, so its advice is more of the harness's own samples, or both revisions run by it on one machine.
std::string abstain_advice(const comparison_options& opt, bool why_paired) {
  std::string more_samples;  // the harness's own flag for more samples a process
  switch (opt.harness.value_or(runtime_kind::eager)) {
    case runtime_kind::gbench: more_samples = "--benchmark_repetitions"; break;
    case runtime_kind::pytest_benchmark: more_samples = "--benchmark-min-rounds"; break;
    case runtime_kind::nvbench: more_samples = "--min-samples"; break;
    default:
      if (opt.paired_by_process) {
        return "more processes (raise max_processes in [bench] of rnx.toml), or what kept this pair from sharing its "
               "processes fixed (the reason below)";
      }
      return std::string("measure paired (rnx bench --pair BASE, rnx gate --mode paired)") +
             (why_paired ? ", where drift of the machine cancels in each ratio" : "");
  }
  return "more runs of the harness (each file rnx import reads is one process) with a higher " + more_samples +
         ", or the harness run on both revisions in one job on one machine, alternating, and the two imports "
         "compared with rnx compare (docs/import.md)";
}

}  // namespace

std::string unstable_line(std::string_view reason) {
  constexpr std::string_view prefix = "unstable: ";
  if (reason.substr(0, prefix.size()) == prefix) reason.remove_prefix(prefix.size());
  return std::string(reason.substr(0, std::min(reason.find(" ["), reason.find('\n'))));
}

comparison compare_samples(const sample_view& base, const sample_view& head, const comparison_options& opt, bool flat) {
  comparison out;
  out.threshold = decision_threshold(opt);
  out.n_base = static_cast<std::int64_t>(base.samples.size());
  out.n_head = static_cast<std::int64_t>(head.samples.size());
  if (out.reason = sides_problem(base, head, opt); !out.reason.empty()) return out;
  out.base_stat = observed_statistic(base, opt.stat);
  out.head_stat = observed_statistic(head, opt.stat);
  if (!out.base_stat || !(*out.base_stat > 0) || !out.head_stat) {
    out.reason = "the base statistic is zero: the kernel is too fast to time, so no ratio exists";
    return out;
  }
  out.ratio = *out.head_stat / *out.base_stat;

  // The base's seed comes from its own data, so its draws can be reused for every head; the head's from both
  // sides, so that identical data on the two sides still gets independent draws.
  static draws_cache base_cache;
  const std::uint64_t base_seed = side_seed(base, detail::fnv1a(&opt.resamples, sizeof opt.resamples));
  const auto base_draws_kept = base_cache.get(base, opt, base_seed, flat);
  const auto& base_draws = *base_draws_kept;
  const auto head_draws = posterior_draws(head, opt, side_seed(head, base_seed) ^ 0x5851f42d4c957f2dULL, flat);
  // Draws are log statistics, so the log ratio is a difference and no exp() is needed per draw.
  std::vector<double> log_ratios(base_draws.size());
  for (std::size_t i = 0; i < log_ratios.size(); ++i) log_ratios[i] = head_draws[i] - base_draws[i];
  decide(out, log_ratios, opt);

  if (base.unstable || head.unstable) {
    // Bimodal or drifting samples widen what a change must beat, but a change far beyond them still decides:
    // the head's 5-95% range must lie wholly beyond the base's, by more than the rope.
    const char* name = base.unstable ? "base" : "head";
    // The reason's first part: without the runner's own "unstable: " and the list of what each process went through
    // (" [process 1: ...]"), which the run document keeps and the pages fold away.
    const std::string why = unstable_line(base.unstable ? base.unstable_reason : head.unstable_reason);
    const std::vector<double> head_values(head.samples.begin(), head.samples.end());
    const std::vector<double> base_values(base.samples.begin(), base.samples.end());
    const double head_low = quantile(head_values, 0.05), head_high = quantile(head_values, 0.95);
    const double base_low = quantile(base_values, 0.05), base_high = quantile(base_values, 0.95);
    const bool beyond = (out.result == decision::slower && head_low > base_high * (1 + opt.rope)) ||
                        (out.result == decision::faster && head_high < base_low * (1 - opt.rope));
    std::ostringstream note;
    note.precision(4);
    note << name << " is unstable" << (why.empty() ? "" : " (" + why + ")") << "; head 5-95% [" << head_low << ", "
         << head_high << "] vs base [" << base_low << ", " << base_high << "]";
    if (beyond) {
      out.reason = note.str() + ": the change is larger than the instability" +
                   (out.reason.empty() ? std::string() : "; " + out.reason);
    } else {
      out.result = decision::abstain;
      out.reason = note.str() +
                   " overlap beyond the rope, so the change is not larger than the instability; to decide: " +
                   abstain_advice(opt, false);
    }
  } else if (out.result == decision::abstain) {
    out.reason += "; to decide: " + abstain_advice(opt, true);
  }
  return out;
}

bool longer_processes_help(const process_spread& spread) {
  return !(spread.processes > 1 && spread.between > 2 * spread.within);
}

comparison compare_paired(const paired_view& pair, const comparison_options& opt) {
  comparison out;
  out.n_base = static_cast<std::int64_t>(pair.base.size());
  out.n_head = static_cast<std::int64_t>(pair.head.size());
  out.threshold = decision_threshold(opt);
  const sample_view base{pair.base, pair.groups};
  const sample_view head{pair.head, pair.groups};
  if (out.reason = sides_problem(base, head, opt); !out.reason.empty()) return out;
  if (pair.block < 1) {
    out.reason = "invalid options: the block size must be positive";
    return out;
  }
  std::vector<std::int64_t> groups(pair.groups.begin(), pair.groups.end());
  if (groups.empty()) groups.push_back(out.n_base);
  if (out.n_base != out.n_head ||
      std::any_of(groups.begin(), groups.end(), [&](std::int64_t g) { return g % pair.block != 0; })) {
    out.reason = "paired samples do not form whole blocks of " + std::to_string(pair.block) + " on both sides";
    return out;
  }
  // One ratio per block: the sums over the block's samples, so an ABBA block cancels a linear drift in it.
  std::vector<double> ratios;
  std::vector<std::int64_t> ratio_groups;
  std::size_t offset = 0;
  for (auto g : groups) {
    for (std::int64_t b = 0; b < g / pair.block; ++b) {
      double base_sum = 0, head_sum = 0;
      for (std::int64_t i = 0; i < pair.block; ++i, ++offset) {
        base_sum += pair.base[offset];
        head_sum += pair.head[offset];
      }
      if (!(base_sum > 0)) {
        out.reason = "a base block measured zero time: the kernel is too fast to time, so no ratio exists";
        return out;
      }
      ratios.push_back(head_sum / base_sum);
    }
    ratio_groups.push_back(g / pair.block);
  }
  const sample_view ratio_view{
      ratios,
      groups.size() > 1 ? std::span<const std::int64_t>(ratio_groups) : std::span<const std::int64_t>(),
      false,
      {},
      groups.size() > 1 ? pair.arms : std::span<const int>()};
  out.base_stat = observed_statistic(base, opt.stat);
  out.head_stat = observed_statistic(head, opt.stat);
  out.ratio = observed_statistic(ratio_view, opt.stat);
  comparison_options ratio_opt = opt;
  ratio_opt.min_samples = 1;
  const std::uint64_t seed = side_seed(ratio_view, detail::fnv1a(&opt.resamples, sizeof opt.resamples));
  std::vector<double> log_ratios = posterior_draws(ratio_view, ratio_opt, seed);
  decide(out, log_ratios, opt);
  const process_spread spread = spread_of(ratio_view);
  out.spread = spread;
  // The self-check of the pairing: identical processes of a pair should agree to within what each one's own noise
  // explains. Where they differ by more than the band and four times that noise, something that differs between
  // processes and not between the sides inside one is in the ratio; the verdict's second level counts it (so the
  // interval is wide), and the reason says so, whatever the decision.
  const bool decided = out.result == decision::slower || out.result == decision::faster;
  if (spread.processes > 1 && spread.between > opt.rope && spread.between > 4 * spread.within) {
    std::ostringstream note;
    note.precision(2);
    // A decided change comes first: a large slowdown whose processes disagree about its size is still a slowdown,
    // and must not read as a glitch.
    note << std::fixed
         << (decided ? "; the processes agree on the direction but disagree about the size"
                     : "; the processes disagree")
         << " (their ratios spread by " << 100 * spread.between << "% against " << 100 * spread.within
         << "% within one): something that differs between worker processes and is not cancelled inside one (where "
            "buffers landed, what the cache held, the launch path) moves the ratio";
    out.process_note = note.str();
  }
  if (out.result == decision::abstain) {
    std::ostringstream advice;
    advice.precision(2);
    advice << std::fixed << "; to decide: ";
    if (out.ci_lo && out.ci_hi && *out.mde < 2 * opt.rope && (*out.ci_lo<1 + opt.rope&& * out.ci_hi> 1 + opt.rope)) {
      advice << "the change sits on the edge of the +" << 100 * opt.rope << "% band; ";
    }
    if (!longer_processes_help(spread)) {
      advice << "more processes (processes differ by " << 100 * spread.between << "% against " << 100 * spread.within
             << "% within one: raise max_processes in [bench] of rnx.toml)";
    } else {
      advice << "a longer budget per process (each process's ratio is uncertain by " << 100 * spread.within
             << "%: raise budget_ms in [bench] of rnx.toml, and total_budget_s, which caps the later looks)";
    }
    out.reason += advice.str();
  }
  if (decided && !out.process_note.empty() && out.ratio) {
    std::ostringstream lead;
    lead << std::fixed << std::setprecision(3) << to_string(out.result) << ": ratio " << *out.ratio << " ("
         << std::showpos << std::setprecision(1) << 100 * (*out.ratio - 1) << std::noshowpos << "%), 95% interval ["
         << std::setprecision(3) << out.ci_lo.value_or(NAN) << ", " << out.ci_hi.value_or(NAN) << "]";
    out.reason = lead.str() + (out.reason.empty() ? "" : "; " + out.reason);
  }
  out.reason += out.reason.empty() && !out.process_note.empty() ? out.process_note.substr(2) : out.process_note;
  return out;
}

}  // namespace rnx::stats
