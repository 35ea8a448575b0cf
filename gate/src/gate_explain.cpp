// The base revision's code beside the head's, the explain settings in force, and the explaining step over a verdict.
#include "gate_explain.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/text.hpp"
#include "rnx/explain/explain.hpp"

#include <iostream>

namespace rnx::gate {

namespace fs = std::filesystem;

explain_code check_out_base(const fs::path& head_manifest, const std::string& base_ref, const fs::path& base_manifest) {
  explain_code code;
  code.head_manifest = fs::absolute(head_manifest);
  if (!base_manifest.empty()) {
    code.base_manifest = fs::absolute(base_manifest);
    if (!fs::exists(code.base_manifest)) {
      throw error(errc::not_found, "--base-config " + base_manifest.string() + ": no such manifest");
    }
    return code;
  }
  const fs::path dir = code.head_manifest.parent_path();
  const auto top = git(dir, {"rev-parse", "--show-toplevel"});
  if (base_ref.empty() || !top || !is_commit(dir, base_ref)) {
    code.problem = "the base revision's code is not here (" +
                   (base_ref.empty() ? std::string("no base commit is known")
                                     : "commit " + base_ref + " is not in this checkout: fetch it") +
                   "; rnx explain takes --base-ref or --base-config)";
    return code;
  }
  code.worktree = std::make_unique<scoped_worktree>(fs::path(*top), base_ref, "explain");
  const fs::path relative = fs::relative(code.head_manifest, fs::canonical(*top));
  code.base_manifest = code.worktree->path() / relative;
  if (!fs::exists(code.base_manifest)) {
    code.problem = "the base revision " + base_ref + " has no " + relative.string();
  }
  return code;
}

explain_settings resolve_explain_settings(const fs::path& manifest, const std::string& scope_flag,
                                          const std::string& flag_name) {
  explain_settings s = load_explain_settings(manifest);
  if (!scope_flag.empty()) {
    const auto scope = explain_scope_from_string(scope_flag);
    if (!scope) {
      throw error(errc::usage, flag_name + " " + scope_flag +
                                   ": not a scope (auto: slower and abstaining configurations, all: every one, off)");
    }
    s.scope = *scope;
  }
  return s;
}

verdict_document explain_with(verdict_document v, const explain_code& code, const run_document* base,
                              const run_document* head, const explain_settings& settings) {
  if (settings.scope == explain_scope::off) return v;
  if (!code.problem.empty()) {
    for (auto& c : v.configs) {
      if (!explain::wanted(settings.scope, c.result)) continue;
      explanation e;
      e.status = explain_status::failed;
      e.count_threshold = settings.count_threshold;
      e.note = "not explained: " + code.problem;
      c.explanation = std::move(e);
    }
    std::cerr << "rnx explain: " << terminal_safe(code.problem, false) << "\n";
    return v;
  }
  return explain::explain_verdict(std::move(v), {code.base_manifest, code.head_manifest, base, head}, settings,
                                  explain::default_tools(&std::cerr));
}

verdict_document explain_gate_verdict(const gate_plan& plan, const measured_runs& runs, verdict_document v) {
  if (!plan.m) return v;
  const explain_settings settings = resolve_explain_settings(plan.flags.config, plan.flags.explain, "--explain");
  if (settings.scope == explain_scope::off) return v;
  const bool any = std::any_of(v.configs.begin(), v.configs.end(),
                               [&](const config_verdict& c) { return explain::wanted(settings.scope, c.result); });
  if (!any) return v;
  std::string base_ref = plan.paired ? (runs.pair_ref.empty() ? plan.pair_ref : runs.pair_ref) : std::string();
  if (base_ref.empty() && v.baseline) base_ref = v.baseline->commit;
  const explain_code code = check_out_base(plan.flags.config, base_ref);
  return explain_with(std::move(v), code, runs.base ? &*runs.base : nullptr, &runs.head, settings);
}

}  // namespace rnx::gate
