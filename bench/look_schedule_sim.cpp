// The error rates of the sequential looks of a paired run, under the split threshold (Bonferroni over the looks) and
// the alpha-spending schedule (rnx::stats::look_thresholds), on simulated in-process paired runs of the runner's
// CPU defaults. Both rules see the same simulated processes (common random numbers).
//
// Usage: look_schedule_sim [--runs N] [--seed S] [--probability P] [--rope R]
// stdout: a markdown table, one row per scenario and rule (docs/statistics.md shows it).
//
// A process of a paired run: blocks of four samples a side. The machine's speed in the process (25% between
// processes) and a random walk within it (0.2% a sample) hit both sides alike; `layout` is what differs between
// processes in the ratio itself; every sample has 2% noise of its own (the model of tests/stats/test_paired.cpp).
// A process takes 25 blocks a side (budget_ms 1500) times the run's budget factor, within the configuration's total
// budget (total_budget_s 20: 10 s a side); the factor doubles at a look that leaves the pair undecided where a longer
// process would tell more than another one (rnx::stats::longer_processes_help), as the runner does. Looks as the
// runner takes them: an in-process pair after 4 and 6 processes (looks 2 and 4 of the 4 that processes 3..6 give), a
// pair by process after 3, 4, 5 and 6 (looks 1 to 4). Process p of run r draws from a generator of its own, so both
// rules see the same processes (common random numbers) however long each rule's schedule makes them.
#include "rnx/stats/look_schedule.hpp"
#include "rnx/stats/posterior.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using rnx::decision;
namespace stats = rnx::stats;

struct paired_samples {
  std::vector<double> base;
  std::vector<double> head;
  std::vector<std::int64_t> groups;
};

void add_process(paired_samples& s, std::mt19937_64& rng, int blocks, double true_ratio, double layout_sd) {
  std::normal_distribution<double> machine(0.0, 0.25);
  std::normal_distribution<double> layout(0.0, layout_sd);
  std::normal_distribution<double> noise(0.0, 0.02);
  std::normal_distribution<double> step(0.0, 0.002);
  const double speed = std::exp(machine(rng));
  const double ratio = true_ratio * std::exp(layout(rng));
  double wander = 0;
  for (int b = 0; b < blocks; ++b) {
    for (int i = 0; i < 4; ++i) {
      wander += step(rng);
      s.base.push_back(speed * std::exp(wander) * std::exp(noise(rng)));
      wander += step(rng);
      s.head.push_back(speed * std::exp(wander) * ratio * std::exp(noise(rng)));
    }
  }
  s.groups.push_back(4 * blocks);
}

struct tally {
  int slower = 0, faster = 0, equivalent = 0, abstain = 0;
  long processes = 0;
  long blocks = 0;
  void add(decision d, int used, int used_blocks) {
    slower += d == decision::slower;
    faster += d == decision::faster;
    equivalent += d == decision::equivalent;
    abstain += d == decision::abstain;
    processes += used;
    blocks += used_blocks;
  }
};

// One simulated configuration: its true ratio, its layout spread and the seed its processes draw from.
struct path {
  std::uint64_t seed = 0;
  double ratio = 1;
  double layout_sd = 0;
};

stats::comparison compare(const paired_samples& s, stats::comparison_options opt) {
  opt.looks = 1;
  const stats::paired_view view{s.base, s.head, s.groups, 4};
  return stats::compare_paired(view, opt);
}

