// Whole-run verdicts: configuration matching and the PASS/WARN/BLOCK mapping of docs/statistics.md.
#include "rnx/stats/look_schedule.hpp"
#include "rnx/stats/verdict.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace rnx;

namespace {

run_result result(std::string kernel, double center, result_status status = result_status::ok) {
  run_result r;
  r.kernel = std::move(kernel);
  r.runtime = "eager";
  r.dtype = "float32";
  r.batch = 8;
  r.device = "cpu";
  r.status = status;
  if (status == result_status::ok) {
    for (int i = 0; i < 20; ++i) r.samples_ms.push_back(center * (1.0 + 0.002 * std::sin(i * 1.7)));
  } else {
    r.message = "output differs: max abs err 0.5";
  }
  return r;
}

run_document run(std::vector<run_result> results, std::string env = "env-a") {
  run_document d;
  d.project = "demo";
  d.env.env_id = std::move(env);
  d.env.device = "cpu";
  d.results = std::move(results);
  return d;
}

const config_verdict& find(const verdict_document& v, const std::string& kernel) {
  for (const auto& c : v.configs) {
    if (c.key.kernel == kernel) return c;
  }
  FAIL("no configuration " << kernel);
  return v.configs.front();
}

}  // namespace

TEST_CASE("identical runs pass") {
  auto base = run({result("a", 1.0), result("b", 2.0)});
  auto v = stats::judge_runs(base, base, {});
  CHECK(v.verdict == overall::pass);
  CHECK(find(v, "a").result == decision::equivalent);
}

TEST_CASE("a slower configuration blocks; report_only turns it into a warning") {
  auto base = run({result("a", 1.0), result("b", 2.0)});
  auto head = run({result("a", 1.0), result("b", 2.4)});
  auto v = stats::judge_runs(base, head, {});
  CHECK(v.verdict == overall::block);
  CHECK(find(v, "b").result == decision::slower);
  CHECK(find(v, "b").ratio.value() == doctest::Approx(1.2).epsilon(0.01));
  CHECK(v.reason.find("1 slower (b/eager/float32/b8 x1.200)") != std::string::npos);
  gate_policy lenient;
  lenient.report_only = true;
  CHECK(stats::judge_runs(base, head, lenient).verdict == overall::warn);
}

TEST_CASE("new, missing and broken configurations") {
  auto base = run({result("kept", 1.0), result("dropped", 1.0), result("breaks", 1.0)});
  auto head = run({result("kept", 1.0), result("added", 1.0), result("breaks", 1.0, result_status::diverged)});
  auto v = stats::judge_runs(base, head, {});
  CHECK(find(v, "added").result == decision::new_config);
  CHECK(find(v, "dropped").result == decision::missing);
  CHECK(find(v, "breaks").result == decision::broken);
  CHECK(v.verdict == overall::block);

  auto only_new = stats::judge_runs(run({result("kept", 1.0)}), run({result("kept", 1.0), result("added", 1.0)}), {});
  CHECK(only_new.verdict == overall::warn);
}

TEST_CASE("abstain follows on_abstain") {
  auto base = run({result("a", 1.0)});
  auto head = run({result("a", 1.0)});
  head.results[0].unstable = true;
  head.results[0].message = "bimodal";
  gate_policy policy;
  CHECK(stats::judge_runs(base, head, policy).verdict == overall::warn);
  policy.on_abstain = overall::pass;
  CHECK(stats::judge_runs(base, head, policy).verdict == overall::pass);
  policy.on_abstain = overall::block;
  CHECK(stats::judge_runs(base, head, policy).verdict == overall::block);
}

TEST_CASE("runtimes skipped on both sides do not warn") {
  auto skipped = result("a", 1.0, result_status::skipped);
  skipped.runtime = "onnxruntime";
  skipped.message = "onnxruntime is not installed";
  auto base = run({result("a", 1.0), skipped});
  auto v = stats::judge_runs(base, base, {});
  CHECK(v.verdict == overall::pass);
}

TEST_CASE("different environments never block") {
  auto base = run({result("a", 1.0)}, "env-a");
  auto head = run({result("a", 3.0)}, "env-b");
  auto v = stats::judge_runs(base, head, {});
  CHECK(v.verdict == overall::warn);
  CHECK(v.reason.rfind("environments differ", 0) == 0);
}

