// Planning a bench: which configurations run, on which side, paired how; shared by the orchestrator.
#pragma once

#include "rnx/common/manifest.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/runner/bench.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rnx::runner::detail {

struct planned {
  std::size_t side = 0;
  const kernel_spec* spec = nullptr;
  bench_settings bench;  // the kernel's settings, with the CUDA defaults where it runs on a GPU (settings_for)
  run_result result;
  int processes = 3;      // rounds before the first look (and all rounds outside paired runs)
  int max_processes = 3;  // paired runs: rounds while undecided
  double timeout_s = 120;
  bool failed = false;   // error / diverged / skipped: not run again
  bool checked = false;  // the reference check ran (first process that got this far)
  int rounds_done = 0;
  std::optional<std::size_t> partner;      // paired runs: the other side's entry of the same configuration
  bool in_process = false;                 // paired in the same worker processes as its partner
  bool decided = false;                    // a sequential look decided it: no more rounds
  std::string note;                        // goes first in the result's message
  std::vector<std::string> process_notes;  // per process: what it went through while sampling (CPU)
  double spent_ms = 0;                     // timed sampling so far, this side's share (a joint process counts half)
  // In-process pairs: the base's samples timed alone, before its head was imported, in this process (on the base's
  // entry; docs/runner.md, a head cannot steer its base) until they are judged.
  std::vector<double> control_ms;
  // A control that found the base moved, waiting for the next process with the base first to confirm it (on the
  // head's entry): one process's drift is not a steer, a head that steers does it in every process.
  std::optional<base_control_check> control_trip;
  // The round of a process past max_processes granted to confirm a control that found the base moved in the last
  // one (on the head's entry; -1: none): a trip is always confirmed or cleared by a second control, never settled
  // by the schedule running out.
  int confirm_round = -1;
  // The round this configuration's counted processes start from: 0, or the round a steered pair was split in
  // (its in-process samples dropped, its processes counted again from there).
  int round_offset = 0;
  // Paired runs, on the head's entry: the later looks' processes sample for budget_ms times this. It doubles at a
  // look that leaves the pair undecided only where a longer process would tell more than another process
  // (stats::longer_processes_help); where the processes differ by more than their own noise, it stays.
  double budget_factor = 1;
};

struct side_state {
  manifest m;
  std::filesystem::path manifest_path;
  std::optional<environment> env;
  std::vector<double> sm_clocks;
};

// The configurations of every side that the filters select, each head one linked with its base and told
// whether they can share worker processes. Throws rnx::error(usage) naming the manifest's kernels.
std::vector<planned> plan(const std::vector<side_state>& sides, const bench_options& o);

// Adds a line to what goes first in the configuration's message.
void add_note(planned& p, const std::string& note);

// Settles a configuration as failed (error, diverged, skipped): it is not run again.
void set_failed(planned& p, result_status status, std::string message);

}  // namespace rnx::runner::detail
