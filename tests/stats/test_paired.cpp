// The paired-ratio posterior (rnx::stats::compare_paired): calibration under drift and under the sequential
// schedule's optional stopping, detection, the minimum detectable effect, and bad input.
#include "rnx/stats/look_schedule.hpp"
#include "rnx/stats/posterior.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

using rnx::decision;
using namespace rnx::stats;

namespace {

// One process of an in-process paired measurement: `blocks` blocks of four samples a side. The machine's speed
// in this process (`machine`) and a random walk within it (0.2% a sample) hit both sides alike; `layout` is what
// differs between processes in the ratio itself (where each side's memory landed); every sample has 2% noise of
// its own. (On the 2-core machine a process takes 100-400 samples a side of 1-2% spread: bench/decisive.py.)
struct paired_samples {
  std::vector<double> base;
  std::vector<double> head;
  std::vector<std::int64_t> groups;
};

void add_process(paired_samples& s, std::mt19937_64& rng, int blocks, double true_ratio, double layout_sd) {
  std::normal_distribution<double> machine(0.0, 0.25);  // processes 25% apart, as on a shared 2-core runner
  std::normal_distribution<double> layout(0.0, layout_sd);
  std::normal_distribution<double> noise(0.0, 0.02);
  std::normal_distribution<double> step(0.0, 0.002);
  const double speed = std::exp(machine(rng));
  const double ratio = true_ratio * std::exp(layout(rng));
  double wander = 0;
  for (int b = 0; b < blocks; ++b) {
    for (int i = 0; i < 4; ++i) {
      wander += step(rng);
      const double now = speed * std::exp(wander);
      s.base.push_back(now * std::exp(noise(rng)));
      wander += step(rng);
      s.head.push_back(std::exp(wander) * speed * ratio * std::exp(noise(rng)));
    }
  }
  s.groups.push_back(std::int64_t{4} * blocks);
}

// The sequential schedule of a paired run: 3 processes, then one more per look up to 6, stopping at the first
// decided look; each look needs its threshold of the alpha-spending schedule over the four looks.
comparison sequential(std::mt19937_64& rng, double true_ratio, double layout_sd, int looks, int* processes_used) {
  paired_samples s;
  comparison_options opt;
  opt.looks = looks;
  comparison c;
  for (int k = 1; k <= 6; ++k) {
    add_process(s, rng, 25, true_ratio, layout_sd);
    if (k < 3) continue;
    opt.look = k - 2;
    c = compare_paired({s.base, s.head, s.groups, 4}, opt);
    if (processes_used) *processes_used = k;
    if (c.result != decision::abstain) break;
  }
  return c;
}

}  // namespace

TEST_CASE("paired calibration under drift and optional stopping: identical code, 1000 sequential runs") {
  // A 25% machine drift between processes and a wander within each cancel in every block's ratio; what is left
  // between processes (0.2%, 0.5%, 1%) is the Student-t level's to carry. Stopping at the first decided of four looks
  // with the alpha-spending schedule's thresholds keeps the false calls under 1%.
  for (const double layout_sd : {0.002, 0.005, 0.01}) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(9100 + 1000 * layout_sd));
    const int runs = 1000;
    int slower = 0, faster = 0, equivalent = 0, early = 0;
    int unsplit_slower = 0, unsplit_faster = 0;
    for (int i = 0; i < runs; ++i) {
      int used = 0;
      const comparison c = sequential(rng, 1.0, layout_sd, 4, &used);
      slower += c.result == decision::slower;
      faster += c.result == decision::faster;
      equivalent += c.result == decision::equivalent;
      early += used < 6;
      // The same schedule without a schedule, for contrast: every look at the plain 0.95.
      const comparison u = sequential(rng, 1.0, layout_sd, 1, nullptr);
      unsplit_slower += u.result == decision::slower;
      unsplit_faster += u.result == decision::faster;
    }
    std::printf(
        "paired A/A, process layout sd %.1f%%: slower %.3f faster %.3f equivalent %.3f, stopped before the "
        "last look %.3f | every look at 0.95: slower %.3f faster %.3f\n",
        100 * layout_sd, slower / double(runs), faster / double(runs), equivalent / double(runs), early / double(runs),
        unsplit_slower / double(runs), unsplit_faster / double(runs));
    CHECK(slower <= runs / 100);
    CHECK(faster <= runs / 100);
    if (layout_sd <= 0.005) CHECK(equivalent >= runs * 9 / 10);
  }
}

