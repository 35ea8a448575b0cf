// `rnx import`: another benchmark harness's output as an rnx.run/v1 document, with per-sample times.
//
//   rnx::importers::import_options o;
//   o.fmt = rnx::importers::format::gbench;
//   o.files = {"bench-1.json", "bench-2.json"};   // one file per process: they become the result's groups
//   o.project = "kernels";                         // empty: the project the harness recorded, if any
//   rnx::importers::import_summary summary;        // counts, and the notes and warnings to show
//   rnx::run_document run = rnx::importers::import_run(o, &summary);   // throws rnx::error naming file and JSON path
//   rnx::write_run_file(run, "run.json");
//
// The mapping of names and parameters to configurations, and what is refused, are in docs/import.md.
#pragma once

#include "rnx/common/run_document.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::importers {

enum class format { gbench, pytest_benchmark, nvbench };

// "gbench" | "pytest-benchmark" | "nvbench"; the same words are the imported results' runtime.
std::string_view to_string(format f);
std::optional<format> format_from_string(std::string_view name);

struct import_options {
  format fmt = format::gbench;
  std::vector<std::string> files;  // each a separate run of the harness (a process); at least one
  // Empty: the project the files record (pytest-benchmark's commit_info.project); none there is a usage error.
  // `rnx import` fills it from --project or the manifest's [project] name first.
  std::string project;
  // Where the harness records these (pytest-benchmark's commit_info), they are taken from it unless given here.
  std::string commit;
  std::string branch;
  std::string base_branch;
  std::optional<std::int64_t> pull_request;
  // Keep configurations the harness kept only summaries of (mean, median, ...), marked as such; the verdict abstains
  // on them. Without it such a configuration is an error.
  bool allow_aggregates = false;
  // Google Benchmark only: take each repetition's cpu_time instead of its real_time (wall clock). On a shared, busy
  // machine the wall clock of a CPU-bound benchmark includes the time it waited for a core. Recorded in the
  // environment's harness, so runs with different timers are never compared.
  bool gbench_cpu_time = false;
};

// What an import found, for the command's summary line.
struct import_summary {
  std::size_t configurations = 0;
  std::size_t with_samples = 0;
  std::size_t aggregates_only = 0;
  std::size_t not_ok = 0;                // error or skipped in the harness
  std::vector<std::string> few_samples;  // labels of configurations with fewer than 8 samples (a verdict needs 8)
  // What was left out, renamed or assumed ("FILE: PATH: ..."): complexity rows, parameters named by the test id,
  // a time stamp without a UTC offset, where the project came from.
  std::vector<std::string> notes;
  // What may make the verdict wrong: configurations missing from some of the files.
  std::vector<std::string> warnings;
  // Where the environment came from, when it is not plainly the machine that ran the import: the machine the files
  // name is another ("FILE: $.context: measured on host \"a\" (...), not on this machine (...): ..."), or the files
  // name none and the importing machine stands in for it. "" when the files name this very machine.
  std::string environment_note;
};

// Reads, checks and converts every file; nothing is written. Bad input throws rnx::error (bad_input / invalid /
// not_found) with one line naming the file and the JSON path.
run_document import_run(const import_options& options, import_summary* summary = nullptr);

}  // namespace rnx::importers
