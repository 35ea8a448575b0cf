// Unit tests of the gate's pieces: GitHub context and payloads, comment commands, Link pagination,
// step outputs, annotations, comment markers, commit statuses and policy resolution.
#include "gate_bench.hpp"
#include "gate_context.hpp"
#include "gate_report.hpp"
#include "gate_settings.hpp"
#include "rnx/http/github.hpp"

#include "rnx/common/bench_job.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/manifest.hpp"
#include "rnx/common/report.hpp"
#include "rnx/common/speed_of_light.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace {

using namespace rnx;
using namespace rnx::gate;
using rnx::http::can_write;
using rnx::http::next_page_url;

struct temp_file {
  std::filesystem::path path;
  explicit temp_file(const std::string& text) {
    path = std::filesystem::temp_directory_path() /
           ("rnx-gate-test-" + std::to_string(reinterpret_cast<std::uintptr_t>(this)) + ".json");
    std::ofstream(path) << text;
  }
  ~temp_file() { std::filesystem::remove(path); }
};

env_lookup env_of(std::map<std::string, std::string> vars) {
  return [vars](std::string_view name) {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::string() : it->second;
  };
}

// Splits `name<<DELIM\nvalue\nDELIM` entries back, as the runner does.
std::map<std::string, std::string> parse_outputs(const std::string& text) {
  std::map<std::string, std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    std::string header = text.substr(pos, eol - pos);
    auto mark = header.find("<<");
    REQUIRE(mark != std::string::npos);
    std::string name = header.substr(0, mark);
    std::string delimiter = header.substr(mark + 2);
    std::size_t end = text.find("\n" + delimiter + "\n", eol);
    REQUIRE(end != std::string::npos);
    out[name] = text.substr(eol + 1, end - eol - 1);
    pos = end + delimiter.size() + 2;
  }
  return out;
}

}  // namespace

TEST_CASE("outside Actions the context is local") {
  auto ctx = read_github_context(env_of({}));
  CHECK(ctx.event == event_kind::local);
  CHECK_FALSE(ctx.in_actions);
  CHECK(ctx.api_url == "https://api.github.com");
}

TEST_CASE("a pull_request payload gives the head commit, branches and number") {
  temp_file payload(R"({"number": 12, "pull_request": {"number": 12,
      "head": {"ref": "feature", "sha": "abc123", "repo": {"full_name": "someone/fork"}},
      "base": {"ref": "main", "sha": "def456", "repo": {"full_name": "octo/kernels"}}}})");
  auto ctx = read_github_context(env_of({{"GITHUB_ACTIONS", "true"},
                                         {"GITHUB_EVENT_NAME", "pull_request"},
                                         {"GITHUB_EVENT_PATH", payload.path.string()},
                                         {"GITHUB_REPOSITORY", "octo/kernels"},
                                         {"GITHUB_SHA", "merge0"},
                                         {"GITHUB_API_URL", "http://127.0.0.1:9/"},
                                         {"GITHUB_RUN_ID", "77"}}));
  CHECK(ctx.event == event_kind::pull_request);
  CHECK(ctx.pull_request == 12);
  CHECK(ctx.commit == "abc123");  // the head, not GITHUB_SHA's merge commit
  CHECK(ctx.branch == "feature");
  CHECK(ctx.base_branch == "main");
  CHECK(ctx.base_commit == "def456");
  CHECK(ctx.pull_request_from_fork);
  CHECK(ctx.api_url == "http://127.0.0.1:9");
  CHECK(ctx.run_url == "https://github.com/octo/kernels/actions/runs/77");
}

TEST_CASE("push, schedule and workflow_dispatch are runs of the branch itself") {
  temp_file payload(R"({"ref": "refs/heads/main", "after": "fff000"})");
  for (const char* name : {"push", "schedule", "workflow_dispatch"}) {
    auto ctx = read_github_context(env_of({{"GITHUB_EVENT_NAME", name},
                                           {"GITHUB_EVENT_PATH", payload.path.string()},
                                           {"GITHUB_REF", "refs/heads/main"},
                                           {"GITHUB_SHA", "fff000"}}));
    CHECK(ctx.event == event_kind::push_like);
    CHECK(ctx.branch == "main");
    CHECK(ctx.base_branch == "main");
    CHECK_FALSE(ctx.pull_request);
  }
  auto tag = env_of(
      {{"GITHUB_EVENT_NAME", "push"}, {"GITHUB_EVENT_PATH", payload.path.string()}, {"GITHUB_REF", "refs/tags/v1"}});
  CHECK_THROWS_WITH_AS(read_github_context(tag), doctest::Contains("not a branch"), rnx::error);
}

