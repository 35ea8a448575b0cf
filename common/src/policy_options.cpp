#include "rnx/common/policy_options.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/manifest_keys.hpp"
#include "rnx/common/text.hpp"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <string_view>

namespace rnx {

namespace {

struct option_spec {
  policy_option option;
  std::string_view flag;
  std::string_view key;  // the [gate] key it overrides
  std::string_view help;
};

constexpr option_spec specs[] = {
    {policy_option::rope, "--rope", "rope", "Half-width of the band of practical equivalence, a fraction"},
    {policy_option::probability, "--probability", "probability", "Posterior probability a decision needs"},
    {policy_option::min_samples, "--min-samples", "min_samples", "Fewest samples a side for a decision"},
    {policy_option::resamples, "--resamples", "resamples", "Bayesian bootstrap draws"},
    {policy_option::statistic, "--statistic", "statistic", "Per-side statistic: median | mean"},
    {policy_option::on_abstain, "--on-abstain", "on_abstain",
     "Overall answer when a configuration abstains: pass | warn | block"},
    {policy_option::report_only, "--report-only", "report_only", "Never answer BLOCK (report it as WARN); exit 0"},
};

const std::string* field(const policy_overrides& o, policy_option option) {
  switch (option) {
    case policy_option::rope: return &o.rope;
    case policy_option::probability: return &o.probability;
    case policy_option::min_samples: return &o.min_samples;
    case policy_option::resamples: return &o.resamples;
    case policy_option::statistic: return &o.statistic;
    case policy_option::on_abstain: return &o.on_abstain;
    case policy_option::report_only: return nullptr;
  }
  return nullptr;
}

std::string* field(policy_overrides& o, policy_option option) {
  return const_cast<std::string*>(field(static_cast<const policy_overrides&>(o), option));
}

const manifest_key& gate_key(std::string_view name) {
  const manifest_key* k = find_manifest_key("gate", name);
  if (!k) throw error(errc::internal, "no [gate] key " + std::string(name) + " in manifest_keys");
  return *k;
}

[[noreturn]] void bad_value(std::string_view flag, const std::string& text, const manifest_key& key) {
  const std::string type = manifest_key_type_text(key);
  const bool vowel = !type.empty() && std::string_view("aeiou").find(type[0]) != std::string_view::npos;
  throw error(errc::usage, std::string(flag) + " \"" + text + "\": expected " + (vowel ? "an " : "a ") + type +
                               " (as rnx.toml's gate." + std::string(key.name) + "); write e.g. " + std::string(flag) +
                               " " + std::string(key.default_text));
}

// The number `text` within the key's range (and whole for an integer key), or a usage error.
double read_number(std::string_view flag, const std::string& text, const manifest_key& key) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) bad_value(flag, text, key);
  if (key.type == "integer" && v != std::floor(v)) bad_value(flag, text, key);
  if (key.range && !in_range(*key.range, v)) bad_value(flag, text, key);
  return v;
}

}  // namespace

void add_policy_options(CLI::App& cmd, policy_overrides& into, std::initializer_list<policy_option> which,
                        const std::string& defaults_from) {
  for (const option_spec& s : specs) {
    bool wanted = false;
    for (policy_option w : which) wanted = wanted || w == s.option;
    if (!wanted) continue;
    const manifest_key& key = gate_key(s.key);
    std::string help(s.help);
    if (s.option == policy_option::report_only) {
      cmd.add_flag(std::string(s.flag), into.report_only, help);
      continue;
    }
    help += " (default: " + (defaults_from.empty() ? "" : defaults_from + " " + std::string(key.name) + ", else ") +
            std::string(key.default_text) + ")";
    cmd.add_option(std::string(s.flag), *field(into, s.option), help);
  }
}

bool any_given(const policy_overrides& o) {
  return o.report_only || !o.rope.empty() || !o.probability.empty() || !o.min_samples.empty() || !o.resamples.empty() ||
         !o.statistic.empty() || !o.on_abstain.empty();
}

gate_policy with_overrides(gate_policy policy, const policy_overrides& o) {
  for (const option_spec& s : specs) {
    const std::string* text = field(o, s.option);
    if (!text || text->empty()) continue;
    const manifest_key& key = gate_key(s.key);
    switch (s.option) {
      case policy_option::rope: policy.rope = read_number(s.flag, *text, key); break;
      case policy_option::probability: policy.probability = read_number(s.flag, *text, key); break;
      case policy_option::min_samples: policy.min_samples = static_cast<int>(read_number(s.flag, *text, key)); break;
      case policy_option::resamples: policy.resamples = static_cast<int>(read_number(s.flag, *text, key)); break;
      case policy_option::statistic: {
        const auto stat = statistic_from_string(*text);
        if (!stat) throw error(errc::usage, "--statistic \"" + *text + "\" must be median or mean");
        policy.stat = *stat;
        break;
      }
      case policy_option::on_abstain: {
        const auto overall = overall_from_string(*text);
        if (!overall) throw error(errc::usage, "--on-abstain \"" + *text + "\" must be pass, warn or block");
        policy.on_abstain = *overall;
        break;
      }
      case policy_option::report_only: break;
    }
  }
  if (o.report_only) policy.report_only = true;
  validate(policy);
  return policy;
}

}  // namespace rnx
