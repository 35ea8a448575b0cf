// The drift budget against a real embedded store: anchors (days, tag), the verdict it turns, the commits it blames.
#include "gate_backend.hpp"
#include "gate_drift.hpp"

#include "rnx/common/process.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace rnx;
using namespace rnx::gate;

struct scratch {
  fs::path path;
  scratch() {
    char pattern[] = "/tmp/rnx-test-drift-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    path = pattern;
  }
  ~scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// One configuration, three processes of 40 samples around `scale` ms; the same small wobble in every run, so a
// run at the same scale as its predecessor is the same measurement again.
run_document drift_run(const std::string& commit, const std::string& created_at, double scale,
                       std::optional<std::int64_t> pull_request = std::nullopt) {
  run_document r;
  r.project = "creep";
  r.commit = commit;
  r.branch = pull_request ? "pr-" + std::to_string(*pull_request) : "main";
  r.base_branch = "main";
  r.pull_request = pull_request;
  r.created_at = created_at;
  r.env.device = "cpu";
  r.env.cpu = "test cpu";
  r.env.threads = 2;
  r.env.os = "linux";
  r.env.torch = "2.11.0";
  r.env.python = "3.12.3";
  r.env.env_id = compute_env_id(r.env);
  run_result x;
  x.kernel = "gemm";
  x.runtime = "eager";
  x.dtype = "float32";
  x.batch = 1;
  x.device = "cpu";
  for (int i = 0; i < 120; ++i) x.samples_ms.push_back(scale * (1 + 0.002 * std::sin(0.7 * i + 0.3 * (i / 40))));
  x.groups = {40, 40, 40};
  r.results.push_back(x);
  return r;
}

std::string sha(char c) { return std::string(40, c); }

// main: a (anchor, 40 days old), b slower, c docs, d slower, e docs; every step 1.5%.
void store_history(baseline_backend& backend, const std::string& anchor_commit) {
  CHECK(backend.upload(drift_run(anchor_commit, "2026-10-24T12:00:00Z", 1.0)).baseline);
  CHECK(backend.upload(drift_run(sha('b'), "2026-11-20T12:00:00Z", 1.015)).baseline);
  CHECK(backend.upload(drift_run(sha('c'), "2026-11-21T12:00:00Z", 1.015)).baseline);
  CHECK(backend.upload(drift_run(sha('d'), "2026-11-22T12:00:00Z", 1.015 * 1.015)).baseline);
  CHECK(backend.upload(drift_run(sha('e'), "2026-11-23T12:00:00Z", 1.015 * 1.015)).baseline);
}

drift_settings days_budget(drift_action action = drift_action::warn) {
  drift_settings s;
  s.budget = 0.05;
  s.anchor = *drift_anchor_from_string("days:30");
  s.action = action;
  return s;
}

}  // namespace

TEST_CASE("drift anchors and actions parse from their one spelling") {
  CHECK(drift_anchor_from_string("tag:v*")->kind == anchor_kind::tag);
  CHECK(drift_anchor_from_string("tag:v*")->tag_glob == "v*");
  CHECK(drift_anchor_from_string("days:30")->days == 30);
  CHECK(drift_anchor_from_string("accepted")->kind == anchor_kind::accepted);
  CHECK_FALSE(drift_anchor_from_string("days:0"));
  CHECK_FALSE(drift_anchor_from_string("days:x"));
  CHECK_FALSE(drift_anchor_from_string("tag:"));
  CHECK_FALSE(drift_anchor_from_string("tag:-v"));
  CHECK_FALSE(drift_anchor_from_string("newest"));
  CHECK(to_string(*drift_anchor_from_string("days:30")) == "days:30");
  CHECK(drift_action_from_string("block") == drift_action::block);
  CHECK_FALSE(drift_action_from_string("fail"));
}