TEST_CASE("an issue_comment payload gives the command, its author and the PR") {
  temp_file payload(R"({"issue": {"number": 3, "pull_request": {"url": "x"}},
      "comment": {"id": 99, "body": "/rnx accept new tiling", "user": {"login": "alice"}}})");
  auto ctx = read_github_context(
      env_of({{"GITHUB_EVENT_NAME", "issue_comment"}, {"GITHUB_EVENT_PATH", payload.path.string()}}));
  CHECK(ctx.event == event_kind::issue_comment);
  CHECK(ctx.comment_on_pull_request);
  CHECK(ctx.pull_request == 3);
  CHECK(ctx.comment_id == 99);
  CHECK(ctx.comment_author == "alice");
}

TEST_CASE("bad payloads name the file and the field") {
  temp_file payload(R"({"pull_request": {"number": 4, "head": {"ref": "x"}}})");
  auto env = env_of({{"GITHUB_EVENT_NAME", "pull_request"}, {"GITHUB_EVENT_PATH", payload.path.string()}});
  CHECK_THROWS_WITH_AS(read_github_context(env), doctest::Contains("$.pull_request.head.sha"), rnx::error);
  CHECK_THROWS_WITH_AS(read_github_context(env), doctest::Contains(payload.path.string().c_str()), rnx::error);
  temp_file malformed("{\"pull_request\": ");
  auto bad = env_of({{"GITHUB_EVENT_NAME", "pull_request"}, {"GITHUB_EVENT_PATH", malformed.path.string()}});
  CHECK_THROWS_AS(read_github_context(bad), rnx::error);
  auto missing = env_of({{"GITHUB_EVENT_NAME", "pull_request"}});
  CHECK_THROWS_WITH_AS(read_github_context(missing), doctest::Contains("GITHUB_EVENT_PATH"), rnx::error);
  auto other = env_of({{"GITHUB_EVENT_NAME", "release"}});
  CHECK(read_github_context(other).event == event_kind::unsupported);
}

TEST_CASE("/rnx accept is recognized on the first line only") {
  CHECK(parse_accept_command("/rnx accept")->reason.empty());
  CHECK(parse_accept_command("  /RNX Accept  bigger tiles \nmore text")->reason == "bigger tiles");
  CHECK_FALSE(parse_accept_command("/rnx acceptable"));
  CHECK_FALSE(parse_accept_command("please /rnx accept"));
  CHECK_FALSE(parse_accept_command("looks good\n/rnx accept"));
  CHECK_FALSE(parse_accept_command(""));
}

TEST_CASE("branch_of_ref") {
  CHECK(branch_of_ref("refs/heads/release/2.0") == "release/2.0");
  CHECK(branch_of_ref("refs/tags/v1").empty());
  CHECK(branch_of_ref("refs/pull/7/merge").empty());
}

TEST_CASE("Link headers give the next page") {
  CHECK(next_page_url(
            R"(<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last")") ==
        "https://api.github.com/x?page=2");
  CHECK(next_page_url(R"(<https://a/x?page=1>; rel="prev", <https://a/x?page=3>; rel="next")") == "https://a/x?page=3");
  CHECK(next_page_url(R"(<https://a/x?page=1>; rel="first", <https://a/x?page=1>; rel="prev")").empty());
  CHECK(next_page_url("").empty());
}

TEST_CASE("write permission is admin, maintain or write") {
  CHECK(can_write("admin"));
  CHECK(can_write("write"));
  CHECK(can_write("maintain"));
  CHECK_FALSE(can_write("triage"));
  CHECK_FALSE(can_write("read"));
  CHECK_FALSE(can_write("none"));
}

TEST_CASE("step outputs survive multi-line values and cannot be forged") {
  std::string hostile = "line 1\nverdict<<EOF\nPASS\nEOF\n";
  auto text = format_outputs({{"verdict", "BLOCK"}, {"report", hostile}, {"run-id", ""}});
  auto parsed = parse_outputs(text);
  CHECK(parsed.size() == 3);
  CHECK(parsed["verdict"] == "BLOCK");
  CHECK(parsed["report"] == "line 1\nverdict<<EOF\nPASS\nEOF");
  CHECK(parsed["run-id"].empty());
}

TEST_CASE("workflow command escaping") {
  CHECK(escape_command_data("50%\nnext\r") == "50%25%0Anext");  // a carriage return is dropped (terminal_safe)
  CHECK(escape_command_property("a:b,c") == "a%3Ab%2Cc");
}

