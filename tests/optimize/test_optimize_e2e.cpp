// End to end: `rnx optimize` in a temporary git repository with a scripted command rewriter. Candidate 1 is a
// genuine faster rewrite, 2 correct but slower, 3 a cheat, 4 one that raises with the contents of a .env and a
// service-account key planted beside the kernel, 5 one whose exception is written for the pull request (mentions,
// issue references, a fence, a credential): only 1 is kept, its branch and commit carry the tables and nothing a
// candidate wrote, and the pull request reaches a local stand-in for the GitHub API with the table in its body, 5's
// text quoted and no byte of 4's secrets anywhere. 6 is the original reading those files at import: it sees them
// neither in the verifier's sandbox nor in the benchmark's, so it stays the original.
#include "fake_http_server.hpp"

#include "../support/markdown_probe.hpp"

#include "rnx/common/json.hpp"
#include "rnx/common/text.hpp"
#include "rnx/common/process.hpp"

#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
namespace bj = boost::json;
using rnx::process_options;
using rnx::process_result;
using rnx::run_process;
using rnx::test_support::github_links;
using rnx::test_support::outside_code;
using rnx::testing::fake_http_server;

namespace {

std::string without_joiners(std::string text) {
  for (std::size_t at = text.find("\xE2\x80\x8D"); at != std::string::npos; at = text.find("\xE2\x80\x8D", at)) {
    text.erase(at, 3);
  }
  return text;
}

// What a published text (PR body, step summary) must not do with candidate 5's exception: link anyone or any issue,
// or carry the credential; its words are shown, unlinked, in a fenced block.
void check_quoted(const std::string& where, const std::string& text) {
  CAPTURE(where);
  const std::vector<std::string> links = github_links(outside_code(text));
  CHECK_MESSAGE(links.empty(), "live: " << (links.empty() ? "" : links.front()));
  CHECK(text.find("rnx-test-secret-5f1c9a7e") == std::string::npos);
  CHECK(without_joiners(text).find("@octocat @github/security-team Closes #1") != std::string::npos);
  CHECK(without_joiners(text).find("token [redacted RNX_TEST_SECRET_TOKEN]") != std::string::npos);
  CHECK(text.find("<details><summary>Reasons in full</summary>") != std::string::npos);
}

// The files a CI job may leave beside a kernel: a .env and a cloud login's service-account key. Every value below is
// made up for this test, in the formats of real credentials.
const std::string planted_env =
    "# local settings\n"
    "DEBUG=false\n"
    "GITHUB_TOKEN=ghp_Zq7Lw2Vx9Kc4Nb8Hj3Tf6Rd1Sg5Pm0Ya2Ue7\n"
    "AWS_ACCESS_KEY_ID=AKIA5QW3RT7YU2IO9PLK\n"
    "AWS_SECRET_ACCESS_KEY=q8Vn2Xc5Lm9Kj4Hg7Fd1Sa6Zx3Cv0Bn8Mq2Wp5Er\n"
    "DATABASE_URL=postgres://app:Pl4nted-Db-Pass-77@db.internal:5432/app\n"
    "OPENAI_API_KEY=sk-proj-Hs82Kd71Lw93Mq64Nz50Pb27Xc18Vy39Tr46\n"
    "DB_PASSWORD=Corr3ct-H0rse-Battery\n";
const std::string planted_key_body[] = {"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vq2Lx8Zt4Rk9Wm",
                                        "3Np6Hd1Jf5Gs0Tc8Yb2Qe7Uw4Ia9Ol3Kv6Xn1Mz5Pr8Sd2Fg7Hj0Kl4Bn9Cm3Vx6Zq",
                                        "Ty1Ru8Ei5Wo2Pa7Sd4Fg9Hj3Kl6Zx0Cv5Bn8Mq1We4Rt7Yu2Io9Pl3Ak6Sj0Dh5Fg"};
const std::string planted_key_id = "4f1c2b9a7e6d5c3b2a1f0e9d8c7b6a5f4e3d2c1b";
const std::string planted_client_email = "rnx-ci-deployer@demo-project-274183.iam.gserviceaccount.com";
const std::string planted_client_id = "109876543210987654321";

std::string planted_service_account() {
  std::string pem = "-----BEGIN PRIVATE KEY-----\\n";
  for (const auto& line : planted_key_body) pem += line + "\\n";
  pem += "-----END PRIVATE KEY-----\\n";
  return "{\n  \"type\": \"service_account\",\n  \"project_id\": \"demo-project-274183\",\n"
         "  \"private_key_id\": \"" +
         planted_key_id + "\",\n  \"private_key\": \"" + pem +
         "\",\n"
         "  \"client_email\": \"" +
         planted_client_email + "\",\n  \"client_id\": \"" + planted_client_id +
         "\",\n"
         "  \"token_uri\": \"https://oauth2.googleapis.com/token\"\n}\n";
}

// Each secret of the planted files, as it is written there (of the service account's e-mail address, the account's
// own part: its project's name is not a secret and stays in the file's project_id).
std::vector<std::string> planted_secrets() {
  std::vector<std::string> s = {"ghp_Zq7Lw2Vx9Kc4Nb8Hj3Tf6Rd1Sg5Pm0Ya2Ue7",
                                "AKIA5QW3RT7YU2IO9PLK",
                                "q8Vn2Xc5Lm9Kj4Hg7Fd1Sa6Zx3Cv0Bn8Mq2Wp5Er",
                                "Pl4nted-Db-Pass-77",
                                "sk-proj-Hs82Kd71Lw93Mq64Nz50Pb27Xc18Vy39Tr46",
                                "Corr3ct-H0rse-Battery",
                                planted_key_id,
                                "rnx-ci-deployer@demo",
                                planted_client_id};
  for (const auto& line : planted_key_body) s.push_back(line);
  return s;
}

// `text` as a reader sees it: Markdown's escaping backslashes and the joiners that unlink mentions taken out, so an
// escaped secret is still found.
std::string as_read(const std::string& text) {
  std::string out = without_joiners(text);
  out.erase(std::remove(out.begin(), out.end(), '\\'), out.end());
  return out;
}

// No piece of 10 bytes or more of any planted secret in `text` (as read).
void check_no_planted_secret(const std::string& where, const std::string& text) {
  CAPTURE(where);
  const std::string read_text = as_read(text);
  for (const auto& secret : planted_secrets()) {
    for (std::size_t at = 0; at + 10 <= secret.size(); ++at) {
      const std::string piece = secret.substr(at, 10);
      if (read_text.find(piece) != std::string::npos) {
        FAIL_CHECK(where << " holds \"" << piece << "\" of a planted secret");
        break;
      }
    }
  }
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p);
  out << text;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every regular file under `root` whose bytes hold `needle`.
std::vector<fs::path> files_holding(const fs::path& root, const std::string& needle) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && read(it->path()).find(needle) != std::string::npos) found.push_back(it->path());
  }
  return found;
}

