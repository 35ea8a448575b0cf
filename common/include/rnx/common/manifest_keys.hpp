// Every key rnx.toml may hold: the one list the parsers check unknown keys against and docs/manifest.md is tested
// against (tests/runner/test_manifest.cpp), so the reference cannot drift from the code.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rnx {

// The values a numeric key accepts; `open` = both ends excluded (0 < rope < 1).
struct key_range {
  double lo = 0;
  double hi = 0;
  bool open = false;
};

// Whether `v` is a value of the range.
bool in_range(const key_range& range, double v);

struct manifest_key {
  std::string_view table;  // "" for the top-level tables, else "bench", "kernel", "gate.runners.LABEL", ...
  std::string_view name;
  std::string_view type;  // "string", "integer", "number", "boolean", "array of strings", "table", ...
  std::optional<key_range> range;
  std::string_view default_text;  // as docs/manifest.md writes it: `3`, `"auto"`, `["eager"]`, or words
};

// In the order docs/manifest.md lists them.
const std::vector<manifest_key>& manifest_keys();

// The key `name` of `table`, or null.
const manifest_key* find_manifest_key(std::string_view table, std::string_view name);

// The range of a numeric key; throws rnx::error(internal) when the list gives it none (a programming error).
key_range manifest_key_range(std::string_view table, std::string_view name);

// The key names allowed in `table` (as manifest_key::table spells it); empty for an unknown table.
std::set<std::string> manifest_key_names(std::string_view table);

// "table.name" (just "name" at the top level), as the docs' key column writes it.
std::string manifest_key_path(const manifest_key& key);

// The type with its range, as the docs' type column writes it: "integer, 1 to 64", "number, 0 < x < 1".
std::string manifest_key_type_text(const manifest_key& key);

}  // namespace rnx