TEST_CASE("a head 6% slower than the anchor of 30 days back leaves a 5% budget: WARN, naming the slowing commits") {
  scratch dir;
  auto backend = make_embedded_backend((dir.path / "baselines.db").string());
  store_history(*backend, sha('a'));
  const run_document head = drift_run(sha('f'), "2026-12-03T11:00:00Z", std::pow(1.015, 4), 7);
  const std::string head_id = backend->upload(head).id;
  const drift_request request{head, "main", head_id, days_budget(), gate_policy{}, dir.path, "2026-12-03T12:00:00Z"};
  const drift_finding f = check_drift(*backend, request);
  CHECK(f.checked);
  CHECK(f.exceeded);
  CHECK(f.anchor_commit == sha('a'));
  REQUIRE(f.configs.size() == 1);
  const drift_config& c = f.configs.front();
  CHECK(c.result == decision::slower);
  CHECK(c.ratio == doctest::Approx(std::pow(1.015, 4)).epsilon(0.002));
  // b and d in the history, and the pull request's own head; the doc commits c and e are not blamed.
  CHECK(c.blamed_commits == std::vector<std::string>{sha('b'), sha('d'), sha('f')});
  CHECK(c.steps.size() == 5);
  CHECK(f.reason.find("over the drift budget of 5%") != std::string::npos);
  CHECK(f.reason.find(sha('b').substr(0, 12)) != std::string::npos);

  verdict_document pass;
  apply_drift(pass, f);
  CHECK(pass.verdict == overall::warn);
  CHECK(pass.reason == f.reason);
  verdict_document blocked;
  drift_finding as_block = f;
  as_block.action = drift_action::block;
  apply_drift(blocked, as_block);
  CHECK(blocked.verdict == overall::block);
  verdict_document report_only;
  report_only.policy.report_only = true;
  apply_drift(report_only, as_block);
  CHECK(report_only.verdict == overall::warn);
}

TEST_CASE("a head 3% slower than the anchor stays within a 5% budget and leaves the verdict alone") {
  scratch dir;
  auto backend = make_embedded_backend((dir.path / "baselines.db").string());
  store_history(*backend, sha('a'));
  const run_document head = drift_run(sha('f'), "2026-12-03T11:00:00Z", 1.015 * 1.015, 7);
  const drift_request request{head, "main", std::nullopt, days_budget(drift_action::block), gate_policy{}, dir.path,
                              "2026-12-03T12:00:00Z"};
  const drift_finding f = check_drift(*backend, request);
  CHECK(f.checked);
  CHECK_FALSE(f.exceeded);
  REQUIRE(f.configs.size() == 1);
  CHECK(f.configs.front().result != decision::slower);
  CHECK(f.configs.front().steps.empty());
  verdict_document v;
  apply_drift(v, f);
  CHECK(v.verdict == overall::pass);
  CHECK(f.reason.find("within the drift budget") != std::string::npos);
}

TEST_CASE("tag anchors: the newest matching tag in the head's history that has a stored baseline") {
  scratch dir;
  const fs::path repo = dir.path / "repo";
  fs::create_directories(repo);
  std::string out;
  auto git = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-C", repo.string(), "-c", "user.name=t", "-c", "user.email=t@example.com"});
    REQUIRE(run_capture(args, out) == 0);
  };
  git({"init", "-q", "-b", "main"});
  git({"commit", "-q", "--allow-empty", "-m", "one"});
  git({"tag", "v1.0"});
  git({"commit", "-q", "--allow-empty", "-m", "two"});
  REQUIRE(run_capture({"git", "-C", repo.string(), "rev-parse", "v1.0"}, out, capture::stdout_only) == 0);
  const std::string tagged = out.substr(0, 40);
  auto backend = make_embedded_backend((dir.path / "baselines.db").string());
  drift_settings settings = days_budget();
  settings.anchor = *drift_anchor_from_string("tag:v*");
  const run_document head = drift_run(sha('f'), "2026-12-03T11:00:00Z", std::pow(1.015, 4), 7);

  SUBCASE("no stored run of the tagged commit: not checked, and the reason says how to get one") {
    store_history(*backend, sha('a'));
    const drift_finding f = check_drift(*backend, {head, "main", std::nullopt, settings, gate_policy{}, repo, ""});
    CHECK_FALSE(f.checked);
    CHECK(f.reason.find("no tag matching v* has a stored baseline of main") != std::string::npos);
    verdict_document v;
    apply_drift(v, f);
    CHECK(v.verdict == overall::pass);
  }
  SUBCASE("the tagged commit's stored run is the anchor") {
    store_history(*backend, tagged);
    const drift_finding f = check_drift(*backend, {head, "main", std::nullopt, settings, gate_policy{}, repo, ""});
    CHECK(f.checked);
    CHECK(f.exceeded);
    CHECK(f.anchor_commit == tagged);
    CHECK(f.anchor_label == "tag v1.0");
  }
  SUBCASE("no tag matches: not checked") {
    settings.anchor = *drift_anchor_from_string("tag:release-*");
    const drift_finding f = check_drift(*backend, {head, "main", std::nullopt, settings, gate_policy{}, repo, ""});
    CHECK_FALSE(f.checked);
    CHECK(f.reason.find("no tag matching release-*") != std::string::npos);
  }
}