TEST_CASE("paired detection: a 5% slowdown is called slower through the same drift") {
  std::mt19937_64 rng(9200);
  const int runs = 300;
  int slower = 0, stopped_first = 0;
  for (int i = 0; i < runs; ++i) {
    int used = 0;
    slower += sequential(rng, 1.05, 0.005, 4, &used).result == decision::slower;
    stopped_first += used == 3;
  }
  std::printf("paired 5%% slowdown: slower %.3f, decided at the first look %.3f\n", slower / double(runs),
              stopped_first / double(runs));
  CHECK(slower >= runs * 95 / 100);
}

TEST_CASE("paired ratios cancel drift the sides share, where separate samples could not decide") {
  // Process speeds 1.0, 1.3 and 0.8: unpaired, the two-level posterior over such processes is wide; paired, each
  // block's ratio is unaffected.
  paired_samples s;
  std::mt19937_64 rng(9300);
  std::normal_distribution<double> noise(0.0, 0.01);
  for (const double speed : {1.0, 1.3, 0.8}) {
    for (int i = 0; i < 40; ++i) {
      s.base.push_back(speed * std::exp(noise(rng)));
      s.head.push_back(speed * std::exp(noise(rng)));
    }
    s.groups.push_back(40);
  }
  const comparison paired = compare_paired({s.base, s.head, s.groups, 4}, {});
  CHECK(paired.result == decision::equivalent);
  REQUIRE(paired.ratio.has_value());
  CHECK(std::fabs(*paired.ratio - 1) < 0.01);
  // Unpaired, the head's processes in another order of speeds: no decision.
  std::vector<double> shuffled(s.head.begin() + 40, s.head.end());
  shuffled.insert(shuffled.end(), s.head.begin(), s.head.begin() + 40);
  const comparison unpaired = compare_samples({s.base, s.groups}, {shuffled, s.groups}, {});
  CHECK(unpaired.result == decision::abstain);
  CHECK(unpaired.reason.find("to decide: measure paired") != std::string::npos);
}

TEST_CASE("minimum detectable effect: at least the rope, larger for noisier ratios, in every comparison") {
  std::mt19937_64 rng(9400);
  paired_samples quiet, noisy;
  for (int p = 0; p < 4; ++p) {
    add_process(quiet, rng, 25, 1.0, 0.001);
    add_process(noisy, rng, 25, 1.0, 0.04);
  }
  const comparison q = compare_paired({quiet.base, quiet.head, quiet.groups, 4}, {});
  const comparison n = compare_paired({noisy.base, noisy.head, noisy.groups, 4}, {});
  REQUIRE(q.mde.has_value());
  REQUIRE(n.mde.has_value());
  CHECK(*q.mde >= 0.02);
  CHECK(*n.mde > *q.mde);
  // An abstain says what would decide it.
  CHECK(n.result == decision::abstain);
  CHECK(n.reason.find("; to decide: ") != std::string::npos);
  INFO(n.reason);
  CHECK(n.reason.find("more processes") != std::string::npos);
  // The last look's threshold of the schedule is the one reported and applied.
  comparison_options four_looks;
  four_looks.looks = 4;
  const double last = look_threshold(0.95, 4, 4);
  CHECK(decision_threshold(four_looks) == doctest::Approx(last));
  CHECK(compare_paired({quiet.base, quiet.head, quiet.groups, 4}, four_looks).threshold == doctest::Approx(last));
  four_looks.look = 1;
  CHECK(compare_paired({quiet.base, quiet.head, quiet.groups, 4}, four_looks).threshold ==
        doctest::Approx(look_threshold(0.95, 1, 4)));
}

