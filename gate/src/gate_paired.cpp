// Paired mode's record on the service or embedded store: the base run, then the verdict the gate decided.
#include "gate_paired.hpp"

#include "rnx/common/error.hpp"

namespace rnx::gate {

void stamp_base_run(run_document& base, const run_document& head) {
  base.project = head.project;
  base.pull_request = head.pull_request;
  base.base_branch = head.base_branch;
  base.branch = head.base_branch.empty() ? head.branch : head.base_branch;
}

paired_upload store_paired_verdict(baseline_backend& backend, run_document base, const std::string& head_run_id,
                                   const run_document& head, const gate_policy& policy, verdict_document& verdict) {
  paired_upload out;
  stamp_base_run(base, head);
  try {
    out.base_run_id = backend.upload(base).id;
    verdict_document stored = backend.record_paired(head_run_id, out.base_run_id, policy, verdict);
    verdict = std::move(stored);
  } catch (const error& e) {
    out.note = "the paired verdict was not stored on the " + backend.describe() + " (" + e.what() +
               "); its run page shows the head run's samples only";
  }
  return out;
}

}  // namespace rnx::gate
