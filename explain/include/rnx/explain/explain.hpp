// Explaining a verdict: for each configuration the scope asks for, base and head profiled once more, untimed, each
// in its own worker process (never one that times anything), diffed, and the explanation attached to the verdict.
// The decisions stay as they are: only a configuration's reason may gain what its counts say. The job's profiling
// time is bounded by [gate] explain_budget_s; a configuration whose turn comes after it is spent says so.
//
//   rnx::explain::sides s{"base/rnx.toml", "rnx.toml", &base_run, &head_run};
//   verdict = rnx::explain::explain_verdict(std::move(verdict), s, rnx::load_explain_settings("rnx.toml"), {});
#pragma once

#include "rnx/common/explain_settings.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"
#include "rnx/explain/ncu.hpp"
#include "rnx/optimize/profile.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

namespace rnx::explain {

// Whether a configuration with this decision is explained under `scope`: automatic takes slower and abstain, all
// takes every decision both sides were measured for (faster, slower, equivalent, abstain), off none.
bool wanted(explain_scope scope, decision d);

// The code of each side (its manifest, in its own checkout) and the runs that measured it (their work and device).
struct sides {
  std::filesystem::path base_manifest;
  std::filesystem::path head_manifest;
  const run_document* base_run = nullptr;  // may be null: the work is then the head's alone
  const run_document* head_run = nullptr;
};

// What one side's profile run gets: the manifest, the configuration, its device, and the seconds it may take.
struct profile_job {
  std::filesystem::path manifest;
  config_key key;
  std::string device;  // the run document's ("cpu", "cuda:0"); "" = the manifest's
  std::chrono::seconds timeout{60};
};

// How profiles and counters are taken and time is read; the defaults start rnx-profile-worker (and ncu under
// explain_ncu) and read the steady clock. Tests pass their own.
struct tools {
  std::function<optimize::op_profile(const profile_job&)> profile;
  // nullopt with `why` set where the counters cannot be had (no ncu on PATH, a CPU device).
  std::function<std::optional<ncu_counts>(const profile_job&, std::string& why)> counters;
  std::function<double()> now_s;
  std::ostream* log = nullptr;  // one progress line per configuration; null = quiet
};
tools default_tools(std::ostream* log);

// Calls and warm-up calls a side inside and before the profiled window.
inline constexpr int profiled_calls = 10;
inline constexpr int warmup_calls = 3;

// The verdict with an explanation on every configuration the settings' scope wants, in verdict order, until the
// budget is spent; an abstaining or slower configuration's reason gains counts_reason.
verdict_document explain_verdict(verdict_document v, const sides& s, const explain_settings& settings, const tools& t);

}  // namespace rnx::explain
