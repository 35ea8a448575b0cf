// The explaining step of `rnx gate`, `rnx compare --explain` and `rnx explain`: the base revision's code checked out
// beside the head's, the scope and settings resolved from the flag and the manifest, and rnx::explain run over the
// verdict. Built into `rnx` where the profile worker is (RNX_HAVE_TORCH).
#pragma once

#include "gate_judge.hpp"
#include "gate_plan.hpp"
#include "git_command.hpp"

#include "rnx/common/explain_settings.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"

#include <filesystem>
#include <memory>
#include <string>

namespace rnx::gate {

// Both sides' code: the head's manifest, and the base's in a worktree of the base revision (or as given).
struct explain_code {
  std::unique_ptr<scoped_worktree> worktree;  // alive while the base manifest is used
  std::filesystem::path base_manifest;
  std::filesystem::path head_manifest;
  std::string problem;  // why the base's code is not here ("" when it is): every explanation then says it
};

// `base_manifest` given (--base-config) is used as it is; otherwise `base_ref` is checked out in a worktree of the
// head manifest's repository and its manifest is the one at the same relative path. A ref that is not a commit
// here, or a base revision without the manifest, is the problem, not an error: the verdict stands without a why.
explain_code check_out_base(const std::filesystem::path& head_manifest, const std::string& base_ref,
                            const std::filesystem::path& base_manifest = {});

// The settings in force: the manifest's [gate] explain keys, the scope replaced by `scope_flag` when it is given
// ("auto", "all" or "off"; anything else is a usage error naming `flag_name`).
explain_settings resolve_explain_settings(const std::filesystem::path& manifest, const std::string& scope_flag,
                                          const std::string& flag_name);

// The verdict with its explanations (explain::explain_verdict), progress on standard error; where the base's code
// is missing, each wanted configuration's explanation says why instead.
verdict_document explain_with(verdict_document v, const explain_code& code, const run_document* base,
                              const run_document* head, const explain_settings& settings);

// `rnx gate`: the base revision is the paired one, else the stored baseline's commit; nothing happens without a
// manifest or when the scope is off.
verdict_document explain_gate_verdict(const gate_plan& plan, const measured_runs& runs, verdict_document v);

}  // namespace rnx::gate
