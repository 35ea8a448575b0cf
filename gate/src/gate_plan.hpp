// `rnx gate`'s flags and its plan: the mode, the manifest and the policy in force, decided from the flags and the CI
// context before anything is measured. The plan is pure: what it reads of the checkout comes in as a lookup.
#pragma once

#include "gate_context.hpp"
#include "gate_merge.hpp"
#include "gate_settings.hpp"

#include "rnx/common/manifest.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rnx::gate {

// rnx gate's flags as given; an empty string is "not given".
struct gate_flags {
  std::string config = "rnx.toml";
  bool config_given = false;
  std::string results;       // a prepared head run instead of benchmarking
  std::string base_results;  // a prepared base run instead of `rnx bench --pair`; implies --mode paired
  std::string mode;          // --mode, read once by choose_mode; "" = auto: paired on pull requests whose base is here
  std::string pair_ref;
  backend_flags backend;
  policy_flags policy;
  std::string project;
  std::string commit;
  std::string branch;
  std::string base_branch;
  std::string pull_request;
  std::string out_dir = ".rnx";
  std::string report_key;
  std::string status_context = "rnx/benchmark";
  bool no_github = false;
  std::string on_service_error;  // --on-service-error warn | fail; "" = [gate] on_service_error, else warn
  shard_flags sharding;          // --shard, --merge, --group-verdict (docs/scaling.md)
  std::string explain;           // --explain auto | all | off; "" = [gate] explain, else auto (gate_explain.hpp)
};

// The context with --commit, --branch, --base-branch and --pull-request in place of what GitHub said.
github_context with_flags(github_context ctx, const gate_flags& flags);

// A pull request's job: a pull_request event, or a local run with --pull-request.
bool is_pull_request_run(const github_context& ctx);
// A push stores a run that moves its branch's baseline; a pull request's run (a local one with --pull-request) does
// not. A local push, like a GitHub one, has already landed: its regression is reported, not failed.
bool is_push_run(const github_context& ctx);

// Whether `ref` names a commit of the checkout (git in the manifest's folder; tests pass a set).
using commit_lookup = std::function<bool(const std::string& ref)>;

// The mode in force and the lines that explain an automatic choice.
struct mode_choice {
  gate_mode mode = gate_mode::stored;
  bool paired = false;             // paired mode on a pull request (a push is stored, never paired)
  std::string pair_ref;            // the base revision found in the checkout, when paired was chosen for it
  std::vector<std::string> notes;  // for the terminal, in order
};

// --mode (a usage error when it is not a mode), the mode of the --merge shards (`merged`: paired when their base
// runs came with them), or the automatic choice: paired is the decisive comparison (both revisions measured side by
// side in this job); it needs the base revision in the checkout; a push is a new baseline, and a prepared run has no
// base run beside it. A local run with --pull-request stands for a pull request. --base-results is the base run of
// the paired comparison: it implies paired mode, and beside --mode stored or confirmed it is a usage error.
mode_choice choose_mode(const gate_flags& flags, const github_context& ctx, std::optional<gate_mode> merged,
                        const commit_lookup& is_commit_here);

// Everything `rnx gate` decided before anything is measured; steps read it and never change it.
struct gate_plan {
  gate_flags flags;
  github_context ctx;
  gate_mode mode = gate_mode::stored;
  bool paired = false;
  std::optional<manifest> m;
  resolved_policy policy;
  std::string project;
  std::filesystem::path out_dir;
  std::string pair_ref;  // paired: the base revision measured beside the head
  service_error_action on_service_error = service_error_action::warn;

  const manifest* manifest_ptr() const { return m ? &*m : nullptr; }
  // The mode the report names: paired only where the job is paired (a push never is).
  gate_mode reported_mode() const;
};

// A prepared run (--results, --merge, --group-verdict) needs no manifest; benchmarking does.
bool manifest_required(const gate_flags& flags);

// The plan from the flags, the context, the chosen mode and the manifest (when there is one): the policy in force
// (a usage error when invalid), the project, and in paired mode the base revision (--pair-ref, else what this
// checkout reaches, else the event's base commit; a usage error when none and no --base-results).
gate_plan plan_gate(gate_flags flags, github_context ctx, const mode_choice& mode, std::optional<manifest> m,
                    const commit_lookup& is_commit_here);

}  // namespace rnx::gate
