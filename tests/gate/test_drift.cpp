// The drift budget against a real embedded store: anchors (days, tag), the verdict it turns, the commits it blames.
#include "gate_backend.hpp"
#include "gate_drift.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/process.hpp"
#include "rnx/common/text.hpp"

#include <boost/json.hpp>

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
  for (int i = 0; i < 120; ++i) {
    const double process = std::floor(i / 40.0);
    x.samples_ms.push_back(scale * (1 + 0.002 * std::sin(0.7 * i + 0.3 * process)));
  }
  x.groups = {40, 40, 40};
  r.results.push_back(x);
  return r;
}

std::string sha(char c) { return std::string(40, c); }

// The same configuration measured on a machine whose speed swung between processes (x0.25, x1, x4 of `scale`): the
// interval against any other run is then too wide to decide a 5% budget either way.
run_document swinging_run(const std::string& commit, const std::string& created_at, double scale,
                          std::optional<std::int64_t> pull_request = std::nullopt) {
  run_document r = drift_run(commit, created_at, scale, pull_request);
  auto& samples = r.results.front().samples_ms;
  for (std::size_t i = 0; i < samples.size(); ++i) samples[i] *= i < 40 ? 0.25 : i < 80 ? 1.0 : 4.0;
  return r;
}

// A git repository of three commits (one, two, three); returns their hashes, oldest first.
std::vector<std::string> three_commits(const fs::path& repo) {
  fs::create_directories(repo);
  std::string out;
  auto git = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-C", repo.string(), "-c", "user.name=t", "-c", "user.email=t@example.com"});
    out.clear();
    REQUIRE(run_capture(args, out, capture::stdout_only) == 0);
    return out.substr(0, 40);
  };
  git({"init", "-q", "-b", "main"});
  std::vector<std::string> shas;
  for (const char* subject : {"one", "two", "three"}) {
    git({"commit", "-q", "--allow-empty", "-m", subject});
    shas.push_back(git({"rev-parse", "HEAD"}));
  }
  return shas;
}

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
  const drift_request request{head,          "main",   std::nullopt,          days_budget(drift_action::block),
                              gate_policy{}, dir.path, "2026-12-03T12:00:00Z"};
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

TEST_CASE("drift methods parse from their one spelling") {
  CHECK(to_string(drift_method::stored) == "stored");
  CHECK(to_string(drift_method::paired) == "paired");
  CHECK(drift_method_from_string("paired") == drift_method::paired);
  CHECK(drift_method_from_string("stored") == drift_method::stored);
  CHECK_FALSE(drift_method_from_string("Paired"));
  CHECK_FALSE(drift_method_from_string(""));
}

