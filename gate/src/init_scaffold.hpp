// `rnx init`'s files: rnx.toml from the kernels found, .github/workflows/rnx.yml from a ci-examples/ workflow,
// and the .gitignore line for .rnx/. Planned first (nothing written), then written all or nothing.
#pragma once

#include "init_scan.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace rnx::gate {

struct init_options {
  std::filesystem::path root = ".";  // the repository (rnx.toml goes here)
  std::string project;               // "" = the root folder's name
  std::string workflow;              // a ci-examples/ name without .yml; "" = chosen from the kernels; "none"
  bool force = false;                // replace an existing rnx.toml / workflow file
};

enum class file_action { create, replace, append };

struct planned_file {
  std::filesystem::path path;  // relative to the root
  file_action action = file_action::create;
  std::string content;  // create/replace: the whole file; append: the text added at its end
  std::string note;     // one line for the summary
};

struct init_plan {
  scan_result scan;
  std::string workflow;  // the ci-examples/ name used, "" when none
  std::vector<planned_file> files;
};

// The ci-examples/ workflows compiled into rnx (names without .yml), and one's text; "" for an unknown name.
std::vector<std::string> ci_example_names();
std::string ci_example_text(const std::string& name);

// A GPU kernel wants the self-hosted GPU gate (pr-gate); CPU kernels the GitHub-hosted report (report-only-hosted).
std::string choose_workflow(const scan_result& scan);

// rnx.toml for the kernels found: inferred inputs written, the others explained in comments.
std::string render_manifest(const std::string& project, const scan_result& scan);

// Scans and plans. Throws rnx::error(usage) when no kernel is found, for an unknown --workflow, and when
// rnx.toml or the workflow file exists without `force` (naming every such file and --force).
init_plan plan_init(const init_options& options);

// Writes the plan under `root`: each file through a temp file and a rename, so none is left half-written.
void apply_init(const init_plan& plan, const std::filesystem::path& root);

}  // namespace rnx::gate