struct repo {
  fs::path root;
  fs::path dir;     // the working clone
  fs::path remote;  // a bare repository standing in for origin

  explicit repo(const std::string& name) {
    root = fs::temp_directory_path() / ("rnx-e2e-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(root);
    dir = root / "work";
    remote = root / "origin.git";
    fs::create_directories(dir);
    // Mode 700, as mkdtemp makes it: started as root, the sandboxed verifier and benchmark workers (nobody) read
    // the kernels and manifests under it only because they are shown to them.
    fs::permissions(root, fs::perms::owner_all, fs::perm_options::replace);
    git_ok(root, {"init", "--quiet", "--bare", remote.string()});
    git_ok(dir, {"init", "--quiet", "-b", "main"});
    git_ok(dir, {"config", "user.email", "test@example.com"});
    git_ok(dir, {"config", "user.name", "rnx test"});
    git_ok(dir, {"remote", "add", "origin", remote.string()});
    fs::create_directories(dir / "kernels");
    fs::create_directories(dir / "tools");
    fs::copy_file(RNX_TEST_FIXTURES "/attention_loop.py", dir / "kernels" / "attention.py",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(RNX_TEST_FIXTURES "/rewriter.py", dir / "tools" / "rewriter.py",
                  fs::copy_options::overwrite_existing);
    // Left beside the kernel as a CI job leaves them (untracked, world-readable).
    write(dir / "kernels" / ".env", planted_env);
    write(dir / "kernels" / "gha-creds-5d2e8f1a9c3b.json", planted_service_account());
    std::ofstream(dir / ".gitignore") << ".env\ngha-creds-*.json\n";
    // Small shapes and few samples: the whole loop has to fit a two-core CI machine. Samples of 20 ms blocks
    // average out preemption by other jobs, which otherwise makes 1 ms samples bimodal (and the verdict abstain).
    // Five processes a side, because the machine's speed drifts 1.5-2x between processes and the two-level
    // posterior needs several of them to see past that to a 3-4x speedup.
    write(dir / "rnx.toml",
          "[project]\nname = \"optimize-e2e\"\n\n[defaults]\nruntimes = [\"eager\"]\ndtypes = [\"float32\"]\n"
          "batch = [2]\ndevice = \"cpu\"\n\n[[kernel]]\nname = \"attention\"\npath = \"kernels/attention.py\"\n"
          "inputs = { q = \"B,4,32,16\", k = \"B,4,32,16\", v = \"B,4,32,16\" }\n\n"
          "[bench]\nprocesses = 5\nmin_samples = 4\nsamples = 8\nbudget_ms = 200\nwarmup_ms = 50\nmin_sample_ms = 20\n"
          "threads = 1\n\n"
          "[gate]\nrope = 0.02\nprobability = 0.95\nmin_samples = 8\n\n"
          "[optimize]\nrewriter = \"command\"\ncommand = \"./tools/rewriter.py\"\nbudget = 3\ntimeout_s = 60\n");
    git_ok(dir, {"add", "."});
    git_ok(dir, {"commit", "--quiet", "-m", "slow attention"});
    git_ok(dir, {"push", "--quiet", "origin", "main"});
  }
  ~repo() { fs::remove_all(root); }

  static process_result git(const fs::path& where, std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-C", where.string()});
    return run_process(args);
  }
  static std::string git_ok(const fs::path& where, std::vector<std::string> args) {
    process_result r = git(where, std::move(args));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return r.out;
  }
  std::string head(const std::string& ref = "HEAD") const {
    std::string s = git_ok(dir, {"rev-parse", ref});
    return s.substr(0, s.find('\n'));
  }
};

process_result run_rnx(const repo& r, std::vector<std::string> args, std::map<std::string, std::string> env) {
  args.insert(args.begin(),
              {RNX_BINARY_PATH, "optimize", "--config", (r.dir / "rnx.toml").string(), "--kernel", "attention",
               "--work-dir", (r.root / "work-dir").string(), "--json-out", (r.root / "record.json").string()});
  fs::create_directories(r.root / "requests");
  env["RNX_TEST_REQUESTS"] = (r.root / "requests").string();
  process_options o;
  o.env_set = env;
  o.cwd = r.root;
  o.timeout = std::chrono::minutes(12);
  return run_process(args, o);
}

}  // namespace

TEST_CASE("rnx optimize: faster kept, slower and cheat reverted; branch, commit and pull request carry the tables") {
  repo r("three");
  const std::string main_before = r.head("main");
  const std::string original = read(r.dir / "kernels" / "attention.py");
  fake_http_server github;
  github.push(
      {201, R"({"number": 42, "html_url": "https://github.example/owner/demo/pull/42", "state": "open"})", {}, {}});

  process_result run = run_rnx(r, {"--open-pr", "--repo", "owner/demo", "--budget", "6"},
                               {{"GITHUB_TOKEN", "ghs_test_token"},
                                {"GITHUB_API_URL", github.url()},
                                {"GITHUB_BASE_REF", ""},
                                {"GITHUB_STEP_SUMMARY", (r.root / "summary.md").string()},
                                {"RNX_TEST_SECRET_TOKEN", "rnx-test-secret-5f1c9a7e"},
                                {"RNX_TEST_ORDER", "1,2,3,9,8,10"}});
  MESSAGE("stdout:\n" << run.out);
  MESSAGE("stderr:\n" << rnx::tail_lines(run.err, 40));
  REQUIRE(run.exit_code == 0);

  // The record of every attempt.
  bj::value record = rnx::json::parse_file(r.root / "record.json");
  const auto& attempts = record.at("attempts").as_array();
  REQUIRE(attempts.size() == 6);
  CHECK(attempts[0].at("status").as_string() == "kept");
  CHECK(attempts[0].at("kept").as_bool());
  CHECK(attempts[0].at("correct").as_bool());
  CHECK(attempts[0].at("clean").as_bool());
  CHECK(attempts[0].at("speedup").as_double() > 1.02);
  CHECK(attempts[0].at("p_faster").as_double() >= 0.95);
  CHECK(attempts[1].at("status").as_string() == "slower");
  CHECK(attempts[1].at("correct").as_bool());
  CHECK(attempts[1].at("clean").as_bool());
  CHECK_FALSE(attempts[1].at("kept").as_bool());
  CHECK(attempts[1].at("speedup").as_double() < 0.98);
  CHECK(attempts[2].at("status").as_string() == "rejected");
  CHECK_FALSE(attempts[2].at("clean").as_bool());
  CHECK_FALSE(attempts[2].at("kept").as_bool());
  CHECK(attempts[2].at("benchmark").is_null());  // a rejected candidate is never benchmarked
  // The record is JSON: the hostile candidate's words stay as they are, the credential does not.
  const std::string hostile(attempts[4].at("reason").as_string());
  CHECK(attempts[4].at("status").as_string() == "rejected");
  CHECK(hostile.find("@octocat @github/security-team Closes #1") != std::string::npos);
  CHECK(hostile.find("rnx-test-secret-5f1c9a7e") == std::string::npos);
  CHECK(hostile.find("[redacted RNX_TEST_SECRET_TOKEN]") != std::string::npos);
  // The original read files planted beside the kernel at import: refused by the verifier's sandbox, and by the
  // benchmark's, which sees the original's handed copy and never the kernel's own folder. It stays the original.
  const std::string beside(attempts[5].at("reason").as_string());
  CAPTURE(beside);
  CHECK(attempts[5].at("correct").as_bool());
  CHECK(attempts[5].at("status").as_string() != "broken");
  CHECK(attempts[5].at("status").as_string() != "error");
  CHECK(beside.find("read beside the kernel in the benchmark") == std::string::npos);
  CHECK(record.at("kept").as_int64() == 1);
  CHECK(record.at("profile").at("ops").as_array().size() > 0);

  // The rewriter saw the kernel, its profile and benchmark, and every earlier attempt with its verdict.
  bj::value third = rnx::json::parse_file(r.root / "requests" / "request-3.json");
  CHECK(third.at("kernel").at("source").as_string() == original);
  CHECK(third.at("benchmark").as_array().size() == 1);
  CHECK(third.at("profile").at("ops").as_array().size() > 0);
  REQUIRE(third.at("attempts").as_array().size() == 2);
  CHECK(third.at("attempts").at(0).at("decision").as_string() == "faster");
  CHECK(third.at("attempts").at(1).at("decision").as_string() == "slower");

  // The output table.
  CHECK(run.out.find("KEPT") != std::string::npos);
  CHECK(run.out.find("CHEAT") != std::string::npos);

  // One commit on a new branch, made on main's head, replacing only the kernel with candidate 1.
  const std::string branch = "rnx/optimize/attention-1";
  CHECK(record.at("proposal").at("branch").as_string() == branch);
  const std::string commit = r.head(branch);
  CHECK(record.at("proposal").at("commit").as_string() == commit);
  CHECK(r.head(branch + "^") == main_before);
  CHECK(repo::git_ok(r.dir, {"diff", "--name-only", main_before, commit}) == "kernels/attention.py\n");
  CHECK(repo::git_ok(r.dir, {"show", commit + ":kernels/attention.py"}) ==
        std::string(attempts[0].at("source").as_string()));
  std::string message = repo::git_ok(r.dir, {"log", "-1", "--format=%B", commit});
  CHECK(message.rfind("optimize(attention): ", 0) == 0);
  CHECK(message.find("| Rewrite | Decision | Correct | Anti-cheat | Speedup (P(faster)) |\n") != std::string::npos);
  CHECK(message.find("| candidate 1 | **kept** | yes | clean |") != std::string::npos);
  CHECK(message.find("| candidate 3 | rejected | ") != std::string::npos);
  CHECK(message.find("| **cheat** |") != std::string::npos);
  CHECK(message.find("### Benchmark: candidate 1 against the original") != std::string::npos);
  CHECK(message.find("### Correctness and anti-cheat audit") != std::string::npos);
  // Nothing a candidate wrote: not its words, not what was taken out of them, not the place they would go.
  for (const char* words : {"octocat", "Closes", "rnx-test-secret", "[redacted", "secrets removed", "Reasons in full",
                            "read beside the kernel", "service_account"}) {
    CHECK_MESSAGE(message.find(words) == std::string::npos, "the commit message holds " << words);
  }
  check_no_planted_secret("commit message", message);

  // Nothing written to the current branch, the index or the working tree.
  CHECK(r.head("main") == main_before);
  CHECK(repo::git_ok(r.dir, {"symbolic-ref", "--short", "HEAD"}) == "main\n");
  // Tracked files must be untouched. Untracked leftovers (an interpreter cache, say) are printed for
  // inspection; an earlier run showed some that could not yet be traced (docs/optimize.md).
  const std::string status = repo::git_ok(r.dir, {"status", "--porcelain", "--untracked-files=no"});
  CHECK_MESSAGE(status.empty(), "tracked files changed in the user's tree:\n" << status);
  const std::string untracked = repo::git_ok(r.dir, {"status", "--porcelain", "--untracked-files=all"});
  if (!untracked.empty()) MESSAGE("untracked files left in the user's tree:\n" << untracked);
  CHECK(read(r.dir / "kernels" / "attention.py") == original);

  // The branch was pushed, and the pull request reached the API with the tables in its body.
  CHECK(repo::git_ok(r.remote, {"rev-parse", branch}).substr(0, commit.size()) == commit);
  auto requests = github.requests();
  REQUIRE(requests.size() == 1);
  const auto& pr = requests[0];
  CHECK(pr.method == "POST");
  CHECK(pr.target == "/repos/owner/demo/pulls");
  CHECK(pr.header("authorization") == "Bearer ghs_test_token");
  CHECK(pr.header("accept") == "application/vnd.github+json");
  CHECK(pr.header("x-github-api-version") == "2022-11-28");
  CHECK_FALSE(pr.header("user-agent").empty());
  bj::value body = bj::parse(pr.body);
  CHECK(body.at("head").as_string() == branch);
  CHECK(body.at("base").as_string() == "main");
  CHECK(body.at("title").as_string() == message.substr(0, message.find('\n')));
  std::string pr_body(body.at("body").as_string());
  CHECK(pr_body.find("| candidate 1 | **kept** | yes | clean |") != std::string::npos);
  CHECK(pr_body.find("| candidate 2 | slower (reverted) | yes | clean |") != std::string::npos);
  CHECK(pr_body.find("### Correctness and anti-cheat audit") != std::string::npos);
  check_quoted("pull request body", pr_body);
  check_quoted("step summary", read(r.root / "summary.md"));
  CHECK(run.out.find("rnx-test-secret-5f1c9a7e") == std::string::npos);
  CHECK(record.at("pull_request").at("number").as_int64() == 42);

  // Candidate 4 raised with the planted .env and service-account key: its row says what was taken out, and no
  // byte of a secret reached the pull request, the step summary, the record, the output, the log, the rewriter
  // (the next request quotes the reason), or what the remote received.
  const std::string planted_reason(attempts[3].at("reason").as_string());
  CHECK(attempts[3].at("status").as_string() == "rejected");
  CHECK_MESSAGE(planted_reason.find("secrets removed: ") != std::string::npos, planted_reason);
  for (const char* kind : {"github token", "private key", "aws access key id", "service account email"}) {
    CHECK_MESSAGE(planted_reason.find(kind) != std::string::npos, kind << " not named in: " << planted_reason);
  }
  CHECK(pr_body.find("secrets removed: ") != std::string::npos);
  check_no_planted_secret("pull request (the whole request)", pr.body);
  check_no_planted_secret("step summary", read(r.root / "summary.md"));
  check_no_planted_secret("record", read(r.root / "record.json"));
  check_no_planted_secret("optimize.json", read(r.root / "work-dir" / "optimize.json"));
  check_no_planted_secret("stdout", run.out);
  check_no_planted_secret("stderr", run.err);
  check_no_planted_secret("the rewriter's fifth request", read(r.root / "requests" / "request-5.json"));
  check_no_planted_secret("the remote's commit messages", repo::git_ok(r.remote, {"log", "--all", "--format=%H%n%B"}));
  check_no_planted_secret("the remote's branch files", repo::git_ok(r.remote, {"grep", "-h", "-e", ".", branch, "--"}));
  for (const auto& secret : planted_secrets()) {
    // Outside the planted files, no file the run left (work folder, records, requests) holds a secret whole.
    std::vector<fs::path> holding = files_holding(r.root, secret);
    holding.erase(std::remove_if(holding.begin(), holding.end(),
                                 [&](const fs::path& p) { return p.parent_path() == r.dir / "kernels"; }),
                  holding.end());
    CHECK_MESSAGE(holding.empty(), secret << " found in " << (holding.empty() ? fs::path() : holding.front()));
  }
}

TEST_CASE("rnx optimize: nothing kept writes nothing; a missing token is a usage error before any work") {
  repo r("none");
  const std::string main_before = r.head("main");
  process_result run = run_rnx(r, {"--budget", "1", "--no-profile"}, {{"RNX_TEST_ORDER", "4"}});
  MESSAGE("stdout:\n" << run.out << "\nstderr:\n" << rnx::tail_lines(run.err, 20));
  REQUIRE(run.exit_code == 0);
  bj::value record = rnx::json::parse_file(r.root / "record.json");
  CHECK(record.at("attempts").at(0).at("status").as_string() == "rejected");
  CHECK_FALSE(record.at("attempts").at(0).at("correct").as_bool());
  CHECK(record.at("kept").is_null());
  CHECK(record.at("proposal").is_null());
  CHECK(repo::git_ok(r.dir, {"for-each-ref", "refs/heads/rnx/"}).empty());
  CHECK(r.head("main") == main_before);
  CHECK(run.out.find("nothing kept") != std::string::npos);

  process_result no_token = run_rnx(r, {"--open-pr", "--repo", "owner/demo"}, {{"GITHUB_TOKEN", ""}});
  CHECK(no_token.exit_code == 2);
  CHECK(no_token.err.find("GITHUB_TOKEN") != std::string::npos);

  process_result no_key = run_rnx(r, {"--rewriter", "anthropic"}, {{"ANTHROPIC_API_KEY", ""}});
  CHECK(no_key.exit_code == 2);
  CHECK(no_key.err.find("export ANTHROPIC_API_KEY=") != std::string::npos);
}

namespace {

const bj::object* audit_row(const bj::value& attempt, const std::string& name) {
  const bj::value& audit = attempt.at("audit");
  if (!audit.is_object()) return nullptr;
  for (const auto& row : audit.at("checks").as_array()) {
    if (row.at("name").as_string() == name) return &row.as_object();
  }
  return nullptr;
}

}  // namespace

TEST_CASE(
    "rnx optimize: a candidate that steals credentials during the benchmark is contained: nothing written, "
    "no secret seen") {
  repo r("contain");
  const fs::path stolen = r.root / "stolen.txt";
  const std::map<std::string, std::string> secrets = {{"GITHUB_TOKEN", "ghs_redteam_secret_4711"},
                                                      {"ANTHROPIC_API_KEY", "sk-ant-redteam-secret-4711"},
                                                      {"RNX_TOKEN", "rnx_redteam_secret_4711"}};
  std::map<std::string, std::string> env = secrets;
  env["RNX_TEST_ORDER"] = "5";
  env["RNX_TEST_LEAK"] = stolen.string();
  process_result run = run_rnx(r, {"--budget", "1", "--no-profile", "--no-commit", "--processes", "2"}, env);
  MESSAGE("stdout:\n" << run.out << "\nstderr:\n" << rnx::tail_lines(run.err, 30));
  REQUIRE(run.exit_code == 0);
  bj::value record = rnx::json::parse_file(r.root / "record.json");
  const bj::value& attempt = record.at("attempts").at(0);
  // It behaves under the verifier, so it is accepted there and reaches the benchmark: the benchmark's workers
  // are what this case is about.
  REQUIRE_MESSAGE(!attempt.at("benchmark").is_null(), "not benchmarked: " << attempt.at("reason").as_string());
  // It raises "saw ..." whenever a credential is in its environment: the benchmark ran it without one.
  CHECK_MESSAGE(attempt.at("status").as_string() != "broken", attempt.at("reason").as_string());
  CHECK(std::string(attempt.at("reason").as_string()).find("saw ") == std::string::npos);
  // Its writes outside its scratch folder were refused: the harness's target and the user's tree.
  CHECK_FALSE(fs::exists(stolen));
  CHECK_FALSE(fs::exists(r.dir / "leaked-secrets.txt"));
  CHECK(repo::git_ok(r.dir, {"status", "--porcelain", "--untracked-files=all"}).find("leaked") == std::string::npos);
  // No file the run left behind (work folder, records, the repository) holds a secret.
  for (const auto& secret : secrets) {
    const std::vector<fs::path> holding = files_holding(r.root, secret.second);
    CHECK_MESSAGE(holding.empty(), secret.first << " found in " << (holding.empty() ? fs::path() : holding.front()));
  }
}

TEST_CASE(
    "rnx optimize: a candidate that writes to the verifier's channel is rejected at once, and the report "
    "names the channel, not seccomp") {
  repo r("channel");
  // A hang would show as the verifier's wall-clock limit in the reason; the limit is kept well below the default.
  process_result run = run_rnx(r, {"--budget", "2", "--no-profile", "--no-commit", "--verify-timeout", "240"},
                               {{"RNX_TEST_ORDER", "6,7"}});
  MESSAGE("stdout:\n" << run.out << "\nstderr:\n" << rnx::tail_lines(run.err, 30));
  REQUIRE(run.exit_code == 0);
  bj::value record = rnx::json::parse_file(r.root / "record.json");
  const auto& attempts = record.at("attempts").as_array();
  REQUIRE(attempts.size() == 2);
  const char* expected[] = {"bytes that do not start a message", "a message cut short"};
  for (std::size_t i = 0; i < 2; ++i) {
    CAPTURE(i);
    const bj::value& a = attempts[i];
    const std::string reason(a.at("reason").as_string());
    CHECK(a.at("status").as_string() == "rejected");
    CHECK_MESSAGE(reason.find("channel to the verifier broke") != std::string::npos, reason);
    CHECK_MESSAGE(reason.find(expected[i]) != std::string::npos, reason);
    CHECK(reason.find("wall-clock") == std::string::npos);
    // The candidate's process was ended once its filter was in place: the sandbox row stands, seccomp blamed for
    // nothing.
    const bj::object* sandbox = audit_row(a, "sandbox");
    REQUIRE(sandbox != nullptr);
    const std::string detail(sandbox->at("detail").as_string());
    CHECK_MESSAGE(detail.find("no seccomp filter") == std::string::npos, detail);
    CHECK_MESSAGE(detail.find("could not apply every layer") == std::string::npos, detail);
  }
}
