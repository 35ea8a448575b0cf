// `rnx compare BASE.json HEAD.json`: a local verdict between two run documents, no service; with --explain (and as
// `rnx explain`) each slower configuration's base and head profiled to say why (gate_explain.cpp).
#include "commands.hpp"
#include "gate_report.hpp"
#if defined(RNX_HAVE_GATE) && defined(RNX_HAVE_TORCH)
#include "gate_explain.hpp"
#endif

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/policy_options.hpp"
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
  // The verdict policy: gate_policy{}'s, or (rnx explain) the head manifest's [gate], with the flags given applied.
  gate_policy policy;
  policy_overrides flags;
  output_format format = output_format::text;
  // --explain / --explain-all (rnx explain: all unless --scope): which configurations get a profile diff; "" = none.
  std::string explain_scope;
  std::string config = "rnx.toml";  // the head's code
  std::string base_ref;             // the base's code: this revision checked out (default: the base run's commit)
  std::string base_config;          // or this manifest as it is
};

// The verdict with its explanations, where this rnx has the profile worker and a scope was asked for.
verdict_document explained(verdict_document verdict, const compare_options& o, const run_document& base,
                           const run_document& head) {
  if (o.explain_scope.empty()) return verdict;
#if defined(RNX_HAVE_GATE) && defined(RNX_HAVE_TORCH)
  const explain_settings settings = gate::resolve_explain_settings(o.config, o.explain_scope, "--scope");
  const gate::explain_code code =
      gate::check_out_base(o.config, o.base_ref.empty() ? base.commit : o.base_ref, o.base_config);
  return gate::explain_with(std::move(verdict), code, &base, &head, settings);
#else
  (void)base;
  (void)head;
  throw error(errc::usage, "this rnx was built without the profile worker (RNX_WITH_TORCH): it cannot explain");
#endif
}

void run_compare(const compare_options& o) {
  const gate_policy policy = with_overrides(o.policy, o.flags);
  const run_document base = read_run_file(o.base_path);
  const run_document head = read_run_file(o.head_path);
  verdict_document verdict = stats::judge_runs(base, head, policy);
  verdict.baseline = baseline_ref{o.base_path, base.commit, base.created_at};
  verdict.head_run_id = o.head_path;
  verdict = explained(std::move(verdict), o, base, head);
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

namespace {

// Where each side's code is, for the profile diff.
void add_code_options(CLI::App& cmd, compare_options& o) {
  cmd.add_option("--config", o.config, "The head's manifest (its code is profiled)")->capture_default_str();
  cmd.add_option("--base-ref", o.base_ref,
                 "The base's code: this revision, checked out in a worktree (default: the base run's commit)");
  cmd.add_option("--base-config", o.base_config, "The base's code: this manifest as it is (instead of --base-ref)");
}

}  // namespace

#if defined(RNX_HAVE_GATE) && defined(RNX_HAVE_TORCH)
void add_explain_command(CLI::App& app) {
  auto options = std::make_shared<compare_options>();
  auto* cmd = app.add_subcommand(
      "explain",
      "Why a configuration's time moved: base and head profiled once more, untimed, in their own worker "
      "processes, and diffed (exit 0, 2 bad input)");
  cmd->add_option("base", options->base_path, "Baseline run document (rnx.run/v1 JSON)")->required();
  cmd->add_option("head", options->head_path, "Head run document (rnx.run/v1 JSON)")->required();
  options->explain_scope = "all";
  cmd->add_option("--scope", options->explain_scope,
                  "all: every configuration measured on both sides; auto: slower and abstaining ones")
      ->check(CLI::IsMember({"all", "auto"}))
      ->capture_default_str();
  add_code_options(*cmd, *options);
  add_format_option(*cmd, options->format);
  cmd->callback([options] {
    // The verdict under the head manifest's [gate] policy: the same decisions rnx gate would show beside the why.
    compare_options o = *options;
    if (const auto m = gate::load_manifest_if_present(o.config, true)) o.policy = m->gate;
    run_compare(o);
    exit_code() = 0;
  });
}
#endif

void add_compare_command(CLI::App& app) {
  auto options = std::make_shared<compare_options>();
  auto* cmd =
      app.add_subcommand("compare", "Verdict between two run documents (exit 0 PASS/WARN, 1 BLOCK, 2 bad input)");
  cmd->add_option("base", options->base_path, "Baseline run document (rnx.run/v1 JSON)")->required();
  cmd->add_option("head", options->head_path, "Head run document (rnx.run/v1 JSON)")->required();
  cmd->add_flag_callback(
      "--explain", [options] { options->explain_scope = "auto"; },
      "Profile each slower (and abstaining) configuration's base and head once more and say why (needs --config's "
      "code and the base's: --base-ref or --base-config)");
  cmd->add_flag_callback(
      "--explain-all", [options] { options->explain_scope = "all"; }, "As --explain, for every configuration");
  add_code_options(*cmd, *options);
  add_policy_options(
      *cmd, options->flags,
      {policy_option::rope, policy_option::probability, policy_option::min_samples, policy_option::resamples,
       policy_option::statistic, policy_option::on_abstain, policy_option::report_only},
      "");
  add_format_option(*cmd, options->format);
  cmd->callback([options] { run_compare(*options); });
}

}  // namespace rnx::cli