TEST_CASE("the load orders as two arms: their difference is no noise, the error rate holds, a change is still seen") {
  // The side loaded first in a process runs a little slower or faster (where its memory landed): processes
  // alternate the order, so the ratio is 1 - shift with the base first and 1 + shift with the head first. Counted
  // as noise between processes it widens every interval; as the two arms of the design it cancels in their mean.
  auto run = [](std::mt19937_64& rng, double true_ratio, double shift, bool with_arms, int looks) {
    paired_samples s;
    std::vector<int> arms;
    comparison_options opt;
    opt.looks = looks;
    comparison c;
    for (int k = 1; k <= 6; ++k) {
      const int head_first = k % 2 == 0 ? 1 : 0;
      add_process(s, rng, 25, true_ratio * (head_first ? 1 + shift : 1 - shift), 0.003);
      arms.push_back(head_first);
      if (k < 4 || k % 2 == 1) continue;  // an in-process pair looks after an even number of processes
      opt.look = looks == 1 ? 0 : k / 2 - 1;
      c = compare_paired({s.base, s.head, s.groups, 4, with_arms ? std::span<const int>(arms) : std::span<const int>()},
                         opt);
      if (c.result != decision::abstain) break;
    }
    return c;
  };
  std::mt19937_64 rng(9500);
  const int runs = 300;
  int equivalent_arms = 0, equivalent_one = 0, false_arms = 0, slower_arms = 0;
  for (int i = 0; i < runs; ++i) {
    const comparison a = run(rng, 1.0, 0.015, true, 2);
    const comparison o = run(rng, 1.0, 0.015, false, 2);
    equivalent_arms += a.result == decision::equivalent;
    false_arms += a.result == decision::slower || a.result == decision::faster;
    equivalent_one += o.result == decision::equivalent;
    slower_arms += run(rng, 1.05, 0.015, true, 2).result == decision::slower;
  }
  std::printf(
      "load orders 3%% apart, looks at 4 and 6 processes: equivalent %.3f as two arms, %.3f as one; false calls %.3f; "
      "a 5%% slowdown slower %.3f\n",
      equivalent_arms / double(runs), equivalent_one / double(runs), false_arms / double(runs),
      slower_arms / double(runs));
  CHECK(equivalent_arms >= runs * 9 / 10);
  CHECK(equivalent_one < equivalent_arms);
  CHECK(false_arms <= runs / 100);
  CHECK(slower_arms >= runs * 95 / 100);

  // The centre weighs the two arms alike: four processes of one order and three of the other give the mean of the
  // two orders' ratios, not a mean pulled toward the larger arm.
  paired_samples s;
  std::vector<int> arms;
  for (int k = 0; k < 7; ++k) {
    const int head_first = k < 4 ? 0 : 1;
    for (int i = 0; i < 8; ++i) {
      s.base.push_back(1.0);
      s.head.push_back(head_first ? 1.02 : 0.98);
    }
    s.groups.push_back(8);
    arms.push_back(head_first);
  }
  comparison_options few;
  few.min_samples = 8;
  const comparison balanced = compare_paired({s.base, s.head, s.groups, 4, arms}, few);
  REQUIRE(balanced.ratio.has_value());
  CHECK(*balanced.ratio == doctest::Approx(std::sqrt(0.98 * 1.02)).epsilon(1e-9));
  const comparison pooled = compare_paired({s.base, s.head, s.groups, 4}, few);
  REQUIRE(pooled.ratio.has_value());
  CHECK(*pooled.ratio == doctest::Approx(std::exp((4 * std::log(0.98) + 3 * std::log(1.02)) / 7)).epsilon(1e-9));
  // An order with fewer than three processes is no arm: the processes are judged as one group, as without arms.
  const std::vector<int> lopsided = {0, 0, 0, 0, 0, 1, 1};
  const comparison one = compare_paired({s.base, s.head, s.groups, 4, lopsided}, few);
  REQUIRE(one.ratio.has_value());
  CHECK(*one.ratio == doctest::Approx(*pooled.ratio).epsilon(1e-12));
}

TEST_CASE("paired bad input: abstain with the reason, never a throw") {
  std::vector<double> eight(8, 1.0), seven(7, 1.0), six(6, 1.0);
  std::vector<std::int64_t> groups = {6};
  CHECK(compare_paired({eight, seven}, {}).reason == "too few samples: head has 7, min_samples is 8");
  std::vector<double> nine(9, 1.0), nine_b(9, 1.0);
  comparison_options few;
  few.min_samples = 1;
  CHECK(compare_paired({nine, nine_b}, few).reason == "paired samples do not form whole blocks of 4 on both sides");
  CHECK(compare_paired({six, six, groups}, few).reason == "paired samples do not form whole blocks of 4 on both sides");
  std::vector<double> zeros(8, 0.0);
  CHECK(compare_paired({zeros, eight}, {}).reason ==
        "a base block measured zero time: the kernel is too fast to time, so no ratio exists");
  const comparison same = compare_paired({eight, eight}, {});
  CHECK(same.result == decision::equivalent);
}

