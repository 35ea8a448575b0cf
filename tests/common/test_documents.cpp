// Run and verdict documents: JSON round trips, atomic writes, and error messages that name the JSON path.
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/report.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace rnx;

namespace {

run_document sample_run() {
  run_document run;
  run.project = "demo";
  run.commit = "0123abc";
  run.branch = "feature";
  run.base_branch = "main";
  run.pull_request = 7;
  run.created_at = "2026-12-02T10:00:00Z";
  run.env.device = "NVIDIA H200";
  run.env.cuda = "13.0";
  run.env.threads = 16;
  run.env.clocks["sm_mhz"] = 1980;
  run.env.peaks["gemm_bfloat16_flops_per_s"] = 7.5e14;
  run.env.peaks["copy_bytes_per_s"] = 4.1e12;
  run.env.env_id = compute_env_id(run.env);
  run_result r;
  r.kernel = "attention";
  r.runtime = "eager";
  r.dtype = "bfloat16";
  r.batch = 8;
  r.device = "cuda:0";
  r.samples_ms = {1.5, 1.25, 1.75, 1.5};
  r.groups = {2, 2};
  r.max_abs_err = 1e-3;
  r.tol = tolerance{1.6e-2, 1e-5};
  run.results.push_back(r);
  return run;
}

std::string error_of(const std::string& text) {
  try {
    run_from_json(json::parse(text, "doc.json"), "doc.json");
  } catch (const error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a run document survives a JSON round trip") {
  const run_document run = sample_run();
  const run_document back = run_from_json(json::parse(json::serialize(to_json(run), true), "x"), "x");
  CHECK(back.project == run.project);
  CHECK(back.pull_request == run.pull_request);
  CHECK(back.env.env_id == run.env.env_id);
  CHECK(back.env.clocks.at("sm_mhz") == 1980);
  CHECK(back.env.peaks == run.env.peaks);
  REQUIRE(back.results.size() == 1);
  CHECK(back.results[0].samples_ms == run.results[0].samples_ms);
  CHECK(back.results[0].groups == run.results[0].groups);
  CHECK(back.results[0].tol->rtol == doctest::Approx(1.6e-2));
}

TEST_CASE("a result's work survives a round trip and is checked: counts, at least one of them, and a source") {
  run_document run = sample_run();
  run.results[0].work = work_info{2'000'000'000'000, 48, work_source::declared};
  run.results.push_back(run.results[0]);
  run.results[1].batch = 1;
  run.results[1].work = work_info{std::nullopt, 1024, work_source::counted};
  const std::string text = json::serialize(to_json(run));
  CHECK(text.find(R"("work":{"source":"declared","flops":2000000000000,"bytes":48})") != std::string::npos);
  const run_document back = run_from_json(json::parse(text, "x"), "x");
  REQUIRE(back.results[0].work);
  CHECK(*back.results[0].work->flops == 2'000'000'000'000);
  CHECK(back.results[0].work->source == work_source::declared);
  CHECK_FALSE(back.results[1].work->flops);
  CHECK(*back.results[1].work->bytes == 1024);
  CHECK(back.results[1].work->source == work_source::counted);

  const std::string head = R"({"schema": "rnx.run/v1", "project": "p", "environment": {"env_id": "e", "device": "cpu"},
    "results": [{"kernel": "k", "runtime": "eager", "dtype": "float32", "batch": 1, "status": "ok", "work": )";
  CHECK(error_of(head + R"({"flops": 1}}]})") == "doc.json: $.results[0].work: missing required member \"source\"");
  CHECK(error_of(head + R"({"source": "guessed", "flops": 1}}]})") ==
        "doc.json: $.results[0].work.source: expected \"counted\" or \"declared\", got \"guessed\"");
  CHECK(error_of(head + R"({"source": "counted"}}]})") ==
        "doc.json: $.results[0].work: expected flops, bytes or both (a result whose work is unknown has no work), got "
        "an object");
  CHECK(error_of(head + R"({"source": "counted", "bytes": -1}}]})") ==
        "doc.json: $.results[0].work.bytes: expected a non-negative count, got -1");
}

TEST_CASE("env_id ignores clocks and peaks and changes with the software stack") {
  run_document run = sample_run();
  const std::string id = compute_env_id(run.env);
  run.env.clocks["sm_mhz"] = 345;
  run.env.peaks["copy_bytes_per_s"] = 1e12;
  CHECK(compute_env_id(run.env) == id);
  run.env.torch = "2.12.0";
  CHECK(compute_env_id(run.env) != id);
  CHECK(id.size() == 16);
}

TEST_CASE("write_run_file is atomic and leaves no temporary file") {
  const auto dir = std::filesystem::temp_directory_path() / ("rnx-doc-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / "run.json").string();
  write_run_file(sample_run(), path);
  CHECK(read_run_file(path).results.size() == 1);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  CHECK(files == 1);
  CHECK_THROWS_AS(write_run_file(sample_run(), (dir / "no-such-dir" / "run.json").string()), error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a paired run's pairing survives a round trip; in-process samples must form whole blocks") {
  run_document run = sample_run();
  run.pairing = pairing_info{"a1b2c3d4e5f60718", rnx::pair_side::head, "fedcba9876543210", 4, 4};
  run.results[0].samples_ms = {1, 1, 1, 1, 2, 2, 2, 2};
  run.results[0].groups = {4, 4};
  run.results[0].first_sides = {rnx::pair_side::base, rnx::pair_side::head};
  run.results[0].pairing = rnx::pairing_mode::in_process;
  run_result fallback = run.results[0];
  fallback.first_sides.clear();
  fallback.kernel = "helper";
  fallback.pairing = rnx::pairing_mode::process;
  fallback.pairing_reason = "kernels/helper.py imports modules from its own folder (util)";
  fallback.samples_ms = {1, 2, 3};
  fallback.groups = {1, 2};
  fallback.inputs = rnx::timed_inputs::fresh;
  run.results.push_back(fallback);
  const run_document back = run_from_json(json::parse(json::serialize(to_json(run), true), "x"), "x");
  REQUIRE(back.pairing.has_value());
  CHECK(back.pairing->id == "a1b2c3d4e5f60718");
  CHECK(back.pairing->side == rnx::pair_side::head);
  CHECK(back.pairing->partner_commit == "fedcba9876543210");
  CHECK(back.pairing->looks == 4);
  CHECK(back.results[0].pairing == rnx::pairing_mode::in_process);
  CHECK(back.results[1].pairing == rnx::pairing_mode::process);
  CHECK(back.results[1].pairing_reason == fallback.pairing_reason);
  CHECK(back.results[0].first_sides == run.results[0].first_sides);
  CHECK(back.results[1].first_sides.empty());
  CHECK(!to_json(run).as_object().at("results").as_array()[1].as_object().contains("first_sides"));
  CHECK(back.results[0].inputs == rnx::timed_inputs::same);
  CHECK(back.results[1].inputs == rnx::timed_inputs::fresh);
  CHECK(!to_json(run).as_object().at("results").as_array()[0].as_object().contains("timed_inputs"));

  // One side loaded first per process group, each "head" or "base".
  run.results[0].first_sides = {rnx::pair_side::base};
  try {
    run_from_json(json::parse(json::serialize(to_json(run), true), "x"), "run.json");
    FAIL("expected an error");
  } catch (const error& e) {
    CHECK(std::string(e.what()) ==
          "run.json: $.results[0].first_sides: expected one side per process group (2 "
          "groups, 1 given), got an array");
  }
  run.results[0].first_sides.clear();
  run.results[0].samples_ms = {1, 1, 1, 2, 2, 2};
  run.results[0].groups = {3, 3};
  try {
    run_from_json(json::parse(json::serialize(to_json(run), true), "x"), "run.json");
    FAIL("expected an error");
  } catch (const error& e) {
    CHECK(std::string(e.what()) ==
          "run.json: $.results[0].groups: in-process samples come in blocks of 4 per "
          "process, and these do not (or mark the result \"pairing\": \"process\")");
  }
  const std::string env = R"("environment": {"env_id": "e", "device": "cpu"})";
  CHECK(error_of(R"({"schema": "rnx.run/v1", "project": "p", )" + env +
                 R"(, "pairing": {"id": "x", "side": "left"}, "results": []})") ==
        "doc.json: $.pairing.side: expected \"head\" or \"base\", got \"left\"");
}

TEST_CASE("reader errors name the JSON path and what was expected") {
  const std::string env = R"("environment": {"env_id": "e", "device": "cpu"})";
  CHECK(error_of(R"({"schema": "rnx.run/v1", "project": "p", )" + env + R"(, "results": {}})") ==
        "doc.json: $.results: expected an array, got an object");
  CHECK(error_of(R"({"schema": "rnx.run/v1", "project": "", )" + env + R"(, "results": []})") ==
        "doc.json: $.project: expected a non-empty string, got \"\"");
  CHECK(error_of(R"({"schema": "rnx.run/v1", "project": "p", )" + env + R"(, "pull_request": 0, "results": []})") ==
        "doc.json: $.pull_request: expected a pull request number of at least 1, got 0");
  CHECK(error_of(R"({"schema": "rnx.run/v1", "project": "p", "environment": {"env_id": "e", "device": "cpu",
                 "clocks": {"sm_mhz": "fast"}}, "results": []})") ==
        "doc.json: $.environment.clocks.sm_mhz: expected a number, got \"fast\"");
  CHECK(error_of(R"({"schema": "rnx.run/v1", "project": "p", "environment": {"env_id": "e", "device": "cpu",
                 "peaks": {"copy_bytes_per_s": 0}}, "results": []})") ==
        "doc.json: $.environment.peaks.copy_bytes_per_s: expected a positive number (a peak rate), got 0");
  CHECK(error_of("[1, 2") == "doc.json:1:6: malformed JSON: incomplete JSON");
}

TEST_CASE("verdict documents round trip, nulls included") {
  verdict_document v;
  v.verdict = overall::block;
  v.reason = "1 slower";
  v.baseline = baseline_ref{"42", "abc", "2026-12-01T00:00:00Z"};
  config_verdict c;
  c.key = {"k", "eager", "float32", 1};
  c.result = decision::slower;
  c.ratio = 1.2;
  c.ci_lo = 1.1;
  c.ci_hi = 1.3;
  c.p_slower = 0.99;
  c.p_faster = 0.0;
  c.p_equivalent = 0.01;
  c.n_base = 10;
  c.n_head = 10;
  v.configs.push_back(c);
  config_verdict added;
  added.key = {"k2", "eager", "float32", 1};
  added.result = decision::new_config;
  v.configs.push_back(added);
  const auto back = verdict_from_json(to_json(v), "v");
  CHECK(back.verdict == overall::block);
  CHECK(back.baseline->id == "42");
  CHECK(back.configs[0].ci_hi.value() == doctest::Approx(1.3));
  CHECK(back.configs[1].result == decision::new_config);
  CHECK_FALSE(back.configs[1].ratio.has_value());
}

TEST_CASE("errors render as the service's JSON error body") {
  const error e(errc::too_large, "body over 16 MiB");
  CHECK(json::serialize(e.to_json()) == R"({"error":{"code":"too_large","message":"body over 16 MiB"}})");
  CHECK(e.http_status() == 413);
  CHECK(error(errc::usage, "x").exit_code() == 2);
}

TEST_CASE("imported results keep params in order, origin and aggregates; the harness joins env_id only when set") {
  run_document run = sample_run();
  const std::string plain_id = compute_env_id(run.env);
  run.env.harness = "gbench 1.7.1";
  CHECK(compute_env_id(run.env) != plain_id);
  run.env.env_id = compute_env_id(run.env);
  run_result r;
  r.kernel = "BM_copy[size=1024,align=64]";
  r.runtime = "gbench";
  r.dtype = "none";
  r.batch = 1;
  r.params = {{"size", "1024"}, {"align", "64"}};
  r.origin = "BM_copy/size:1024/align:64";
  r.aggregates = aggregate_summary{12, 0.5, 0.49, 0.01, std::nullopt, std::nullopt};
  run.results.push_back(r);
  const run_document back = run_from_json(json::parse(json::serialize(to_json(run), true), "x"), "x");
  CHECK(back.env.harness == "gbench 1.7.1");
  CHECK(back.env.env_id == run.env.env_id);
  const run_result& got = back.results.back();
  CHECK(got.params == r.params);
  CHECK(got.origin == r.origin);
  REQUIRE(got.aggregates);
  CHECK(got.aggregates->count == 12);
  CHECK(got.aggregates->median_ms == 0.49);
  CHECK(!got.aggregates->min_ms);
  CHECK(got.samples_ms.empty());

  auto doc = to_json(run);
  doc.at("results").as_array().back().as_object()["samples_ms"] = boost::json::array{1.0};
  try {
    run_from_json(doc, "imported.json");
    FAIL("samples and aggregates together were accepted");
  } catch (const error& e) {
    CHECK(std::string(e.what()) ==
          "imported.json: $.results[1].aggregates: a result has samples_ms or aggregates, "
          "not both (aggregates stand in for samples a harness did not keep)");
  }
}

TEST_CASE("a run with an unknown commit leaves the key out, and reports say unknown") {
  run_document run = sample_run();
  run.commit.clear();
  const auto doc = to_json(run);
  CHECK_FALSE(doc.as_object().contains("commit"));
  CHECK(run_from_json(doc, "run.json").commit.empty());

  verdict_document v;
  v.verdict = overall::pass;
  v.reason = "1 configurations: 1 equivalent, 0 faster";
  v.baseline = baseline_ref{"3", "", ""};
  CHECK(render_verdict_text(v).find("baseline: run 3 (commit unknown)\n") != std::string::npos);
  CHECK(render_verdict_markdown(v).find("Baseline: run `3` at an unknown commit.") != std::string::npos);
}

TEST_CASE("every verdict table names its statistic and the one-sided rule") {
  verdict_document v;
  v.verdict = overall::block;
  v.reason = "1 slower";
  config_verdict c;
  c.key = {"k", "eager", "float32", 8};
  c.result = decision::slower;
  c.base_ms = 1.0;
  c.head_ms = 1.1;
  c.ratio = 1.1;
  v.configs.push_back(c);
  const std::string legend =
      "Base and head median: the median of each worker process's samples, geometric mean over the processes (one "
      "process: the median of all its samples), the statistic the verdict compares.";
  const std::string rule =
      "Rule: faster/slower only when P >= 0.95 that the median ratio lies outside ±2% (2000-draw Bayesian "
      "bootstrap, at least 8 samples a side): a one-sided rule, so a slower's interval shown (two-sided, 95%) may "
      "reach below 1.02 while its 5% quantile lies above it";
  const std::string text = render_verdict_text(v);
  CHECK(text.find(legend + " Ratio: head over base of it.\n" + rule + ".\n") != std::string::npos);
  const std::string markdown = render_verdict_markdown(v);
  CHECK(markdown.find(legend + " Ratio: head over base of it.\n\n" + rule) != std::string::npos);
  v.configs[0].pairing = rnx::pairing_mode::in_process;
  CHECK(render_verdict_text(v).find(" Ratio of a paired in-process configuration: the geometric mean over processes "
                                    "of the median per-block head/base ratio, not head over base of those columns.") !=
        std::string::npos);
}