TEST_CASE("the two documents of one paired run are judged over paired ratios, with the looks' threshold") {
  run_result b = result("softmax", 1.0);
  run_result h = result("softmax", 1.0);
  for (auto* r : {&b, &h}) {
    r->samples_ms.resize(16);
    r->groups = {8, 8};
    r->pairing = rnx::pairing_mode::in_process;
  }
  // The head side 30% slower in the second process, as the base: machine drift that the blocks share.
  for (std::size_t i = 8; i < 16; ++i) {
    b.samples_ms[i] *= 1.3;
    h.samples_ms[i] *= 1.3;
  }
  run_document base = run({b});
  run_document head = run({h});
  base.pairing = pairing_info{"pair-1", rnx::pair_side::base, "", 4, 4};
  head.pairing = pairing_info{"pair-1", rnx::pair_side::head, "", 4, 4};
  const verdict_document v = stats::judge_runs(base, head, {});
  const auto& c = find(v, "softmax");
  CHECK(c.pairing == rnx::pairing_mode::in_process);
  REQUIRE(c.threshold.has_value());
  CHECK(*c.threshold == doctest::Approx(rnx::stats::look_threshold(0.95, 0, 4)));  // the last of four looks
  REQUIRE(c.mde.has_value());
  CHECK(*c.mde >= 0.02);
  CHECK(c.result == decision::equivalent);

  // Documents of different paired runs are not paired with each other.
  head.pairing->id = "pair-2";
  const verdict_document separate = stats::judge_runs(base, head, {});
  const auto& unpaired = find(separate, "softmax");
  CHECK(unpaired.pairing == rnx::pairing_mode::none);
  CHECK_FALSE(unpaired.threshold.has_value());
}

TEST_CASE("a kernel new in the head that errors or diverges is broken (BLOCK), with its error") {
  run_result crashed = result("fresh", 1.0, result_status::error);
  crashed.message = "kernel \"fresh\" failed: RuntimeError: boom";
  run_result diverged = result("fresh2", 1.0, result_status::diverged);
  const verdict_document v =
      stats::judge_runs(run({result("old", 1.0)}), run({result("old", 1.0), crashed, diverged}), {});
  const auto& c = find(v, "fresh");
  CHECK(c.result == decision::broken);
  CHECK(c.reason == "new in this run and error: kernel \"fresh\" failed: RuntimeError: boom");
  CHECK(find(v, "fresh2").result == decision::broken);
  CHECK(v.verdict == overall::block);
  // A new kernel that works is still only new (WARN).
  const verdict_document fine =
      stats::judge_runs(run({result("old", 1.0)}), run({result("old", 1.0), result("fresh", 1.0)}), {});
  CHECK(find(fine, "fresh").result == decision::new_config);
  CHECK(fine.verdict == overall::warn);
}

TEST_CASE("an imported run's abstain advises what its harness can do, not rnx bench --pair") {
  // Process medians that disagree by far more than the rope: no decision either way.
  auto spread = [](std::string runtime) {
    run_result r = result("k", 1.0);
    r.runtime = std::move(runtime);
    r.dtype = "none";
    r.samples_ms.clear();
    for (double level : {1.0, 1.3, 0.8}) {
      for (int i = 0; i < 8; ++i) r.samples_ms.push_back(level * (1.0 + 0.001 * i));
    }
    r.groups = {8, 8, 8};
    return r;
  };
  const std::vector<std::pair<std::string, std::string>> harnesses = {{"gbench", "--benchmark_repetitions"},
                                                                      {"pytest-benchmark", "--benchmark-min-rounds"},
                                                                      {"nvbench", "--min-samples"}};
  for (const auto& harness : harnesses) {
    const std::string& runtime = harness.first;
    const std::string& flag = harness.second;
    CAPTURE(runtime);
    auto v = stats::judge_runs(run({spread(runtime)}), run({spread(runtime)}), {});
    const auto& c = find(v, "k");
    REQUIRE(c.result == decision::abstain);
    const std::string advice =
        "; to decide: more runs of the harness (each file rnx import reads is one process) "
        "with a higher " +
        flag +
        ", or the harness run on both revisions in one job on one machine, alternating, and "
        "the two imports compared with rnx compare (docs/import.md)";
    CHECK(c.reason.size() > advice.size());
    CHECK(c.reason.substr(c.reason.size() - advice.size()) == advice);
    CHECK(c.reason.find("--pair") == std::string::npos);
  }
  // rnx bench's own runs keep the paired advice.
  auto own = stats::judge_runs(run({spread("eager")}), run({spread("eager")}), {});
  CHECK(find(own, "k").reason.find("to decide: measure paired (rnx bench --pair BASE") != std::string::npos);
}

