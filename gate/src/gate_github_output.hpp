// What `rnx gate` hands GitHub: workflow annotations, the step summary and the step's outputs, the pull request's
// comment and the commit status. The texts are rendered in gate_report.cpp; this file puts them where they go.
#pragma once

#include "gate_context.hpp"
#include "gate_report.hpp"

#include "rnx/common/verdict_document.hpp"

#include <filesystem>
#include <string>

namespace rnx::gate {

// In GitHub Actions: an `::error` annotation for every slower or broken configuration and the overall answer, and
// first the service's problem when it could not be used (facts.lead), on standard output where the runner picks
// them up.
void print_annotations(const github_context& ctx, const verdict_document& verdict, const report_facts& facts);

// The step's files, when Actions names them: the report appended to GITHUB_STEP_SUMMARY, and the outputs verdict,
// run-id, reason, report, verdict-file and report-html appended to GITHUB_OUTPUT.
struct step_files {
  std::string run_id;
  std::string report;  // the Markdown report
  std::filesystem::path verdict_path;
  std::filesystem::path html_path;
};
void write_step_files(const github_context& ctx, const verdict_document& verdict, const step_files& files);

// Where the answer goes through the GitHub API: --no-github, the comment's --report-key and the status context.
struct github_targets {
  bool no_github = false;
  std::string report_key;  // "" = the job id
  std::string status_context;
};
// The pull request's comment (one per project and key, updated in place) and the commit status, with GITHUB_TOKEN;
// nothing outside Actions or with --no-github. A missing token is a notice, a refused call a warning annotation:
// neither changes the verdict. A service problem that fails the job (facts.lead_is_error) is the status "error".
void post_to_github(const github_context& ctx, const github_targets& targets, const verdict_document& verdict,
                    const report_facts& facts, const std::string& project);

}  // namespace rnx::gate
