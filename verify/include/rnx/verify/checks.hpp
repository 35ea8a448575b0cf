// The verifier's closed vocabularies, shared by the judge (rnx_verify) and rnx-verify-worker: every check a
// verification reports, in report order with its group (the one check table), and the outcome of a row, which
// travels between worker and judge as its to_string.
//
//   for (const check_entry& c : check_table) std::cout << to_string(c.group) << "/" << to_string(c.id) << "\n";
//   std::optional<outcome> o = outcome_from_string("pass");  // nullopt for a name it does not know
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace rnx::verify {

enum class outcome { pass, fail, review, skip };
std::string_view to_string(outcome o);
std::optional<outcome> outcome_from_string(std::string_view name);

// The three groups of the report's rows: a correctness stage fails the candidate as wrong, an audit check as a
// cheat, containment as an escape from the sandbox (the optimizer reports the first two apart).
enum class check_group { correctness, audit, containment };
std::string_view to_string(check_group g);  // "correctness", "audit", "containment"
std::optional<check_group> check_group_from_string(std::string_view name);

// Every stage and check a verification reports.
enum class check_id {
  smoke,
  shape_sweep,
  stability,
  determinism,
  edge_cases,
  fresh_inputs,
  stale_memory,
  input_mutation,
  output_aliasing,
  ignored_inputs,
  shape_specialization,
  precision,
  hidden_work,
  extra_threads,
  implausible_speedup,
  static_scan,
  patched_globals,
  sandbox,
};
std::string_view to_string(check_id c);  // the row's name in every report: "smoke", "shape_sweep", ...
std::optional<check_id> check_id_from_string(std::string_view name);

struct check_entry {
  check_id id;
  check_group group;
};

// Every row a complete verification reports, in report order, with its group.
inline constexpr std::array<check_entry, 18> check_table = {{
    {check_id::smoke, check_group::correctness},
    {check_id::shape_sweep, check_group::correctness},
    {check_id::stability, check_group::correctness},
    {check_id::determinism, check_group::correctness},
    {check_id::edge_cases, check_group::correctness},
    {check_id::fresh_inputs, check_group::audit},
    {check_id::stale_memory, check_group::audit},
    {check_id::input_mutation, check_group::audit},
    {check_id::output_aliasing, check_group::audit},
    {check_id::ignored_inputs, check_group::audit},
    {check_id::shape_specialization, check_group::audit},
    {check_id::precision, check_group::audit},
    {check_id::hidden_work, check_group::audit},
    {check_id::extra_threads, check_group::audit},
    {check_id::implausible_speedup, check_group::audit},
    {check_id::static_scan, check_group::audit},
    {check_id::patched_globals, check_group::audit},
    {check_id::sandbox, check_group::containment},
}};

// The group of `c` in the check table.
check_group group_of(check_id c);

}  // namespace rnx::verify