TEST_CASE("an imported configuration with only aggregates abstains, with the reason, on either side") {
  auto summarized = [](std::string kernel, double mean) {
    run_result r = result(std::move(kernel), mean);
    r.runtime = "gbench";
    r.dtype = "none";
    r.samples_ms.clear();
    r.aggregates = aggregate_summary{10, mean, mean, 0.01 * mean, std::nullopt, std::nullopt};
    return r;
  };
  auto gbench = [](run_result r) {
    r.runtime = "gbench";
    r.dtype = "none";
    return r;
  };
  // Even a threefold change is not called: the summaries carry no samples to form a posterior from.
  auto base = run({summarized("both", 1.0), gbench(result("head_only", 1.0)), summarized("base_only", 1.0),
                   gbench(result("plain", 1.0))});
  auto head = run({summarized("both", 3.0), summarized("head_only", 3.0), gbench(result("base_only", 3.0)),
                   gbench(result("plain", 1.0))});
  auto v = stats::judge_runs(base, head, {});
  for (const char* kernel : {"both", "head_only", "base_only"}) {
    CAPTURE(kernel);
    const auto& c = find(v, kernel);
    CHECK(c.result == decision::abstain);
    CHECK(!c.ratio);
    CHECK(c.reason.find("no per-sample times") != std::string::npos);
  }
  CHECK(find(v, "both").reason.rfind("baseline has only aggregates (median 1 ms of 10); head has only aggregates "
                                     "(median 3 ms of 10)",
                                     0) == 0);
  CHECK(find(v, "head_only").reason.rfind("head has only aggregates", 0) == 0);
  CHECK(find(v, "base_only").reason.rfind("baseline has only aggregates", 0) == 0);
  CHECK(find(v, "plain").result == decision::equivalent);
  CHECK(v.verdict == overall::warn);  // abstain follows on_abstain (warn), never BLOCK on a summary
  gate_policy strict;
  strict.on_abstain = overall::block;
  CHECK(stats::judge_runs(base, head, strict).verdict == overall::block);
  // A configuration new in the head is new whatever it carries.
  auto added = stats::judge_runs(run({gbench(result("plain", 1.0))}),
                                 run({gbench(result("plain", 1.0)), summarized("added", 1.0)}), {});
  CHECK(find(added, "added").result == decision::new_config);
}

TEST_CASE("a kernel that errors in the head is broken even when the baseline failed too; a skipped head is not") {
  run_result crashed = result("k", 1.0, result_status::error);
  crashed.message = "kernel \"k\" failed: RuntimeError: boom";
  const verdict_document v = stats::judge_runs(run({result("k", 1.0, result_status::error)}), run({crashed}), {});
  CHECK(find(v, "k").result == decision::broken);
  CHECK(find(v, "k").reason ==
        "error in head, and error in the baseline already: kernel \"k\" failed: RuntimeError: boom");
  CHECK(v.verdict == overall::block);
  run_result skipped = result("k", 1.0, result_status::skipped);
  skipped.message = "onnxruntime is not installed";
  const verdict_document s = stats::judge_runs(run({result("k", 1.0, result_status::error)}), run({skipped}), {});
  CHECK(find(s, "k").result == decision::abstain);
}

TEST_CASE("an abstain of a pair measured by process is not told to measure paired") {
  run_result b = result("softmax", 1.0);
  run_result h = result("softmax", 1.0);
  // Three processes a side, far apart, so that nothing decides.
  b.samples_ms.clear();
  h.samples_ms.clear();
  for (const double speed : {1.0, 1.3, 0.8}) {
    for (int i = 0; i < 10; ++i) {
      b.samples_ms.push_back(speed * (1 + 0.001 * i));
      h.samples_ms.push_back((2.1 - speed) * (1 + 0.001 * i));
    }
  }
  b.groups = h.groups = {10, 10, 10};
  run_document base = run({b});
  run_document head = run({h});
  base.pairing = pairing_info{"pair-1", rnx::pair_side::base, "", 4, 4};
  head.pairing = pairing_info{"pair-1", rnx::pair_side::head, "", 4, 4};
  const verdict_document v = stats::judge_runs(base, head, {});  // kept: find() returns a reference into it
  const auto& c = find(v, "softmax");
  INFO(c.reason);
  CHECK(c.pairing == rnx::pairing_mode::process);
  REQUIRE(c.result == decision::abstain);
  CHECK(c.reason.find("measure paired") == std::string::npos);
  CHECK(c.reason.find("raise max_processes in [bench] of rnx.toml") != std::string::npos);
}
