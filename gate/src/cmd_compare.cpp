// `rnx compare BASE.json HEAD.json`: a local verdict between two run documents, no service.
#include "commands.hpp"
#include "gate_report.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/report.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/common/speed_of_light.hpp"
#include "rnx/stats/verdict.hpp"

#include <iostream>
#include <memory>

namespace rnx::cli {

namespace {

struct compare_options {
  std::string base_path;
  std::string head_path;
  gate_policy policy;
  std::string stat = "median";
  std::string on_abstain = "warn";
  output_format format = output_format::text;
};

void run_compare(const compare_options& o) {
  gate_policy policy = o.policy;
  policy.stat = *statistic_from_string(o.stat);
  policy.on_abstain = *overall_from_string(o.on_abstain);
  validate(policy);
  const run_document base = read_run_file(o.base_path);
  const run_document head = read_run_file(o.head_path);
  verdict_document verdict = stats::judge_runs(base, head, policy);
  verdict.baseline = baseline_ref{o.base_path, base.commit, base.created_at};
  verdict.head_run_id = o.head_path;
  if (o.format == output_format::json) {
    std::cout << json::serialize(to_json(verdict), true);
  } else {
    // The head's speed of light under the verdict, where the run carries its work and the machine's peaks.
    const auto sheet = datasheet_for(head.env.device);
    const auto light = gate::light_rows(head);
    const std::string source = sheet ? sheet->source : "";
    if (o.format == output_format::markdown) {
      std::cout << render_verdict_markdown(verdict) << gate::render_light_markdown(light, source);
    } else {
      std::cout << render_verdict_text(verdict) << gate::render_light_text(light, source);
    }
  }
  exit_code() = verdict.verdict == overall::block ? 1 : 0;
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto options = std::make_shared<compare_options>();
  auto* cmd =
      app.add_subcommand("compare", "Verdict between two run documents (exit 0 PASS/WARN, 1 BLOCK, 2 bad input)");
  cmd->add_option("base", options->base_path, "Baseline run document (rnx.run/v1 JSON)")->required();
  cmd->add_option("head", options->head_path, "Head run document (rnx.run/v1 JSON)")->required();
  cmd->add_option("--rope", options->policy.rope, "Half-width of the band of practical equivalence (fraction)")
      ->capture_default_str();
  cmd->add_option("--probability", options->policy.probability, "Posterior probability needed for a decision")
      ->capture_default_str();
  cmd->add_option("--min-samples", options->policy.min_samples, "Fewest samples a side for a decision")
      ->capture_default_str();
  cmd->add_option("--resamples", options->policy.resamples, "Bayesian bootstrap draws")->capture_default_str();
  cmd->add_option("--statistic", options->stat, "Per-side statistic")
      ->check(CLI::IsMember({"median", "mean"}))
      ->capture_default_str();
  cmd->add_option("--on-abstain", options->on_abstain, "Overall answer when a configuration abstains")
      ->check(CLI::IsMember({"pass", "warn", "block"}))
      ->capture_default_str();
  cmd->add_flag("--report-only", options->policy.report_only, "Never answer BLOCK (report it as WARN)");
  add_format_option(*cmd, options->format);
  cmd->callback([options] { run_compare(*options); });
}

}  // namespace rnx::cli
