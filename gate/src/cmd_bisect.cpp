// `rnx bisect GOOD BAD`: name the commits between two revisions that made a configuration slower, with sizes.
#include "commands.hpp"

#include "bisect_report.hpp"
#include "bisect_revisions.hpp"
#include "bisect_search.hpp"
#include "gate_settings.hpp"
#include "git_command.hpp"
#include "rnx/http/github.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/policy_options.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/manifest.hpp"
#include "rnx/common/text.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

namespace rnx::cli {

namespace {

namespace fs = std::filesystem;
using namespace rnx::gate;

struct bisect_options {
  std::string good;
  std::string bad;
  std::string config = "rnx.toml";
  std::vector<std::string> kernels;
  std::vector<std::string> runtimes;
  std::vector<std::string> dtypes;
  std::vector<std::int64_t> batches;
  double threshold = 0.01;
  policy_overrides step;  // --probability: to call or rule out a step
  std::optional<int> processes;
  std::optional<int> max_processes;
  std::optional<double> budget_ms;
  std::string out_dir = ".rnx";
  std::optional<std::int64_t> comment_on;
  bool open_issue = false;
};

bisect_setup make_setup(const bisect_options& o) {
  const fs::path config = fs::absolute(o.config);
  if (!fs::exists(config)) throw error(errc::not_found, o.config + ": no such manifest (pass --config PATH/rnx.toml)");
  const manifest m = load_manifest(config);
  auto top = git(config.parent_path(), {"rev-parse", "--show-toplevel"});
  if (!top) {
    throw error(errc::usage, "rnx bisect needs " + config.parent_path().string() + " to be in a git repository");
  }
  bisect_setup s;
  s.repo = fs::canonical(*top);
  s.manifest_relative = fs::relative(fs::canonical(config), s.repo);
  s.commits = first_parent_range(s.repo, o.good, o.bad);
  s.kernels = o.kernels;
  s.runtimes = o.runtimes;
  s.dtypes = o.dtypes;
  s.batches = o.batches;
  s.processes = o.processes;
  s.max_processes = o.max_processes;
  s.budget_ms = o.budget_ms;
  s.cache_dir = fs::absolute(o.out_dir) / "bisect";
  s.policy = with_overrides(m.gate, o.step);
  s.policy.rope = o.threshold;
  return s;
}

void write_file(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw error(errc::usage, "cannot write " + path.string() + "; pass --out-dir with a writable folder");
}

// --comment / --issue through GITHUB_API_URL, GITHUB_REPOSITORY and GITHUB_TOKEN (as `rnx gate` reports).
void post_to_github(const bisect_options& o, const bisect_findings& f) {
  if (!o.comment_on && !o.open_issue) return;
  const std::string repository = env_or_empty("GITHUB_REPOSITORY");
  const std::string token = env_or_empty("GITHUB_TOKEN");
  if (repository.empty() || token.empty()) {
    throw error(errc::usage,
                "--comment/--issue post through the GitHub API: set GITHUB_REPOSITORY (owner/name) and "
                "GITHUB_TOKEN (GITHUB_API_URL for GitHub Enterprise)");
  }
  std::string api = env_or_empty("GITHUB_API_URL");
  if (api.empty()) api = "https://api.github.com";
  http::github_api github(api, repository, token);
  const std::string body = render_bisect_markdown(f);
  if (o.comment_on) {
    github.create_comment(*o.comment_on, body);
    std::cout << "rnx bisect: commented on #" << *o.comment_on << " of " << terminal_safe(repository) << "\n";
  }
  if (o.open_issue) {
    std::string title = "rnx bisect: " + f.key.label() + " slower";
    if (!f.outcome.culprits.empty()) {
      title += " at";
      for (const auto& c : f.outcome.culprits) title += " " + f.setup.commits[c.index].sha.substr(0, 12);
    }
    const std::int64_t number = github.create_issue(title, body);
    std::cout << "rnx bisect: opened issue #" << number << " in " << terminal_safe(repository) << "\n";
  }
}

void run_bisect(const bisect_options& o) {
  const auto started = std::chrono::steady_clock::now();
  bisect_setup setup = make_setup(o);
  std::cout << "rnx bisect: " << setup.commits.size() - 1 << " commits from " << setup.commits.front().sha.substr(0, 12)
            << " to " << setup.commits.back().sha.substr(0, 12) << ", a step is a slowdown above "
            << 100 * setup.policy.rope << "% at P >= " << setup.policy.probability << "\n"
            << std::flush;
  revision_measure measure(setup, [](const std::string& line) {
    std::cout << "rnx bisect: " << terminal_safe(line) << "\n" << std::flush;
  });
  const bisect_policy policy{setup.policy.rope, setup.policy.probability};
  const bisect_outcome outcome = bisect_range(setup.commits.size(), measure, policy);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const bisect_findings findings{measure.setup(), outcome, *measure.key(), seconds};
  std::cout << "\n" << render_bisect_text(findings);
  const fs::path out_dir = fs::absolute(o.out_dir);
  write_file(out_dir / "bisect.json", json::serialize(bisect_json(findings), true));
  write_file(out_dir / "bisect.md", render_bisect_markdown(findings));
  std::cout << "wrote " << (out_dir / "bisect.json").string() << " and bisect.md\n";
  post_to_github(o, findings);
  exit_code() = 0;
}

}  // namespace

void add_bisect_command(CLI::App& app) {
  auto o = std::make_shared<bisect_options>();
  CLI::App* cmd = app.add_subcommand(
      "bisect", "Name the commits between GOOD and BAD that made a configuration slower (paired runs in worktrees)");
  cmd->add_option("good", o->good, "A revision before the slowdown")->required();
  cmd->add_option("bad", o->bad, "A later revision, slower (GOOD must be on its first-parent history)")->required();
  cmd->add_option("--config", o->config, "The manifest")->capture_default_str();
  add_config_filter_options(*cmd, o->kernels, o->runtimes, o->dtypes, o->batches);
  cmd->add_option("--threshold", o->threshold, "A step is a slowdown above this fraction")
      ->check(CLI::Range(1e-4, 0.999))
      ->capture_default_str();
  // The posterior probability to call or rule out a step.
  add_policy_options(*cmd, o->step, {policy_option::probability}, "rnx.toml's [gate]");
  cmd->add_option("--processes", o->processes, "Worker processes of each paired run's first look")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--max-processes", o->max_processes, "At most this many while a paired run is undecided")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--budget-ms", o->budget_ms, "Timed budget per configuration and process")
      ->check(CLI::Range(0.0, 3.6e6));
  cmd->add_option("--out-dir", o->out_dir, "bisect.json, bisect.md, and the paired runs reused by a later bisect")
      ->capture_default_str();
  cmd->add_option("--comment", o->comment_on, "Post the findings as a comment on this pull request or issue")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--issue", o->open_issue, "Open an issue with the findings");
  cmd->callback([o] { run_bisect(*o); });
}

}  // namespace rnx::cli
