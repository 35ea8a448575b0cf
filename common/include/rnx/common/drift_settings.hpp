// [gate] drift_budget, anchor and drift_action of rnx.toml: a pull request's head is also judged against an older
// stored run of its base branch (the anchor), so that many small slowdowns, each inside the band, cannot add up
// unnoticed. The manifest parser checks these keys with the others (parse_manifest calls parse_drift_settings).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace rnx {

enum class drift_action { warn, block };
std::string_view to_string(drift_action a);  // "warn", "block"
std::optional<drift_action> drift_action_from_string(std::string_view s);

enum class anchor_kind { tag, days, accepted };
struct drift_anchor {
  anchor_kind kind = anchor_kind::accepted;
  std::string tag_glob;  // tag: the newest tag matching it that the head contains
  int days = 0;          // days: the newest baseline at least this old
};
std::string to_string(const drift_anchor& a);  // "tag:v*", "days:30", "accepted"
// "tag:GLOB", "days:N" (N from 1 to 3650) or "accepted"; nullopt for anything else.
std::optional<drift_anchor> drift_anchor_from_string(std::string_view text);

struct drift_settings {
  std::optional<double> budget;  // a fraction; unset = no drift check
  drift_anchor anchor;
  drift_action action = drift_action::warn;
};

// The [gate] drift keys of manifest text. Bad values are rnx::error(invalid) as the manifest parser words them
// ("SOURCE:LINE: key 'gate.anchor': ..."); TOML syntax errors are left to parse_manifest (an empty result here).
drift_settings parse_drift_settings(std::string_view manifest_text, const std::string& source);
// Reads the manifest file; a missing file is errc::not_found.
drift_settings load_drift_settings(const std::filesystem::path& manifest_path);

}  // namespace rnx
