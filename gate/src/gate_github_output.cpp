// `rnx gate`'s answer on GitHub: annotations, step summary and outputs, the pull request's comment, the commit status.
#include "gate_github_output.hpp"

#include "gate_settings.hpp"
#include "rnx/http/github.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/text.hpp"

#include <iostream>

namespace rnx::gate {

void print_annotations(const github_context& ctx, const verdict_document& verdict, const report_facts& facts) {
  if (!ctx.in_actions) return;
  for (const auto& line : annotations(verdict, facts)) std::cout << line << "\n";
}

void write_step_files(const github_context& ctx, const verdict_document& verdict, const step_files& files) {
  if (!ctx.step_summary_path.empty()) append_file(ctx.step_summary_path, files.report + "\n");
  if (!ctx.output_path.empty()) {
    write_outputs(ctx.output_path, {{"verdict", std::string(to_string(verdict.verdict))},
                                    {"run-id", files.run_id},
                                    {"reason", verdict.reason},
                                    {"report", files.report},
                                    {"verdict-file", files.verdict_path.string()},
                                    {"report-html", files.html_path.string()}});
  }
}

void post_to_github(const github_context& ctx, const github_targets& targets, const verdict_document& verdict,
                    const report_facts& facts, const std::string& project) {
  if (targets.no_github || ctx.event == event_kind::local || ctx.repository.empty()) return;
  const std::string token = env_or_empty("GITHUB_TOKEN");
  if (token.empty()) {
    std::cout << "::notice title=rnx::"
              << escape_command_data("no GITHUB_TOKEN (the github-token input): no PR comment or commit status")
              << "\n";
    return;
  }
  http::github_api github(ctx.api_url, ctx.repository, token);
  auto warn = [](const std::string& what, const error& e) {
    std::cout << "::warning title=rnx::" << escape_command_data("could not " + what + ": " + e.what()) << "\n";
  };
  if (ctx.event == event_kind::pull_request && ctx.pull_request) {
    const std::string key =
        project + (targets.report_key.empty() ? (ctx.job.empty() ? "" : "/" + ctx.job) : "/" + targets.report_key);
    try {
      github.upsert_comment(*ctx.pull_request, comment_marker(key),
                            render_comment(verdict, facts, comment_marker(key)));
    } catch (const error& e) {
      warn(ctx.pull_request_from_fork ? "comment on this pull request from a fork (its token is read-only)"
                                      : "comment on the pull request",
           e);
    }
  }
  if (!ctx.commit.empty()) {
    auto [state, description] = commit_status(verdict);
    if (facts.lead_is_error && !facts.lead.empty()) {
      state = "error";
      description = terminal_safe(facts.lead, false);
    }
    try {
      github.post_status(ctx.commit, state, targets.status_context, description, ctx.run_url);
    } catch (const error& e) {
      warn("set the commit status " + targets.status_context, e);
    }
  }
}

}  // namespace rnx::gate