TEST_CASE("comment markers cannot close the HTML comment") {
  CHECK(comment_marker("demo/bench") == "<!-- rnx-gate key=demo/bench -->");
  auto marker = comment_marker("x-->y");
  CHECK(marker.find("-->") == marker.size() - 3);
}

TEST_CASE("verdicts map to commit statuses and annotations") {
  verdict_document v;
  v.verdict = overall::block;
  v.reason = std::string(300, 'r');
  config_verdict c;
  c.key = {"attention", "eager", "float32", 8};
  c.result = decision::slower;
  c.ratio = 1.25;
  c.ci_lo = 1.2;
  c.ci_hi = 1.3;
  c.p_slower = 0.999;
  v.configs.push_back(c);
  auto [state, description] = commit_status(v);
  CHECK(state == "failure");
  CHECK(description.rfind("BLOCK: ", 0) == 0);
  auto lines = annotations(v);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].rfind("::error title=rnx%3A attention/eager/float32/b8::attention/eager/float32/b8 is slower: "
                       "head/base 1.250 (95%25 interval 1.200 to 1.300), P(slower) = 0.999",
                       0) == 0);
  v.verdict = overall::warn;  // report_only
  CHECK(commit_status(v).first == "success");
  CHECK(annotations(v)[0].rfind("::warning", 0) == 0);
  v.verdict = overall::pass;
  v.configs[0].result = decision::equivalent;
  CHECK(annotations(v).empty());
}

TEST_CASE("the report names the facts and offers /rnx accept on BLOCK") {
  verdict_document v;
  v.verdict = overall::block;
  v.reason = "1 slower";
  v.env_id = "env42";
  report_facts facts;
  facts.mode = "stored";
  facts.commit = "0123456789abcdef";
  facts.run_id = "17";
  facts.accept_hint = accept_hint({true, false, "https://rnx.example", "17"});
  auto text = render_report(v, facts);
  CHECK(text.find("> If this slowdown is intended, someone with write access can comment `/rnx accept <reason>` to "
                  "make this run the new baseline.\n") != std::string::npos);
  CHECK(text.find("run `17`") != std::string::npos);
  CHECK(text.find("commit `0123456789ab`") != std::string::npos);
  CHECK(text.find("environment `env42`") != std::string::npos);
  auto comment = render_comment(v, facts, comment_marker("k"));
  CHECK(comment.rfind("<!-- rnx-gate key=k -->\n", 0) == 0);
  CHECK(text.find("Evidence for this run") == std::string::npos);  // no service URL known
  facts.run_url = "https://rnx.example/runs/17";
  facts.history = {{"softmax/eager/float32/b1", {1.0, 1.0, 2.0, 1.5}}};
  text = render_report(v, facts);
  CHECK(text.find("[Evidence for this run](https://rnx.example/runs/17)") != std::string::npos);
  CHECK(text.find("softmax/eager/float32/b1  \u2581\u2581\u2588\u2585  1.500 ms") != std::string::npos);
  facts.commit.clear();
  CHECK(render_report(v, facts).find("<sub>commit unknown · run `17`") != std::string::npos);
}

TEST_CASE("the report folds each head configuration's speed of light under the table, nearest the limit first") {
  run_document head;
  head.env.device = "NVIDIA H100 80GB HBM3";
  head.env.peaks = {{gemm_peak_name("bfloat16"), 7e14}, {std::string(copy_peak_name), 2.9e12}};
  auto result = [](const std::string& kernel, const std::string& dtype, double ms, std::optional<std::int64_t> flops,
                   std::optional<std::int64_t> bytes) {
    run_result r;
    r.kernel = kernel;
    r.runtime = "eager";
    r.dtype = dtype;
    r.batch = 1;
    r.samples_ms.assign(12, ms);
    if (flops || bytes) r.work = work_info{flops, bytes, work_source::counted};
    return r;
  };
  const std::int64_t n = 8192;
  head.results.push_back(result("copy", "float32", 0.21, std::nullopt, std::int64_t{2} << 28));  // 88.2%, sheet 76.3%
  head.results.push_back(result("gemm", "bfloat16", 1.75, 2 * n * n * n, std::nullopt));         // 89.8%, sheet 63.5%
  head.results.push_back(result("native", "float32", 0.5, std::nullopt, std::nullopt));          // no work: no row
  const auto rows = light_rows(head);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].config == "gemm/eager/bfloat16/b1");
  CHECK(rows[0].measured == "90% flop");
  CHECK(rows[0].sheet == "63% flop");
  CHECK(rows[1].measured == "88% mem");
  verdict_document v;
  v.verdict = overall::pass;
  report_facts facts;
  facts.light = rows;
  facts.datasheet = "the H100 SXM datasheet";
  const auto text = render_report(v, facts);
  CHECK(text.find("<details><summary>Speed of light: the head against this machine's peaks</summary>") !=
        std::string::npos);
  CHECK(text.find(
            "| `gemm/eager/bfloat16/b1` | 90% flop | 63% flop |\n| `copy/eager/float32/b1` | 88% mem | 76% mem |") !=
        std::string::npos);
  CHECK(text.find("datasheet: the H100 SXM datasheet") != std::string::npos);
  const auto terminal = render_light_text(rows, "the H100 SXM datasheet");
  CHECK(terminal.find("  gemm/eager/bfloat16/b1  90% flop  63% flop\n  copy/eager/float32/b1   88% mem   76% mem\n") !=
        std::string::npos);
  CHECK(render_light_text({}, "x").empty());
  facts.light.clear();
  CHECK(render_report(v, facts).find("Speed of light") == std::string::npos);
}

