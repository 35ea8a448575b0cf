// `rnx verify`: correctness gate and anti-cheat audit of a candidate kernel against its reference.
#include "commands.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/verify/verify.hpp"

#include <iostream>
#include <memory>
#include <optional>

namespace rnx::cli {

namespace {

struct verify_cli {
  std::string config;
  std::string kernel;
  std::string reference;
  std::string reference_entry;
  std::string inputs;
  std::string candidate;
  std::string candidate_entry;
  std::vector<std::int64_t> batches;
  std::vector<std::string> dtypes;
  std::string device;
  std::optional<double> rtol;
  std::optional<double> atol;
  output_format format = output_format::text;
  // A person reads `rnx verify`'s report: an implausible speedup is marked for review (exit 0 unless
  // --review-rejects). `rnx optimize` has no person in the loop and rejects it (verify_options' default).
  verify::verify_options options = review_speedups();

  static verify::verify_options review_speedups() {
    verify::verify_options o;
    o.speedup_review = true;
    return o;
  }
};

void run_verify(verify_cli& c) {
  verify::verify_options o = c.options;
  if (!c.config.empty() || !c.kernel.empty()) {
    if (c.config.empty() || c.kernel.empty()) {
      throw error(errc::usage,
                  "--config and --kernel go together (the manifest and the kernel in it to verify against)");
    }
    if (!c.reference.empty()) throw error(errc::usage, "pass either --config/--kernel or --reference, not both");
    o.reference = verify::reference_from_manifest(c.config, c.kernel);
  } else if (!c.reference.empty()) {
    o.reference = verify::reference_from_file(c.reference, c.inputs, c.reference_entry);
  } else {
    throw error(errc::usage, "no reference: pass --config rnx.toml --kernel NAME, or --reference FILE [--inputs ...]");
  }
  if (!c.batches.empty()) o.reference.batches = c.batches;
  if (!c.dtypes.empty()) o.reference.dtypes = c.dtypes;
  if (!c.device.empty()) o.reference.device = c.device;
  if (c.rtol || c.atol) {
    for (const auto& d : o.reference.dtypes) {
      tolerance t = o.reference.tolerances.count(d) ? o.reference.tolerances[d] : default_tolerance(d);
      if (c.rtol) t.rtol = *c.rtol;
      if (c.atol) t.atol = *c.atol;
      o.reference.tolerances[d] = t;
    }
  }
  o.candidate = c.candidate;
  o.candidate_entry = c.candidate_entry;
  verify::verify_report report = verify::verify_candidate(o);
  if (c.format == output_format::json) {
    std::cout << json::serialize(verify::to_json(report), true);
  } else if (c.format == output_format::markdown) {
    std::cout << verify::render_markdown(report);
  } else {
    std::cout << verify::render_text(report);
  }
  exit_code() = report.accepted() ? 0 : 1;
}

}  // namespace

void add_verify_command(CLI::App& app) {
  auto c = std::make_shared<verify_cli>();
  auto* cmd = app.add_subcommand(
      "verify",
      "Correctness gate and anti-cheat audit of a candidate kernel (exit 0 accepted, 1 rejected, 2 bad input)");
  cmd->add_option("--config", c->config, "Manifest (rnx.toml) holding the reference kernel");
  cmd->add_option("--kernel", c->kernel, "Name of the reference kernel in the manifest");
  cmd->add_option("--reference", c->reference,
                  "Reference file, without a manifest (.py function or KernelBench Model)");
  cmd->add_option("--reference-entry", c->reference_entry, "Entry of the reference file (default: run, or Model)");
  cmd->add_option("--inputs", c->inputs, "Input shapes of a --reference function: \"q=B,8,128,64;k=B,8,128,64\"");
  cmd->add_option("--candidate", c->candidate, "The rewritten kernel to verify")->required();
  cmd->add_option("--candidate-entry", c->candidate_entry,
                  "Entry of the candidate (default: the reference's, or ModelNew)");
  cmd->add_option("--batch", c->batches, "Declared batch sizes (default: the manifest's, else 8)")->delimiter(',');
  cmd->add_option("--dtype", c->dtypes, "Dtypes to verify (default: the manifest's, else float32)")
      ->delimiter(',')
      ->check(CLI::IsMember(measured_dtype_names()));
  cmd->add_option("--device", c->device, "auto | cpu | cuda | cuda:N (default: the manifest's, else auto)");
  cmd->add_option("--rtol", c->rtol, "Relative tolerance for every dtype (default: torch.testing's)");
  cmd->add_option("--atol", c->atol, "Absolute tolerance for every dtype (default: torch.testing's)");
  cmd->add_option("--seed", c->options.seed, "Seed of every input set")->capture_default_str();
  cmd->add_option("--speedup-limit", c->options.speedup_limit,
                  "A speedup above this over the eager reference is marked for review (see --review-rejects)")
      ->capture_default_str();
  cmd->add_flag(
      "--review-rejects", c->options.review_rejects,
      "Reject (exit 1) when something is marked for review, as rnx optimize does with an implausible speedup");
  cmd->add_option("--timeout", c->options.limits.wall_s, "Wall-clock limit of the whole verification, seconds")
      ->capture_default_str();
  cmd->add_option("--cpu-limit", c->options.limits.cpu_s, "CPU-time limit of the sandboxed worker, seconds")
      ->capture_default_str();
  cmd->add_option("--memory-limit", c->options.limits.memory_mb, "Memory limit of the sandboxed worker, MiB")
      ->capture_default_str();
  cmd->add_option("--keep-env", c->options.limits.keep_env, "Pass this environment variable to the candidate too");
  cmd->add_flag("--allow-weaker-sandbox", c->options.limits.allow_weaker,
                "Let the sandbox stage pass without a network namespace or seccomp filter (every report says so)");
  add_format_option(*cmd, c->format);
  cmd->callback([c] { run_verify(*c); });
}

}  // namespace rnx::cli