TEST_CASE(
    "the pairing's self-check: processes that disagree far beyond their own noise are named, whatever the decision") {
  std::mt19937_64 rng(3401);
  comparison_options opt;
  opt.rope = 0.01;
  // A 40% layout effect between processes (the H200's 64 MB row softmax before every call was flushed) against 2%
  // noise a sample: the interval is wide and the reason says why.
  paired_samples wild;
  for (int k = 0; k < 4; ++k) add_process(wild, rng, 25, 1.0, 0.4);
  const comparison w = compare_paired({wild.base, wild.head, wild.groups, 4}, opt);
  CHECK_FALSE(w.process_note.empty());
  CHECK(w.reason.find("the processes disagree") != std::string::npos);
  // Processes that agree (0.1% between them): no note.
  paired_samples calm;
  for (int k = 0; k < 4; ++k) add_process(calm, rng, 25, 1.0, 0.001);
  const comparison c = compare_paired({calm.base, calm.head, calm.groups, 4}, opt);
  CHECK(c.process_note.empty());
  CHECK(c.reason.find("the processes disagree") == std::string::npos);
}

TEST_CASE("a large slowdown whose processes disagree about its size reads as slower first, not as a glitch") {
  // Four processes, each 50% to 100% slower (a +78.6%-like step whose size the processes do not agree on), with
  // 0.5% noise a sample.
  std::mt19937_64 rng(3402);
  std::normal_distribution<double> noise(0.0, 0.005);
  std::vector<double> base, head;
  std::vector<std::int64_t> groups;
  for (const double ratio : {1.5, 1.95, 1.6, 2.0}) {
    for (int i = 0; i < 40; ++i) {
      base.push_back(std::exp(noise(rng)));
      head.push_back(ratio * std::exp(noise(rng)));
    }
    groups.push_back(40);
  }
  const comparison c = compare_paired({base, head, groups, 4}, {});
  CHECK(c.result == decision::slower);
  INFO(c.reason);
  CHECK(c.reason.rfind("slower: ratio 1.", 0) == 0);
  CHECK(c.reason.find("%), 95% interval [") != std::string::npos);
  CHECK(c.reason.find("agree on the direction but disagree about the size") != std::string::npos);
}

// The two kinds of abstain, four processes each: `noisy`, whose processes each know their ratio poorly (a longer
// process helps), and `spread`, whose processes each know it well but disagree (only more processes help).
struct two_abstains {
  paired_samples noisy, spread;
};

two_abstains make_two_abstains(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  two_abstains out;
  for (int p = 0; p < 4; ++p) {
    add_process(out.noisy, rng, 3, 1.0, 0.0);     // few blocks: each process's ratio uncertain
    add_process(out.spread, rng, 25, 1.0, 0.04);  // processes apart
  }
  return out;
}

TEST_CASE("an abstain's advice names manifest keys, which every measuring command reads, not a flag rnx gate lacks") {
  const auto [noisy, spread] = make_two_abstains(3403);
  for (const auto* s : {&noisy, &spread}) {
    const comparison c = compare_paired({s->base, s->head, s->groups, 4}, {});
    INFO(c.reason);
    REQUIRE(c.result == decision::abstain);
    CHECK(c.reason.find("in [bench] of rnx.toml") != std::string::npos);
    CHECK(c.reason.find("--budget-ms") == std::string::npos);
    CHECK(c.reason.find("--processes") == std::string::npos);
  }
  CHECK(compare_paired({noisy.base, noisy.head, noisy.groups, 4}, {}).reason.find("raise budget_ms") !=
        std::string::npos);
  CHECK(compare_paired({spread.base, spread.head, spread.groups, 4}, {}).reason.find("raise max_processes") !=
        std::string::npos);
}

TEST_CASE("the spread of a paired comparison says whether a longer process or another one narrows it") {
  // The same two kinds of abstain as above: processes whose ratios are each uncertain (a longer process helps) and
  // processes that each know their ratio but disagree (only more processes help). The runner grows a later
  // process's budget on this answer (docs/runner.md), and the advice words it: one rule for both.
  const auto [noisy, spread] = make_two_abstains(3404);
  const comparison n = compare_paired({noisy.base, noisy.head, noisy.groups, 4}, {});
  const comparison s = compare_paired({spread.base, spread.head, spread.groups, 4}, {});
  REQUIRE(n.spread);
  REQUIRE(s.spread);
  CHECK(n.spread->processes == 4);
  CHECK(s.spread->between > 2 * s.spread->within);
  CHECK(longer_processes_help(*n.spread));
  CHECK_FALSE(longer_processes_help(*s.spread));
  CHECK(longer_processes_help(process_spread{}));  // one process: nothing to tell processes apart by
  // Unpaired comparisons have no block ratios, so no spread: the runner then grows the budget as before.
  CHECK_FALSE(compare_samples({noisy.base, noisy.groups}, {noisy.head, noisy.groups}, {}).spread);
}
