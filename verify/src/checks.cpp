// The check table's names and the outcome and group vocabularies (checks.hpp).
#include "rnx/verify/checks.hpp"

#include "rnx/common/enum_names.hpp"

#include <cstddef>

namespace rnx::verify {

static_assert(check_table.size() == static_cast<std::size_t>(check_id::sandbox) + 1,
              "every check_id has its row in check_table");

std::string_view to_string(outcome o) {
  switch (o) {
    case outcome::pass: return "pass";
    case outcome::fail: return "fail";
    case outcome::review: return "review";
    case outcome::skip: return "skip";
  }
  return "fail";
}

std::optional<outcome> outcome_from_string(std::string_view name) {
  return enum_from_name(name, {outcome::pass, outcome::fail, outcome::review, outcome::skip});
}

std::string_view to_string(check_group g) {
  switch (g) {
    case check_group::correctness: return "correctness";
    case check_group::audit: return "audit";
    case check_group::containment: return "containment";
  }
  return "audit";
}

std::optional<check_group> check_group_from_string(std::string_view name) {
  return enum_from_name(name, {check_group::correctness, check_group::audit, check_group::containment});
}

std::string_view to_string(check_id c) {
  switch (c) {
    case check_id::smoke: return "smoke";
    case check_id::shape_sweep: return "shape_sweep";
    case check_id::stability: return "stability";
    case check_id::determinism: return "determinism";
    case check_id::edge_cases: return "edge_cases";
    case check_id::fresh_inputs: return "fresh_inputs";
    case check_id::stale_memory: return "stale_memory";
    case check_id::input_mutation: return "input_mutation";
    case check_id::output_aliasing: return "output_aliasing";
    case check_id::ignored_inputs: return "ignored_inputs";
    case check_id::shape_specialization: return "shape_specialization";
    case check_id::precision: return "precision";
    case check_id::hidden_work: return "hidden_work";
    case check_id::extra_threads: return "extra_threads";
    case check_id::implausible_speedup: return "implausible_speedup";
    case check_id::static_scan: return "static_scan";
    case check_id::patched_globals: return "patched_globals";
    case check_id::sandbox: return "sandbox";
  }
  return "";
}

std::optional<check_id> check_id_from_string(std::string_view name) {
  for (const check_entry& c : check_table) {
    if (to_string(c.id) == name) return c.id;
  }
  return std::nullopt;
}

check_group group_of(check_id c) {
  for (const check_entry& e : check_table) {
    if (e.id == c) return e.group;
  }
  return check_group::audit;
}

}  // namespace rnx::verify
