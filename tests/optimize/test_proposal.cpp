// The proposal without the loop: branch numbering and plumbing that leaves HEAD, index and tree alone; the
// pull-request call against a local stand-in for the GitHub API; manifest retargeting; the attempts table, with a
// candidate's hostile text quoted in it.
#include "fake_http_server.hpp"

#include "../support/markdown_probe.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/optimize/loop.hpp"
#include "rnx/common/process.hpp"

#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <toml++/toml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace rnx::optimize;
using rnx::process_options;
using rnx::process_result;
using rnx::run_process;
namespace fs = std::filesystem;

namespace {

std::string git(const fs::path& dir, std::vector<std::string> args, const std::string& input = {}) {
  args.insert(args.begin(), {"git", "-C", dir.string()});
  process_options o;
  o.input = input;
  process_result r = run_process(args, o);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return r.out.substr(0, r.out.find_last_not_of('\n') + 1);
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p);
  out << text;
}

}  // namespace

TEST_CASE("proposal commit: numbered branches, one commit on HEAD, the user's staged and unstaged work untouched") {
  fs::path root = fs::temp_directory_path() / ("rnx-test-proposal-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::path dir = root / "work";
  git(root.parent_path(), {"init", "--quiet", "-b", "main", dir.string()});
  git(dir, {"config", "user.email", "t@example.com"});
  git(dir, {"config", "user.name", "t"});
  write(dir / "kernels" / "k.py", "def run(x):\n    return x * 2\n");
  write(dir / "README", "hello\n");
  git(dir, {"add", "."});
  git(dir, {"commit", "--quiet", "-m", "init"});
  std::string head = git(dir, {"rev-parse", "HEAD"});
  // Work in progress the proposal must not pick up or disturb.
  write(dir / "README", "staged change\n");
  git(dir, {"add", "README"});
  write(dir / "kernels" / "k.py", "def run(x):\n    return x + x  # unstaged\n");

  commit_request req;
  req.repo = dir / "kernels";
  req.kernel = "k";
  req.file = dir / "kernels" / "k.py";
  req.new_source = "def run(x):\n    return x.mul(2)\n";
  req.message = "optimize(k): faster\n\n| table |\n";
  commit_proposal first = create_proposal_commit(req);
  CHECK(first.branch == "rnx/optimize/k-1");
  CHECK(first.parent == head);
  CHECK(first.base_branch == "main");
  CHECK(first.path_in_repo == "kernels/k.py");
  CHECK(git(dir, {"rev-parse", first.branch}) == first.commit);
  CHECK(git(dir, {"show", first.commit + ":kernels/k.py"}) + "\n" == req.new_source);
  CHECK(git(dir, {"show", first.commit + ":README"}) == "hello");  // HEAD's, not the staged one
  CHECK(git(dir, {"log", "-1", "--format=%B", first.commit}) == "optimize(k): faster\n\n| table |");
  CHECK(git(dir, {"rev-parse", "HEAD"}) == head);
  CHECK(git(dir, {"diff", "--cached", "--name-only"}) == "README");
  CHECK(git(dir, {"diff", "--name-only"}) == "kernels/k.py");

  commit_proposal second = create_proposal_commit(req);
  CHECK(second.branch == "rnx/optimize/k-2");
  CHECK(git(dir, {"rev-parse", first.branch}) == first.commit);

  // The pull request: pushed branch, the exact request, GitHub's 422 message reported.
  git(root, {"init", "--quiet", "--bare", (root / "origin.git").string()});
  git(dir, {"remote", "add", "origin", (root / "origin.git").string()});
  rnx::testing::fake_http_server github;
  github.push({502, "bad gateway", {}, {}});
  github.push({201, R"({"number": 5, "html_url": "https://example/pull/5"})", {}, {}});
  github.push(
      {422, R"({"message": "Validation Failed", "errors": [{"message": "A pull request already exists"}]})", {}, {}});
  pull_request_options o;
  o.api_url = github.url() + "/";
  o.repository = "o/r";
  o.token = "t0k";
  o.base = "main";
  o.title = "optimize(k): faster";
  o.body = "| table |";
  pull_request pr = open_pull_request(first, o);
  CHECK(pr.number == 5);
  CHECK(pr.html_url == "https://example/pull/5");
  CHECK(git(root / "origin.git", {"rev-parse", first.branch}) == first.commit);
  auto reqs = github.requests();
  REQUIRE(reqs.size() == 2);  // the 502 was retried
  CHECK(reqs[1].target == "/repos/o/r/pulls");
  boost::json::value body = boost::json::parse(reqs[1].body);
  CHECK(body.at("title").as_string() == "optimize(k): faster");
  CHECK(body.at("head").as_string() == "rnx/optimize/k-1");
  CHECK(body.at("base").as_string() == "main");
  CHECK(body.at("body").as_string() == "| table |");
  CHECK(body.at("maintainer_can_modify").as_bool());
  CHECK_THROWS_WITH_AS(open_pull_request(first, o), doctest::Contains("A pull request already exists"), rnx::error);
  o.token.clear();
  CHECK_THROWS_WITH_AS(open_pull_request(first, o), doctest::Contains("GITHUB_TOKEN"), rnx::error);

  req.repo = root;  // not a repository
  CHECK_THROWS_WITH_AS(create_proposal_commit(req), doctest::Contains("not inside a git repository"), rnx::error);
  fs::remove_all(root);
}

TEST_CASE("retarget_manifest: absolute kernel paths, the candidate swapped in, [optimize] gone, inputs in order") {
  std::string text =
      "[project]\nname = \"p\"\n\n[[kernel]]\nname = \"a\"\npath = \"kernels/a.py\"\n"
      "inputs = { q = \"B,4\", k = \"B,4\", v = \"B,4\" }\n\n[[kernel]]\nname = \"b\"\npath = 'b.py'\n\n"
      "[optimize]\nrewriter = \"openai\"\n";
  std::string out = retarget_manifest(text, "rnx.toml", "/repo", "a", "/tmp/w/a_rnx_candidate_1.py");
  toml::table t = toml::parse(out);
  CHECK(t["kernel"][0]["path"].value<std::string>() == "/tmp/w/a_rnx_candidate_1.py");
  CHECK(t["kernel"][1]["path"].value<std::string>() == "/repo/b.py");
  CHECK_FALSE(t.contains("optimize"));
  CHECK(out.find("inputs = { q = \"B,4\", k = \"B,4\", v = \"B,4\" }") != std::string::npos);
  std::string original = retarget_manifest(text, "rnx.toml", "/repo", "a", {});
  CHECK(toml::parse(original)["kernel"][0]["path"].value<std::string>() == "/repo/kernels/a.py");
}

TEST_CASE("attempts table: one row per attempt with decision, correctness, audit, speedup and P(faster)") {
  optimize_result r;
  r.kernel = "k";
  attempt kept;
  kept.index = 1;
  kept.status = attempt_status::kept;
  kept.kept = true;
  kept.correct = kept.clean = true;
  kept.audit = rnx::verify::verify_report{};
  kept.speedup = 2.5;
  kept.p_faster = 0.999;
  attempt cheat;
  cheat.index = 2;
  cheat.status = attempt_status::rejected;
  cheat.correct = true;
  cheat.audit = rnx::verify::verify_report{};
  cheat.reason = "audit/static_scan: patches time.perf_counter";
  attempt failed;
  failed.index = 3;
  failed.status = attempt_status::error;
  failed.reason = "rewriter command 'x' exited with status 1";
  r.attempts = {kept, cheat, failed};
  r.best = 0;
  std::string md = render_attempts_markdown(r);
  CHECK(md.find("| Rewrite | Decision | Correct | Anti-cheat | Speedup (P(faster)) | Why |") != std::string::npos);
  CHECK(md.find("| candidate 1 | **kept** | yes | clean | 2.50× (P(faster) 0.999) |") != std::string::npos);
  // The reason comes from the candidate's run: escaped, so none of it can become Markdown.
  CHECK(
      md.find("| candidate 2 | rejected | yes | **cheat** | - | audit/static\\_scan: patches time.perf\\_counter |") !=
      std::string::npos);
  CHECK(md.find("| candidate 3 | error | - | - | - |") != std::string::npos);
  CHECK(proposal_title(r) == "optimize(k): 2.50x faster, P(faster) 0.999");
}

TEST_CASE("attempts table and PR body: a candidate's words are quoted, unlinked, without the runner's credentials") {
  ::setenv("RNX_TEST_SECRET_TOKEN", "rnx-test-secret-5f1c9a7e", 1);
  optimize_result r;
  r.kernel = "k";
  attempt hostile;
  hostile.index = 1;
  hostile.status = attempt_status::rejected;
  hostile.audit = rnx::verify::verify_report{};
  hostile.audit->checks = {{rnx::verify::check_group::correctness, "smoke", rnx::verify::outcome::fail,
                            "raised RuntimeError: @octocat Closes #1\n````\ntoken rnx-test-secret-5f1c9a7e", 0}};
  hostile.reason = "correctness/smoke: " + hostile.audit->checks[0].detail;
  r.attempts = {hostile};
  for (const std::string& md : {render_attempts_markdown(r), render_proposal_body(r)}) {
    CAPTURE(md);
    CHECK(rnx::test_support::github_links(rnx::test_support::outside_code(md)).empty());
    CHECK(md.find("rnx-test-secret-5f1c9a7e") == std::string::npos);
    CHECK(md.find("token [redacted RNX_TEST_SECRET_TOKEN]") != std::string::npos);
    CHECK(md.find("<details><summary>Reasons in full</summary>") != std::string::npos);
    CHECK(md.find("`````text\n") != std::string::npos);  // a fence longer than the candidate's
  }
  CHECK(render_attempts_text(r).find("rnx-test-secret-5f1c9a7e") == std::string::npos);
  CHECK(rnx::json::serialize(to_json(r)).find("rnx-test-secret-5f1c9a7e") == std::string::npos);
  ::unsetenv("RNX_TEST_SECRET_TOKEN");
}

TEST_CASE("commit message and PR body: a candidate's words never in the commit, an excerpt without secrets in the PR") {
  // A candidate that read a .env and a service-account key beside the kernel and raised with them (made-up values).
  const std::string planted =
      "RuntimeError: DEBUG=false\nGITHUB_TOKEN=ghp_Zq7Lw2Vx9Kc4Nb8Hj3Tf6Rd1Sg5Pm0Ya2Ue7\n"
      "AWS_SECRET_ACCESS_KEY=q8Vn2Xc5Lm9Kj4Hg7Fd1Sa6Zx3Cv0Bn8Mq2Wp5Er\n"
      "{\"type\": \"service_account\", \"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQ"
      "\\n-----END PRIVATE KEY-----\\n\", \"client_email\": \"ci@demo-274183.iam.gserviceaccount.com\"}\n" +
      std::string(1000, 'x');
  optimize_result r;
  r.kernel = "k";
  r.rewriter = "command ./tools/rewriter.py";
  attempt kept;
  kept.index = 1;
  kept.status = attempt_status::kept;
  kept.kept = kept.correct = kept.clean = true;
  kept.audit = rnx::verify::verify_report{};
  kept.audit->checks = {{rnx::verify::check_group::correctness, "smoke", rnx::verify::outcome::pass,
                         "8 cases; the candidate printed ghp_Zq7Lw2Vx9Kc4Nb8Hj3Tf6Rd1Sg5Pm0Ya2Ue7", 0}};
  kept.speedup = 2.5;
  kept.p_faster = 0.999;
  kept.reason = "faster in 1 of 1 configurations, none slower";
  attempt thief;
  thief.index = 2;
  thief.status = attempt_status::rejected;
  thief.audit = rnx::verify::verify_report{};
  thief.reason = "correctness/smoke: " + planted;
  r.attempts = {kept, thief};
  r.best = 0;
  const std::vector<std::string> secrets = {"ghp_Zq7Lw2Vx9Kc4", "q8Vn2Xc5Lm9Kj4Hg", "MIIEvQIBADAN", "ci@demo-274183"};

  const std::string commit = render_commit_message(r);
  CAPTURE(commit);
  CHECK(commit.rfind("optimize(k): 2.50x faster, P(faster) 0.999\n\n", 0) == 0);
  CHECK(commit.find("| candidate 1 | **kept** | yes | clean | 2.50× (P(faster) 0.999) |\n") != std::string::npos);
  CHECK(commit.find("| candidate 2 | rejected | no | failed | - |\n") != std::string::npos);
  for (const char* words : {"RuntimeError", "DEBUG=false", "service_account", "8 cases", "faster in 1 of 1", "Why",
                            "Reasons in full", "[redacted", "removed:"}) {
    CHECK_MESSAGE(commit.find(words) == std::string::npos, "the commit message holds " << words);
  }
  for (const auto& secret : secrets) CHECK(commit.find(secret) == std::string::npos);

  const std::string body = render_proposal_body(r);
  CAPTURE(body);
  for (const auto& secret : secrets) CHECK(body.find(secret) == std::string::npos);
  CHECK(body.find("DEBUG=false") != std::string::npos);  // what is not a secret stays
  CHECK(body.find("secrets removed: ") != std::string::npos);
  CHECK(body.find("8 cases; the candidate printed \\[redacted github token\\] \\[1 secret removed: github token\\]") !=
        std::string::npos);
  // An excerpt: a few hundred bytes of the candidate's text, not its kilobyte of padding.
  CHECK(body.find(std::string(400, 'x')) == std::string::npos);
  CHECK(body.find(std::string(100, 'x')) != std::string::npos);
  const std::string record = rnx::json::serialize(to_json(r));
  for (const auto& secret : secrets) CHECK(record.find(secret) == std::string::npos);
}

TEST_CASE("attempt status: every value's text parses back to it; other text does not parse") {
  for (attempt_status s :
       {attempt_status::error, attempt_status::rejected, attempt_status::faster, attempt_status::slower,
        attempt_status::equivalent, attempt_status::abstain, attempt_status::broken, attempt_status::kept}) {
    CHECK(attempt_status_from_string(to_string(s)) == s);
  }
  CHECK(std::string(to_string(attempt_status::kept)) == "kept");
  CHECK(std::string(to_string(attempt_status::faster)) == "faster");
  CHECK_FALSE(attempt_status_from_string("KEPT").has_value());
  CHECK_FALSE(attempt_status_from_string("").has_value());
}
