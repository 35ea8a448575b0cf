// `rnx gate`'s answer told: the terminal, OUT/verdict.json, report.md and report.html, GitHub; and the exit status.
#pragma once

#include "gate_html.hpp"
#include "gate_plan.hpp"
#include "gate_report.hpp"

#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"

#include <string>

namespace rnx::gate {

// The job's answer as the last step left it.
struct gate_answer {
  verdict_document verdict;
  report_facts facts;
  std::string drift_report;  // [gate] drift_budget's Markdown, "" when no budget is set
};

// The verdict on the terminal, in OUT/verdict.json, report.md and report.html, the step summary, the step's
// outputs, and on GitHub (comment and commit status).
void publish(const gate_plan& plan, const gate_answer& answer, const html_sources& html);

// The gate's exit status: 1 for BLOCK, else 0. A push has already landed: its regression is reported (annotation,
// status, summary), and failing the job would only hide the stored baseline behind a red mark that no one can fix
// by re-running, so a blocked push run says so and exits 0. A service that could not be used is exit 2 where
// on_service_error is "fail" (facts.lead_is_error), whatever the verdict: it says so on the terminal.
int exit_status(const gate_plan& plan, const verdict_document& verdict, const run_document& head,
                const report_facts& facts);

}  // namespace rnx::gate
