// The `/rnx accept` comment flow and the lookup of a pull request's runs.
#include "gate_accept.hpp"

#include "gate_report.hpp"
#include "rnx/http/github.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/text.hpp"

#include <iostream>
#include <set>

namespace rnx::gate {

namespace {

// How many of a branch's newest runs are searched for the PR's; a PR re-run this often is unusual.
constexpr int max_runs_searched = 200;

// Best-effort GitHub calls: a failed reaction or status must not undo an accepted baseline.
template <class F>
void best_effort(const char* what, F&& call) {
  try {
    call();
  } catch (const error& e) {
    std::cout << "::warning title=rnx::" << escape_command_data(std::string("could not ") + what + ": " + e.what())
              << "\n";
  }
}

void set_outputs(const github_context& ctx, bool accepted, const std::string& run_ids) {
  if (ctx.output_path.empty()) return;
  write_outputs(ctx.output_path, {{"accepted", accepted ? "true" : "false"}, {"run-id", run_ids}});
}

}  // namespace

std::vector<stored_run_ref> pull_request_runs(baseline_backend& backend, const std::string& project,
                                              const std::string& branch, std::int64_t number,
                                              const std::string& commit) {
  std::vector<stored_run_ref> out;
  std::set<std::string> environments;
  for (auto& run : backend.runs_of_branch(project, branch, max_runs_searched)) {
    if (run.pull_request != number) continue;
    if (!commit.empty() && run.commit != commit) continue;
    // Newest first: the first run of an environment is the one to accept.
    if (!environments.insert(run.env_id).second) continue;
    out.push_back(std::move(run));
  }
  return out;
}

int accept_from_comment(const github_context& ctx, const comment_accept_settings& settings) {
  auto command = parse_accept_command(ctx.comment_body);
  if (!command) {
    std::cout << "rnx: comment " << ctx.comment_id << " is not an `/rnx accept` command; nothing to do\n";
    return 0;
  }
  const std::int64_t number = ctx.pull_request.value_or(0);
  if (!ctx.comment_on_pull_request) {
    std::cout << "rnx: `/rnx accept` was written on issue #" << number << ", not on a pull request; nothing to do\n";
    return 0;
  }
  if (settings.github_token.empty()) {
    throw error(errc::usage,
                "`/rnx accept` needs a GitHub token to check the commenter's permission and reply: pass the "
                "github-token input (or set GITHUB_TOKEN)");
  }
  http::github_api github(ctx.api_url, ctx.repository, settings.github_token);
  const std::string& author = ctx.comment_author;

  std::string permission;
  try {
    permission = github.permission_of(author);
  } catch (const error& e) {
    if (e.code() != errc::unavailable) throw;
    std::cout << "::warning title=rnx::"
              << escape_command_data("could not check @" + author +
                                     "'s permission, so nothing was accepted: " + e.what())
              << "\n";
    set_outputs(ctx, false, "");
    return 0;
  }
  if (!http::can_write(permission)) {
    best_effort("reply in the thread", [&] {
      github.create_comment(
          number, "@" + author + ": `/rnx accept` needs write permission on this repository (yours is `" + permission +
                      "`), so the baseline is unchanged. Ask a maintainer to accept it.");
    });
    best_effort("react to the comment", [&] { github.react_to_comment(ctx.comment_id, "-1"); });
    std::cout << "::error title=rnx accept refused::"
              << escape_command_data("@" + author + " has " + permission + " permission; accepting needs write")
              << "\n";
    set_outputs(ctx, false, "");
    return 1;
  }

  const http::pull_request_info pr = github.pull_request(number);
  auto m = load_manifest_if_present(settings.config, settings.config_required);
  std::string project = !settings.project.empty() ? settings.project : m ? m->project : std::string();
  if (project.empty()) {
    throw error(errc::usage, "`/rnx accept` needs the project name: set [project] name in " + settings.config +
                                 " (check it out in the workflow) or pass --project");
  }
  auto choice = open_backend(settings.backend, m ? &*m : nullptr);
  std::string reason = command->reason.empty()
                           ? "accepted by @" + author + " in pull request #" + std::to_string(number)
                           : command->reason;

  std::vector<stored_run_ref> runs;
  std::vector<std::string> lines;
  std::string ids;
  try {
    runs = pull_request_runs(*choice.backend, project, pr.head_ref, number, pr.head_sha);
    if (runs.empty()) {
      // The pull request's gate job kept its run in its own cached store, which this workflow cannot restore:
      // waiting would not help, the service would.
      const std::string why =
          "no run of pull request #" + std::to_string(number) + " at its head commit `" + pr.head_sha.substr(0, 12) +
          "` is stored in the " + choice.backend->describe() +
          (choice.embedded ? "; the gate job of a pull request keeps its run in its own cached embedded store, which "
                             "this comment's workflow cannot reach, so `/rnx accept` needs the service: set "
                             "[service] url in rnx.toml (or the service-url input) in both workflows"
                           : "; let the rnx gate job finish on that commit, then comment `/rnx accept` again");
      best_effort("reply in the thread", [&] { github.create_comment(number, "@" + author + ": " + why + "."); });
      best_effort("react to the comment", [&] { github.react_to_comment(ctx.comment_id, "confused"); });
      set_outputs(ctx, false, "");
      throw error(errc::not_found, why);
    }
    for (const auto& run : runs) {
      std::string line;
      try {
        auto accepted = choice.backend->accept(run.id, author, reason);
        line = "run " + markdown_code(run.id) + " (environment " + markdown_code(run.env_id) +
               ") is now the baseline of " + markdown_code(accepted.branch);
      } catch (const error& e) {
        if (e.code() != errc::conflict) throw;
        line = "run " + markdown_code(run.id) + " (environment " + markdown_code(run.env_id) +
               ") already was the newest baseline";
      }
      lines.push_back(line);
      ids += (ids.empty() ? "" : ",") + run.id;
      std::cout << "rnx accept: " << terminal_safe(line, false) << "\n";
    }
  } catch (const error& e) {
    if (e.code() != errc::unavailable) throw;
    // The error quotes the server: data in the comment (markdown_escape).
    const std::string why = "the " + markdown_escape(choice.backend->describe()) + " is unavailable (" +
                            markdown_escape(e.what()) +
                            "); nothing was accepted. Comment `/rnx accept` again when it is back.";
    best_effort("reply in the thread", [&] { github.create_comment(number, "@" + author + ": " + why); });
    std::cout << "::warning title=rnx WARN::" << escape_command_data(why) << "\n";
    set_outputs(ctx, false, "");
    return 0;
  }

  std::string reply = "Accepted by @" + author + " at commit " + markdown_code(pr.head_sha.substr(0, 12)) + ":\n";
  for (const auto& line : lines) reply += "- " + line + "\n";
  reply += "\nReason: " + markdown_escape(reason) + "\n\nThe gate compares later runs of " +
           markdown_code(pr.base_ref) + " and its pull requests with it.";
  best_effort("reply in the thread", [&] { github.create_comment(number, reply); });
  best_effort("react to the comment", [&] { github.react_to_comment(ctx.comment_id, "+1"); });
  best_effort("set the commit status", [&] {
    github.post_status(pr.head_sha, "success", settings.status_context, "accepted as the new baseline by @" + author,
                       ctx.run_url);
  });
  set_outputs(ctx, true, ids);
  return 0;
}

}  // namespace rnx::gate