// One sequential run under one rule: processes are added as the runner adds them, the first decided look stops it,
// and the last look (or the last process the total budget allows) is the verdict. `threshold_of(look)` is the
// probability look `look` (1..4) needs.
template <class Threshold>
void run_schedule(const path& run, const std::vector<int>& look_after, Threshold threshold_of,
                  const stats::comparison_options& policy, tally& t, bool double_always = false) {
  constexpr double base = 1.5, share = 20.0 / 2, blocks_per_second = 25 / base;  // seconds a side
  paired_samples s;
  double factor = 1, spent = 0;
  int blocks_used = 0;
  std::size_t look = 0;
  for (int p = 0; p < 6; ++p) {
    const double left = share - spent;
    if (p >= 3 && left < 0.25 * base) break;  // no further process: the verdict is on what was measured
    // double_always: the rule before, every process after the third twice the one before, whatever a look found.
    const double grown = double_always ? std::ldexp(1.0, p - 2) : factor;
    const double budget = p < 3 ? std::min(base, left / (3 - p)) : std::min(base * grown, left);
    spent += budget;
    const int blocks = std::max(2, static_cast<int>(std::lround(blocks_per_second * budget)));
    std::mt19937_64 rng(run.seed * 1000003ULL + static_cast<std::uint64_t>(p));
    add_process(s, rng, blocks, run.ratio, run.layout_sd);
    blocks_used += blocks;
    if (look >= look_after.size() || p + 1 != look_after[look]) continue;
    stats::comparison_options opt = policy;
    opt.probability = threshold_of(4 - (6 - (p + 1)));  // looks 1..4 for processes 3..6
    const stats::comparison c = compare(s, opt);
    if (c.result != decision::abstain || ++look == look_after.size()) {
      t.add(c.result, p + 1, blocks_used);
      return;
    }
    if (!c.spread || stats::longer_processes_help(*c.spread)) factor *= 2;
  }
  stats::comparison_options opt = policy;
  opt.probability = threshold_of(4);
  t.add(compare(s, opt).result, static_cast<int>(s.groups.size()), blocks_used);
}

double number_after(int& i, int argc, char** argv) {
  if (i + 1 >= argc) throw std::invalid_argument(std::string(argv[i]) + " needs a value");
  return std::stod(argv[++i]);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 2000;
  std::uint64_t seed = 4646;
  stats::comparison_options policy;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--runs")
        runs = static_cast<int>(number_after(i, argc, argv));
      else if (a == "--seed")
        seed = static_cast<std::uint64_t>(number_after(i, argc, argv));
      else if (a == "--probability")
        policy.probability = number_after(i, argc, argv);
      else if (a == "--rope")
        policy.rope = number_after(i, argc, argv);
      else
        throw std::invalid_argument("unknown argument " + a + " (--runs N, --seed S, --probability P, --rope R)");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "look_schedule_sim: %s\n", e.what());
    return 2;
  }
  const std::vector<double> spending = stats::look_thresholds(policy.probability, 4);
  const double split = 1 - (1 - policy.probability) / 4;
  std::printf(
      "thresholds of looks 1-4: split %.4f each; alpha spending %.5f %.5f %.5f %.5f. %d runs a row; blocks: the mean "
      "blocks a side over a run's processes\n\n",
      split, spending[0], spending[1], spending[2], spending[3], runs);
  std::printf(
      "| true ratio | layout sd | pairing | rule | slower | faster | equivalent | abstain | processes | blocks |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  const double edge = policy.rope;
  for (const double ratio : {1.0, 1 + edge, 1 - edge, 1.05}) {
    for (const double layout_sd : {0.002, 0.005, 0.01}) {
      for (const bool in_process : {true, false}) {
        const std::vector<int> look_after = in_process ? std::vector<int>{4, 6} : std::vector<int>{3, 4, 5, 6};
        const std::uint64_t row = seed + static_cast<std::uint64_t>(1e6 * ratio + 1e4 * layout_sd) + in_process;
        tally old_rule, new_rule, new_rule_doubled;
        for (int r = 0; r < runs; ++r) {
          const path run{row * 100003ULL + static_cast<std::uint64_t>(r), ratio, layout_sd};
          run_schedule(
              run, look_after, [&](int) { return split; }, policy, old_rule);
          run_schedule(
              run, look_after, [&](int look) { return spending[static_cast<std::size_t>(look - 1)]; }, policy,
              new_rule);
          run_schedule(
              run, look_after, [&](int look) { return spending[static_cast<std::size_t>(look - 1)]; }, policy,
              new_rule_doubled, true);
        }
        for (const auto& [name, t] : {std::pair<const char*, const tally&>{"split", old_rule},
                                      {"spending", new_rule},
                                      {"spending, budget doubled every process", new_rule_doubled}}) {
          std::printf("| %.2f | %.1f%% | %s | %s | %.4f | %.4f | %.4f | %.4f | %.2f | %.0f |\n", ratio, 100 * layout_sd,
                      in_process ? "in-process" : "by process", name, t.slower / double(runs), t.faster / double(runs),
                      t.equivalent / double(runs), t.abstain / double(runs), t.processes / double(runs),
                      t.blocks / double(runs));
        }
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
