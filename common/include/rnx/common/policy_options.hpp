// The verdict policy's options on a command line: one parser for every command that takes them (rnx compare,
// rnx gate, rnx bench --pair). Each value is read as the [gate] key of the same name is read from rnx.toml: the
// range is the key's (manifest_keys.hpp), the default gate_policy{}'s, and an error names the flag, what it got and
// a value that works.
#pragma once

#include "rnx/common/verdict_document.hpp"

#include <initializer_list>
#include <string>

namespace CLI {
class App;
}

namespace rnx {

enum class policy_option { rope, probability, min_samples, resamples, statistic, on_abstain, report_only };

// What was given, as written: "" = not given, so a manifest's value (or gate_policy{}'s) stays.
struct policy_overrides {
  std::string rope;
  std::string probability;
  std::string min_samples;
  std::string resamples;
  std::string statistic;
  std::string on_abstain;
  bool report_only = false;
};

// Adds the options `which` to `cmd`, bound to `into`. `defaults_from` names where a command's values come from
// when an option is not given ("rnx.toml's [gate]", or "" for gate_policy{}'s alone): the help says it.
void add_policy_options(CLI::App& cmd, policy_overrides& into, std::initializer_list<policy_option> which,
                        const std::string& defaults_from);

// Whether any option was given.
bool any_given(const policy_overrides& overrides);

// `policy` with every given option applied, then validated; throws rnx::error(usage) naming the flag.
gate_policy with_overrides(gate_policy policy, const policy_overrides& overrides);

}  // namespace rnx