TEST_CASE("the accept advice names the command of the mode in use") {
  // A pull request whose runs are in a service: the comment flow.
  CHECK(accept_hint({true, false, "https://rnx.example", "17"}) ==
        "If this slowdown is intended, someone with write access can comment `/rnx accept <reason>` to make this run "
        "the new baseline.");
  // A pull request on the embedded store: the comment's workflow cannot reach the job's cached store.
  CHECK(accept_hint({true, true, ".rnx/baselines.db", "17"}) ==
        "If this slowdown is intended: this run is in the embedded store of this job's cache, which a `/rnx accept` "
        "comment cannot reach (that needs the service, `[service] url`). Merged anyway, the push build stores the "
        "merged code as the new baseline.");
  // Outside GitHub: the rnx accept command on the same store or service.
  CHECK(accept_hint({false, true, "local.db", "4"}) ==
        "If this slowdown is intended, make this run the new baseline: `rnx accept --run-id 4 --store local.db "
        "--reason \"...\"`.");
  CHECK(accept_hint({false, false, "http://127.0.0.1:8722", "4"}) ==
        "If this slowdown is intended, make this run the new baseline: `rnx accept --run-id 4 --service-url "
        "http://127.0.0.1:8722 --reason \"...\"`.");
  CHECK(accept_hint({true, false, "https://rnx.example", ""}).empty());  // not stored: nothing to accept
}

TEST_CASE("text sparklines scale between the smallest and largest value") {
  CHECK(text_sparkline({}).empty());
  CHECK(text_sparkline({1, 2, 3, 4, 5, 6, 7, 8}) == "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588");
  CHECK(text_sparkline({2, 2, 2}) == "\u2584\u2584\u2584");  // flat: the middle, not the floor
}

TEST_CASE("policy: [gate], then [gate.runners.LABEL], then flags") {
  auto m = parse_manifest(R"(
[project]
name = "demo"
[[kernel]]
name = "k"
path = "k.py"
inputs = { x = "B,4" }
[gate]
rope = 0.03
probability = 0.9
[gate.runners.github-hosted]
rope = 0.10
on_abstain = "pass"
)",
                          "rnx.toml", std::filesystem::current_path());
  policy_flags flags;
  auto plain = resolve_policy(&m, flags, "");
  CHECK(plain.policy.rope == doctest::Approx(0.03));
  CHECK(plain.runner_label.empty());

  auto hosted = resolve_policy(&m, flags, "github-hosted");  // RUNNER_ENVIRONMENT picks the table
  CHECK(hosted.policy.rope == doctest::Approx(0.10));
  CHECK(hosted.policy.probability == doctest::Approx(0.9));  // inherited from [gate]
  CHECK(hosted.policy.on_abstain == overall::pass);
  CHECK(hosted.runner_label == "github-hosted");
  CHECK(resolve_policy(&m, flags, "self-hosted").runner_label.empty());

  flags.overrides.rope = "0.05";
  flags.overrides.min_samples = "12";
  flags.overrides.on_abstain = "block";
  flags.overrides.report_only = true;
  auto overridden = resolve_policy(&m, flags, "github-hosted");
  CHECK(overridden.policy.rope == doctest::Approx(0.05));
  CHECK(overridden.policy.min_samples == 12);
  CHECK(overridden.policy.on_abstain == overall::block);
  CHECK(overridden.policy.report_only);

  policy_flags bad;
  bad.runner = "gpu";
  CHECK_THROWS_WITH_AS(resolve_policy(&m, bad, ""), doctest::Contains("github-hosted"), rnx::error);
  bad = {};
  bad.overrides.rope = "2%";
  CHECK_THROWS_WITH_AS(resolve_policy(&m, bad, ""), doctest::Contains("--rope"), rnx::error);
  bad = {};
  bad.overrides.min_samples = "3.5";
  CHECK_THROWS_WITH_AS(resolve_policy(&m, bad, ""), doctest::Contains("--min-samples"), rnx::error);
  bad = {};
  bad.overrides.probability = "0.3";
  CHECK_THROWS_WITH_AS(resolve_policy(&m, bad, ""), doctest::Contains("probability"), rnx::error);
  bad = {};
  bad.overrides.on_abstain = "maybe";
  CHECK_THROWS_AS(resolve_policy(&m, bad, ""), rnx::error);
}

