// Parsing of the [gate] drift keys: budget, anchor and action.
#include "rnx/common/drift_settings.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/files.hpp"
#include "rnx/common/manifest_keys.hpp"

// Debian's toml++ 3.3 ships toml.h; newer releases and the carried copy ship toml.hpp.
#if __has_include(<toml++/toml.hpp>)
#include <toml++/toml.hpp>
#else
#include <toml++/toml.h>
#endif

namespace rnx {

std::string_view to_string(drift_action a) { return a == drift_action::block ? "block" : "warn"; }

std::optional<drift_action> drift_action_from_string(std::string_view s) {
  return enum_from_name(s, {drift_action::warn, drift_action::block});
}

std::string to_string(const drift_anchor& a) {
  switch (a.kind) {
    case anchor_kind::tag: return "tag:" + a.tag_glob;
    case anchor_kind::days: return "days:" + std::to_string(a.days);
    case anchor_kind::accepted: return "accepted";
  }
  return "accepted";
}

std::optional<drift_anchor> drift_anchor_from_string(std::string_view text) {
  drift_anchor a;
  if (text == "accepted") return a;
  if (text.substr(0, 4) == "tag:" && text.size() > 4) {
    a.kind = anchor_kind::tag;
    a.tag_glob = std::string(text.substr(4));
    if (a.tag_glob.front() == '-') return std::nullopt;  // git would read it as an option
    return a;
  }
  if (text.substr(0, 5) == "days:" && text.size() > 5 && text.size() <= 9) {
    int days = 0;
    for (char c : text.substr(5)) {
      if (c < '0' || c > '9') return std::nullopt;
      days = days * 10 + (c - '0');
    }
    if (days < 1 || days > 3650) return std::nullopt;
    a.kind = anchor_kind::days;
    a.days = days;
    return a;
  }
  return std::nullopt;
}

namespace {

[[noreturn]] void fail(const std::string& source, const toml::node& n, std::string_view key, std::string_view problem) {
  std::string where = source;
  if (n.source().begin.line > 0) where += ":" + std::to_string(n.source().begin.line);
  throw error(errc::invalid, where + ": key '" + std::string(key) + "': " + std::string(problem));
}

std::string string_of(const std::string& source, const toml::node& n, std::string_view key) {
  if (auto s = n.as_string()) return s->get();
  fail(source, n, key, "expected a string");
}

}  // namespace

drift_settings parse_drift_settings(std::string_view manifest_text, const std::string& source) {
  drift_settings d;
  toml::table doc;
  try {
    doc = toml::parse(manifest_text, source);
  } catch (const toml::parse_error&) {
    return d;  // parse_manifest reports the syntax error with its position
  }
  const toml::table* gate = doc["gate"].as_table();
  if (!gate) return d;
  if (const toml::node* n = gate->get("drift_budget")) {
    auto v = n->value<double>();
    const key_range r = manifest_key_range("gate", "drift_budget");
    if (!v || n->is_boolean()) fail(source, *n, "gate.drift_budget", "expected a number, e.g. 0.05 for 5%");
    if (!(*v > r.lo && *v < r.hi))
      fail(source, *n, "gate.drift_budget",
           "must be a fraction between 0 and 1 "
           "(0.05 = 5%)");
    d.budget = *v;
  }
  if (const toml::node* n = gate->get("anchor")) {
    const std::string s = string_of(source, *n, "gate.anchor");
    auto a = drift_anchor_from_string(s);
    if (!a) {
      fail(source, *n, "gate.anchor",
           "\"" + s +
               "\" is not an anchor (use \"tag:v*\" for the newest matching tag, "
               "\"days:30\" for the baseline 30 days back, or \"accepted\")");
    }
    d.anchor = *a;
  }
  if (const toml::node* n = gate->get("drift_action")) {
    const std::string s = string_of(source, *n, "gate.drift_action");
    auto a = drift_action_from_string(s);
    if (!a) fail(source, *n, "gate.drift_action", "unknown value \"" + s + "\" (use warn or block)");
    d.action = *a;
  }
  const toml::node* extra = gate->get("anchor") ? gate->get("anchor") : gate->get("drift_action");
  if (!d.budget && extra) {
    fail(source, *extra, "gate.drift_budget",
         "anchor and drift_action need a budget: add  drift_budget = 0.05  "
         "under [gate]");
  }
  return d;
}

drift_settings load_drift_settings(const std::filesystem::path& manifest_path) {
  auto text = read_whole_file(manifest_path);
  if (!text) throw error(errc::not_found, manifest_path.string() + ": cannot read the manifest");
  return parse_drift_settings(*text, manifest_path.string());
}

}  // namespace rnx