TEST_CASE("where the anchor's stored run leaves the budget undecided, the head measured beside its commit decides") {
  scratch dir;
  const std::vector<std::string> shas = three_commits(dir.path / "repo");
  auto backend = make_embedded_backend((dir.path / "baselines.db").string());
  CHECK(backend->upload(swinging_run(shas[0], "2026-10-24T12:00:00Z", 1.0)).baseline);
  const run_document head = drift_run(shas[2], "2026-12-03T11:00:00Z", 1.3, 7);
  drift_request request{
      head, "main", std::nullopt, days_budget(), gate_policy{}, dir.path / "repo", "2026-12-03T12:00:00Z"};

  SUBCASE("no way to measure (stored mode): undecided, as the stored comparison says") {
    const drift_finding f = check_drift(*backend, request);
    CHECK(f.checked);
    CHECK_FALSE(f.exceeded);
    REQUIRE(f.configs.size() == 1);
    CHECK(f.configs.front().result == decision::abstain);
    CHECK(f.configs.front().method == drift_method::stored);
    CHECK(f.commits_since_anchor.empty());
    CHECK(f.reason.find("none shown over the drift budget of 5% since the baseline of 2026-10-24") == 0);
    CHECK(f.reason.find(": 1 configuration undecided") != std::string::npos);
  }
  SUBCASE("measured paired: over budget, nothing blamed by the stored steps, the commits since and the bisect") {
    std::vector<config_key> asked;
    double rope_asked = 0;
    std::string commit_asked;
    request.measure_paired = [&](const std::string& commit, const std::vector<config_key>& configs, double rope) {
      commit_asked = commit;
      asked = configs;
      rope_asked = rope;
      return anchor_pair{drift_run(commit, "2026-12-03T11:30:00Z", 1.0),
                         drift_run(shas[2], "2026-12-03T11:30:00Z", 1.3, 7)};
    };
    const drift_finding f = check_drift(*backend, request);
    CHECK(commit_asked == shas[0]);
    REQUIRE(asked.size() == 1);
    CHECK(asked.front().kernel == "gemm");
    CHECK(rope_asked == doctest::Approx(0.05));
    CHECK(f.exceeded);
    REQUIRE(f.configs.size() == 1);
    const drift_config& c = f.configs.front();
    CHECK(c.method == drift_method::paired);
    CHECK(c.result == decision::slower);
    CHECK(c.ratio == doctest::Approx(1.3).epsilon(0.002));
    CHECK(c.blamed_commits.empty());
    CHECK(c.steps.size() == 1);
    CHECK(f.commits_since_anchor == std::vector<std::string>{shas[1], shas[2]});
    CHECK(c.bisect_command ==
          "rnx bisect " + shas[0] + " " + shas[2] + " --kernel gemm --runtime eager --dtype float32 --batch 1");
    CHECK(f.reason.find("measured paired beside the anchor's commit, no stored step blamed") != std::string::npos);
    CHECK(f.reason.find("2 commits since the anchor: " + shas[1].substr(0, 12) + " " + shas[2].substr(0, 12)) !=
          std::string::npos);
    CHECK(f.reason.find("to name the slowing ones paired: " + c.bisect_command) != std::string::npos);
    verdict_document v;
    apply_drift(v, f);
    CHECK(v.verdict == overall::warn);
  }
  SUBCASE("measured paired within the budget: decided, and the reason says how") {
    request.measure_paired = [&](const std::string& commit, const std::vector<config_key>&, double) {
      return anchor_pair{drift_run(commit, "2026-12-03T11:30:00Z", 1.0),
                         drift_run(shas[2], "2026-12-03T11:30:00Z", 1.01, 7)};
    };
    const drift_finding f = check_drift(*backend, request);
    CHECK_FALSE(f.exceeded);
    REQUIRE(f.configs.size() == 1);
    CHECK(f.configs.front().method == drift_method::paired);
    CHECK(f.configs.front().result == decision::equivalent);
    CHECK(f.configs.front().bisect_command.empty());
    CHECK(f.reason.find("within the drift budget of 5%") != std::string::npos);
    CHECK(f.reason.find("(1 configuration measured paired beside the anchor's commit)") != std::string::npos);
  }
  SUBCASE("a paired measurement that fails leaves the stored decision and says why") {
    request.measure_paired = [](const std::string&, const std::vector<config_key>&, double) -> anchor_pair {
      throw error(errc::usage, "the anchor's commit is not in this checkout");
    };
    const drift_finding f = check_drift(*backend, request);
    CHECK_FALSE(f.exceeded);
    REQUIRE(f.configs.size() == 1);
    CHECK(f.configs.front().method == drift_method::stored);
    CHECK(f.configs.front().result == decision::abstain);
    CHECK(f.reason.find("1 configuration not measured paired at the anchor's commit, so the stored comparison "
                        "stands: the anchor's commit is not in this checkout") != std::string::npos);
  }
}

TEST_CASE("within the budget against the stored anchor is not measured again; over it is confirmed paired") {
  scratch dir;
  auto backend = make_embedded_backend((dir.path / "baselines.db").string());
  store_history(*backend, sha('a'));
  int calls = 0;
  double paired_scale = 1;
  auto measure = [&](const std::string& commit, const std::vector<config_key>&, double) {
    ++calls;
    return anchor_pair{drift_run(commit, "2026-12-03T11:30:00Z", 1.0),
                       drift_run(sha('f'), "2026-12-03T11:30:00Z", paired_scale, 7)};
  };

  SUBCASE("3% against the stored anchor: within, decided, nothing measured") {
    const run_document head = drift_run(sha('f'), "2026-12-03T11:00:00Z", 1.015 * 1.015, 7);
    drift_request request{head, "main", std::nullopt, days_budget(), gate_policy{}, dir.path, "2026-12-03T12:00:00Z"};
    request.measure_paired = measure;
    const drift_finding f = check_drift(*backend, request);
    CHECK(calls == 0);
    REQUIRE(f.configs.size() == 1);
    CHECK(f.configs.front().method == drift_method::stored);
    CHECK(f.configs.front().result == decision::equivalent);
  }
  const run_document head = drift_run(sha('f'), "2026-12-03T11:00:00Z", std::pow(1.015, 4), 7);
  drift_request request{head, "main", std::nullopt, days_budget(), gate_policy{}, dir.path, "2026-12-03T12:00:00Z"};
  request.measure_paired = measure;
  SUBCASE("6% against the stored anchor, 2% measured paired: the stored run was measured in a fast spell; within") {
    paired_scale = 1.02;
    const drift_finding f = check_drift(*backend, request);
    CHECK(calls == 1);
    CHECK_FALSE(f.exceeded);
    REQUIRE(f.configs.size() == 1);
    CHECK(f.configs.front().method == drift_method::paired);
    CHECK(f.configs.front().result == decision::equivalent);
    CHECK(f.configs.front().steps.empty());
  }
  SUBCASE("6% against the stored anchor, 6% measured paired: over budget, the stored steps still blame") {
    paired_scale = std::pow(1.015, 4);
    const drift_finding f = check_drift(*backend, request);
    CHECK(calls == 1);
    CHECK(f.exceeded);
    REQUIRE(f.configs.size() == 1);
    const drift_config& c = f.configs.front();
    CHECK(c.method == drift_method::paired);
    CHECK(c.result == decision::slower);
    CHECK(c.blamed_commits == std::vector<std::string>{sha('b'), sha('d'), sha('f')});
    CHECK(c.bisect_command ==
          "rnx bisect " + sha('a') + " " + sha('f') + " --kernel gemm --runtime eager --dtype float32 --batch 1");
    CHECK(f.commits_since_anchor.empty());  // dir is no git repository: the reason says the list is missing
    CHECK(f.reason.find("blamed by the stored steps: " + sha('b').substr(0, 12)) != std::string::npos);
    CHECK(f.reason.find("the commits since the anchor could not be listed here") != std::string::npos);
  }
}