TEST_CASE("a new configuration whose processes were far apart: its time with four digits and the unstable mark") {
  verdict_document v;
  v.verdict = overall::warn;
  v.reason = "1 new";
  config_verdict c;
  c.key = {"attention", "eager", "float32", 1};
  c.result = decision::new_config;
  c.head_ms = 1.0;  // the geometric mean of process medians 0.0668 and 14.97 ms (224x apart)
  c.head_unstable = true;
  c.reason = "not in the baseline run; measured unstable: process medians disagree: 0.0668, 14.97 ms (max/min 224x)";
  v.configs.push_back(c);
  report_facts facts;
  const std::string text = render_report(v, facts);
  INFO(text);
  CHECK(text.find("| `attention/eager/float32/b1` | - | 1.000 \u26a0 |") != std::string::npos);
  CHECK(text.find("| 1 |") == std::string::npos);
  CHECK(text.find("\u26a0: measured unstable") != std::string::npos);
  const std::string terminal = render_verdict_text(v);
  CHECK(terminal.find("1.000!") != std::string::npos);
  CHECK(terminal.find("!: measured unstable") != std::string::npos);
  // A stable time keeps its digits too, with no mark.
  v.configs[0].head_unstable = false;
  v.configs[0].head_ms = 12.5;
  CHECK(render_report(v, facts).find("| - | 12.50 |") != std::string::npos);
  CHECK(format_ms(1234.0) == "1234");
  CHECK(format_ms(0.08331) == "0.08331");
}

TEST_CASE("the rnx bench child gets its job as one typed file: the resolved policy to the bit") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rnx-bench-job-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  rnx::gate::bench_request request;
  request.config = "rnx.toml";
  request.out = (dir / "run.json").string();
  request.pair_ref = "main";
  request.kernels = {"softmax", "gelu"};
  request.batches = {1, 8};
  request.processes = 3;
  request.rope = 0.1 + 0.2;  // 0.30000000000000004: twelve digits would hand over 0.3
  request.probability = 0.9573124567891234;
  request.budget_ms = 1e-3;
  const std::string job = rnx::gate::bench_job_path(request);
  CHECK(job == (dir / "run.job.json").string());
  CHECK(rnx::gate::bench_arguments(job) ==
        std::vector<std::string>{rnx::gate::self_executable(), "bench", "--job", job});
  rnx::write_bench_job(request, job);
  const rnx::bench_job back = rnx::read_bench_job(job);
  CHECK(back.rope == request.rope);
  CHECK(back.probability == request.probability);
  CHECK(back.budget_ms == request.budget_ms);
  CHECK(back.kernels == request.kernels);
  CHECK(back.batches == request.batches);
  CHECK(back.processes == 3);
  CHECK_FALSE(back.max_processes);
  CHECK(back.pair_ref == "main");

  // Read strictly: an unknown key, a value of another type and another schema are refused, naming the key.
  auto refused = [&](const std::string& text) {
    std::ofstream(dir / "bad.json") << text;
    try {
      rnx::read_bench_job((dir / "bad.json").string());
    } catch (const rnx::error& e) {
      CHECK(e.code() == rnx::errc::invalid);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused(R"({"schema":"rnx.bench-job/v1","config":"rnx.toml","ropes":0.02})")
            .find("unknown key \"ropes\" (the keys are schema, config, out,") != std::string::npos);
  CHECK(refused(R"({"schema":"rnx.bench-job/v1","processes":"three"})").find("key \"processes\":") !=
        std::string::npos);
  CHECK(refused(R"({"schema":"rnx.run/v1"})").find("schema \"rnx.run/v1\" is not rnx.bench-job/v1") !=
        std::string::npos);
  std::filesystem::remove_all(dir);
}
