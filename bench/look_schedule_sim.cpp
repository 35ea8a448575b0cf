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
// Processes 1-3 take 25 blocks a side; each later one doubles the per-process budget while the configuration's
// total budget lasts (manifest defaults: budget_ms 1500, total_budget_s 20, so 25, 25, 25, 50, 41 and the
// 8-sample minimum: 2 blocks). Looks as the runner takes them: an in-process pair after 4 and 6 processes (looks 2
// and 4 of the 4 that processes 3..6 give), a pair by process after 3, 4, 5 and 6 (looks 1 to 4).
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

// The blocks a side of processes 1..6 under the CPU defaults (see the top of the file).
std::vector<int> process_blocks() {
  const double base = 1.5, share = 20.0 / 2;  // seconds a side: per process, and in all
  const double blocks_per_second = 25 / base;
  std::vector<int> out;
  double spent = 0;
  for (int r = 0; r < 6; ++r) {
    const double left = share - spent;
    const double budget = r < 3 ? std::min(base, left / (3 - r)) : std::min(base * std::ldexp(1.0, r - 2), left);
    spent += budget;
    out.push_back(std::max(2, static_cast<int>(std::lround(blocks_per_second * budget))));
  }
  return out;
}

struct tally {
  int slower = 0, faster = 0, equivalent = 0, abstain = 0;
  long processes = 0;
  void add(decision d, int used) {
    slower += d == decision::slower;
    faster += d == decision::faster;
    equivalent += d == decision::equivalent;
    abstain += d == decision::abstain;
    processes += used;
  }
};

// One sequential run under one rule: the first decided look stops it; the last look is the verdict.
// `threshold_of(look)` is the probability look `look` (1..4) needs.
template <class Threshold>
void run_schedule(const paired_samples& all, const std::vector<int>& blocks, const std::vector<int>& look_after,
                  Threshold threshold_of, const stats::comparison_options& policy, tally& t) {
  for (std::size_t i = 0; i < look_after.size(); ++i) {
    const int processes = look_after[i];
    std::size_t n = 0;
    for (int p = 0; p < processes; ++p) n += static_cast<std::size_t>(4 * blocks[static_cast<std::size_t>(p)]);
    stats::comparison_options opt = policy;
    opt.probability = threshold_of(4 - (6 - processes));  // looks 1..4 for processes 3..6
    opt.looks = 1;
    const stats::paired_view view{
        {all.base.data(), n}, {all.head.data(), n}, {all.groups.data(), static_cast<std::size_t>(processes)}, 4};
    const stats::comparison c = stats::compare_paired(view, opt);
    if (c.result != decision::abstain || i + 1 == look_after.size()) {
      t.add(c.result, processes);
      return;
    }
  }
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
  const std::vector<int> blocks = process_blocks();
  std::printf(
      "thresholds of looks 1-4: split %.4f each; alpha spending %.5f %.5f %.5f %.5f. blocks a side per "
      "process: %d %d %d %d %d %d. %d runs a row\n\n",
      split, spending[0], spending[1], spending[2], spending[3], blocks[0], blocks[1], blocks[2], blocks[3], blocks[4],
      blocks[5], runs);
  std::printf("| true ratio | layout sd | pairing | rule | slower | faster | equivalent | abstain | processes |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  const double edge = policy.rope;
  for (const double ratio : {1.0, 1 + edge, 1 - edge, 1.05}) {
    for (const double layout_sd : {0.002, 0.005, 0.01}) {
      for (const bool in_process : {true, false}) {
        const std::vector<int> look_after = in_process ? std::vector<int>{4, 6} : std::vector<int>{3, 4, 5, 6};
        std::mt19937_64 rng(seed + static_cast<std::uint64_t>(1e6 * ratio + 1e4 * layout_sd) + in_process);
        tally old_rule, new_rule;
        for (int r = 0; r < runs; ++r) {
          paired_samples s;
          for (int p = 0; p < 6; ++p) add_process(s, rng, blocks[static_cast<std::size_t>(p)], ratio, layout_sd);
          run_schedule(
              s, blocks, look_after, [&](int) { return split; }, policy, old_rule);
          run_schedule(
              s, blocks, look_after, [&](int look) { return spending[static_cast<std::size_t>(look - 1)]; }, policy,
              new_rule);
        }
        for (const auto& [name, t] :
             {std::pair<const char*, const tally&>{"split", old_rule}, {"spending", new_rule}}) {
          std::printf("| %.2f | %.1f%% | %s | %s | %.4f | %.4f | %.4f | %.4f | %.2f |\n", ratio, 100 * layout_sd,
                      in_process ? "in-process" : "by process", name, t.slower / double(runs), t.faster / double(runs),
                      t.equivalent / double(runs), t.abstain / double(runs), t.processes / double(runs));
        }
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
