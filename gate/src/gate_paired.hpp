// What `rnx gate` keeps on the service or store in paired mode: the base run, the head run and the verdict.
#pragma once

#include "gate_backend.hpp"

#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"

#include <string>

namespace rnx::gate {

// The base revision's run as it is filed: the head's project and pull request, its branch the one the pull request
// merges into (a pull-request run, so it never becomes that branch's baseline), its commit the base commit.
void stamp_base_run(run_document& base, const run_document& head);

struct paired_upload {
  std::string base_run_id;  // "" when the base run could not be stored
  std::string note;         // why the verdict is not on the service, for the report; "" when it is
};

// Uploads the base run beside the already uploaded head run `head_run_id` and stores `verdict` (what this job
// decided) as the head run's paired verdict. On success `verdict` becomes the stored document, identical in its
// decisions, whose baseline is the stored base run, so the head run's page shows it. Failures of the store (down,
// refusing) leave `verdict` as decided and are returned as the note: the job's verdict does not depend on them.
paired_upload store_paired_verdict(baseline_backend& backend, run_document base, const std::string& head_run_id,
                                   const run_document& head, const gate_policy& policy, verdict_document& verdict);

}  // namespace rnx::gate