TEST_CASE("drift.json and the report say which comparison decided, and give the bisect when nothing is blamed") {
  drift_finding f;
  f.checked = true;
  f.exceeded = true;
  f.budget = 0.05;
  f.anchor = "tag:v*";
  f.anchor_label = "tag v1.0";
  f.anchor_commit = sha('a');
  f.reason = "1 configuration over the drift budget of 5% since tag v1.0";
  f.commits_since_anchor = {sha('b'), sha('c')};
  drift_config paired;
  paired.key = {"gemm", "eager", "float32", 1};
  paired.method = drift_method::paired;
  paired.result = decision::slower;
  paired.ratio = 1.3;
  paired.lo = 1.28;
  paired.hi = 1.32;
  paired.p_over = 1;
  paired.steps.push_back(drift_step{sha('c'), "run-1", 1.3, 0.5, 3.0, 0.7, false});
  paired.bisect_command = "rnx bisect " + sha('a') + " " + sha('c') +
                          " --kernel gemm --runtime eager --dtype "
                          "float32 --batch 1";
  drift_config stored;
  stored.key = {"gemm", "eager", "float32", 8};
  stored.result = decision::equivalent;
  stored.ratio = 1.01;
  stored.lo = 1.0;
  stored.hi = 1.02;
  f.configs = {paired, stored};

  const boost::json::object doc = boost::json::value(drift_json(f)).as_object();
  CHECK(doc.at("schema").as_string() == "rnx.drift/v1");
  const boost::json::array& configs = doc.at("configs").as_array();
  REQUIRE(configs.size() == 2);
  CHECK(drift_method_from_string(configs[0].at("method").as_string()) == drift_method::paired);
  CHECK(drift_method_from_string(configs[1].at("method").as_string()) == drift_method::stored);
  CHECK(configs[0].at("bisect_command").as_string() == paired.bisect_command);
  CHECK(configs[1].at("bisect_command").as_string() == "");
  const boost::json::array& since = doc.at("commits_since_anchor").as_array();
  REQUIRE(since.size() == 2);
  CHECK(since[0].as_string() == sha('b'));

  const std::string md = render_drift_markdown(f);
  CHECK(md.find(markdown_code("gemm/eager/float32/b1") + " +30.00% [+28.00%, +32.00%] since the anchor, slower "
                                                         "(measured paired beside the anchor's commit)") !=
        std::string::npos);
  CHECK(md.find("No stored step is blamed; 2 commits since the anchor: " + sha('b').substr(0, 12) + " " +
                sha('c').substr(0, 12) + ". To name the ones that slowed it, each measured paired: " +
                markdown_code(paired.bisect_command)) != std::string::npos);
  CHECK(md.find("b8") == std::string::npos);  // a stored decision with no steps adds nothing to the comment
  const std::string text = render_drift_text(f);
  CHECK(text.find("slower (measured paired beside the anchor's commit)") != std::string::npos);
  CHECK(text.find("equivalent (against the anchor's stored run)") != std::string::npos);
  CHECK(text.find("to name the slowing commits paired: " + paired.bisect_command) != std::string::npos);
}
