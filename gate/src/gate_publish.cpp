// `rnx gate`'s answer on the terminal, in its --out-dir files and on GitHub, and the exit status it gives.
#include "gate_publish.hpp"

#include "gate_github_output.hpp"

#include "rnx/common/json.hpp"
#include "rnx/common/report.hpp"
#include "rnx/common/text.hpp"

#include <filesystem>
#include <iostream>

namespace rnx::gate {

void publish(const gate_plan& plan, const gate_answer& answer, const html_sources& html) {
  const verdict_document& verdict = answer.verdict;
  const report_facts& facts = answer.facts;
  const std::string report =
      render_report(verdict, facts) + (answer.drift_report.empty() ? "" : "\n" + answer.drift_report);
  std::cout << render_verdict_text(verdict);
  if (!facts.run_url.empty()) std::cout << "rnx gate: the run's page: " << terminal_safe(facts.run_url) << "\n";
  if (verdict.verdict == overall::block && !facts.accept_hint.empty()) std::cout << facts.accept_hint << "\n";
  print_annotations(plan.ctx, verdict, facts);
  const std::filesystem::path verdict_path = plan.out_dir / "verdict.json";
  write_report_file(verdict_path, json::serialize(to_json(verdict), true));
  write_report_file(plan.out_dir / "report.md", report);
  const std::filesystem::path html_path = plan.out_dir / "report.html";
  write_html_report(html_path, html, verdict);
  write_step_files(plan.ctx, verdict, {facts.run_id, report, verdict_path, html_path});
  post_to_github(plan.ctx, {plan.flags.no_github, plan.flags.report_key, plan.flags.status_context}, verdict, facts,
                 html.head.project);
}

int exit_status(const gate_plan& plan, const verdict_document& verdict, const run_document& head,
                const report_facts& facts) {
  if (facts.lead_is_error && !facts.lead.empty()) {
    std::cout << "rnx gate: exit 2: the service could not be used and on_service_error is \"fail\" "
              << "(--on-service-error warn, or [gate] on_service_error = \"warn\", reports it and exits 0)\n";
    return 2;
  }
  const bool push_run = is_push_run(plan.ctx);
  if (verdict.verdict == overall::block && push_run) {
    std::cout << "rnx gate: a push is not failed for a regression: the run is stored as the newest baseline of "
              << terminal_safe(head.branch) << " either way\n";
  }
  return verdict.verdict == overall::block && !push_run ? 1 : 0;
}

}  // namespace rnx::gate
