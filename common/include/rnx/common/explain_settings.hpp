// [gate] explain, explain_budget_s, explain_ncu and explain_count_threshold of rnx.toml: which configurations the
// gate profiles base against head to say why their time moved, and what that may cost. The manifest parser checks
// these keys with the others (parse_manifest calls parse_explain_settings); the gate and rnx explain read them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace rnx {

// automatic: every slower configuration, and every abstaining one (its counts may say what the time could not);
// all: every configuration measured on both sides; off: none.
enum class explain_scope { automatic, all, off };
std::string_view to_string(explain_scope s);  // "auto", "all", "off"
std::optional<explain_scope> explain_scope_from_string(std::string_view s);

struct explain_settings {
  explain_scope scope = explain_scope::automatic;
  double budget_s = 120;          // the job's profiling seconds, all configurations together
  bool ncu = false;               // Nsight Compute counters where ncu is present and the device is a GPU
  double count_threshold = 0.01;  // a count moved when it changed by more than this fraction
};

// The [gate] explain keys of manifest text. Bad values are rnx::error(invalid) as the manifest parser words them;
// TOML syntax errors are left to parse_manifest (defaults here).
explain_settings parse_explain_settings(std::string_view manifest_text, const std::string& source);
// Reads the manifest file; a missing file is errc::not_found.
explain_settings load_explain_settings(const std::filesystem::path& manifest_path);

}  // namespace rnx
