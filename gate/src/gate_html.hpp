// `rnx gate`'s report.html: the stored run's pages, or the evidence page drawn from the documents in hand.
#pragma once

#include "gate_backend.hpp"

#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"

#include <filesystem>
#include <optional>

namespace rnx::gate {

// What report.html draws besides the verdict: the store that holds the run (null when none could be opened), the
// run as stored there, and the runs this job judged.
struct html_sources {
  baseline_backend* backend = nullptr;
  const std::optional<uploaded_run>& upload;
  bool paired = false;
  const run_document& head;
  const std::optional<run_document>& base;
};

// report.html beside verdict.json: the stored run's pages (embedded store: overview, histories, evidence; service:
// evidence), or, paired or without a store, the evidence page drawn from the documents in hand. Written to a
// temporary file and renamed, so a reader never sees half a page.
void write_html_report(const std::filesystem::path& path, const html_sources& sources, const verdict_document& verdict);

}  // namespace rnx::gate
