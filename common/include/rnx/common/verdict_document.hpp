// The verdict document (rnx.verdict/v1) and the gate policy that produces its overall answer.
#pragma once

#include "rnx/common/explanation.hpp"
#include "rnx/common/run_document.hpp"

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rnx {

inline constexpr std::string_view verdict_schema_id = "rnx.verdict/v1";

enum class decision { faster, slower, equivalent, abstain, new_config, missing, broken };
enum class overall { pass, warn, block };
enum class statistic { median, mean };

std::string_view to_string(decision d);   // "faster", ..., "new", "missing", "broken"
std::string_view to_string(overall o);    // "PASS", "WARN", "BLOCK"
std::string_view to_string(statistic s);  // "median", "mean"
std::optional<decision> decision_from_string(std::string_view s);
std::optional<overall> overall_from_string(std::string_view s);
std::optional<statistic> statistic_from_string(std::string_view s);

// The [gate] table of rnx.toml; what turns per-configuration decisions into PASS/WARN/BLOCK.
struct gate_policy {
  double rope = 0.02;
  double probability = 0.95;
  int min_samples = 8;
  int resamples = 2000;
  statistic stat = statistic::median;
  overall on_abstain = overall::warn;
  bool report_only = false;
};
// Throws rnx::error(usage) naming the field when a value is out of range.
void validate(const gate_policy& policy);

struct config_verdict {
  config_key key;
  decision result = decision::abstain;
  std::optional<double> ratio;  // head/base of the statistic
  std::optional<double> ci_lo;
  std::optional<double> ci_hi;
  std::optional<double> p_faster;
  std::optional<double> p_slower;
  std::optional<double> p_equivalent;
  std::optional<double> base_ms;  // the statistic of each side
  std::optional<double> head_ms;
  std::int64_t n_base = 0;
  std::int64_t n_head = 0;
  std::string reason;
  // The smallest slowdown (a fraction: 0.04 = 4%) this run could have called slower: the rope plus the
  // posterior's spread below its centre at the probability in use. Empty when there was no posterior.
  std::optional<double> mde;
  pairing_mode pairing = pairing_mode::none;  // in_process: paired ratios; process: paired runs, unpaired samples
  std::optional<double> threshold;            // the probability a decision needed, when looks split it (< probability)
  // A side's median time is below its physical bound (run_document.hpp, physical_bound): never faster or slower.
  bool beyond_physics = false;
  // A side's result was marked unstable by the runner (its processes disagree, or its samples are bimodal): its
  // time is no one number, and the tables mark it so.
  bool base_unstable = false;
  bool head_unstable = false;
  // Why the time moved: base and head profiled (rnx::explain); absent where nothing was asked or explained.
  std::optional<rnx::explanation> explanation;
};

// How a stored run became a baseline: uploaded by a push to its branch, or accepted (rnx accept); unknown where
// the reply did not say ("" as text).
enum class baseline_kind { unknown, push, accepted };
std::string_view to_string(baseline_kind k);                                    // "", "push", "accepted"
std::optional<baseline_kind> baseline_kind_from_string(std::string_view text);  // "push" or "accepted"

struct baseline_ref {
  std::string id;
  std::string commit;
  std::string created_at;
};

struct verdict_document {
  overall verdict = overall::pass;
  std::string reason;  // why the overall answer is what it is, one line
  std::optional<baseline_ref> baseline;
  std::string head_run_id;
  std::string env_id;
  gate_policy policy;
  std::vector<config_verdict> configs;
};

boost::json::value to_json(const verdict_document& v);
verdict_document verdict_from_json(const boost::json::value& v, std::string_view source);

}  // namespace rnx
