// Parsing of the [gate] explain keys: scope, budget, Nsight Compute and the count threshold.
#include "rnx/common/explain_settings.hpp"

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

std::string_view to_string(explain_scope s) {
  switch (s) {
    case explain_scope::automatic: return "auto";
    case explain_scope::all: return "all";
    case explain_scope::off: return "off";
  }
  return "auto";
}

std::optional<explain_scope> explain_scope_from_string(std::string_view s) {
  return enum_from_name(s, {explain_scope::automatic, explain_scope::all, explain_scope::off});
}

namespace {

[[noreturn]] void fail(const std::string& source, const toml::node& n, std::string_view key, std::string_view problem) {
  std::string where = source;
  if (n.source().begin.line > 0) where += ":" + std::to_string(n.source().begin.line);
  throw error(errc::invalid, where + ": key '" + std::string(key) + "': " + std::string(problem));
}

double number_in_range(const std::string& source, const toml::node& n, std::string_view name, std::string_view hint) {
  const std::string key = "gate." + std::string(name);
  auto v = n.value<double>();
  if (!v || n.is_boolean()) fail(source, n, key, "expected a number, e.g. " + std::string(hint));
  const key_range r = manifest_key_range("gate", name);
  if (!(*v >= r.lo && *v <= r.hi) || (r.open && (*v == r.lo || *v == r.hi))) {
    fail(source, n, key, "out of range, e.g. " + std::string(hint));
  }
  return *v;
}

}  // namespace

explain_settings parse_explain_settings(std::string_view manifest_text, const std::string& source) {
  explain_settings s;
  toml::table doc;
  try {
    doc = toml::parse(manifest_text, source);
  } catch (const toml::parse_error&) {
    return s;  // parse_manifest reports the syntax error with its position
  }
  const toml::table* gate = doc["gate"].as_table();
  if (!gate) return s;
  if (const toml::node* n = gate->get("explain")) {
    const auto* text = n->as_string();
    if (!text) fail(source, *n, "gate.explain", "expected a string: \"auto\", \"all\" or \"off\"");
    const auto scope = explain_scope_from_string(text->get());
    if (!scope) {
      fail(source, *n, "gate.explain",
           "unknown value \"" + text->get() +
               "\" (auto: slower and abstaining configurations, all: every one, off: none)");
    }
    s.scope = *scope;
  }
  if (const toml::node* n = gate->get("explain_budget_s")) {
    s.budget_s = number_in_range(source, *n, "explain_budget_s", "120 (seconds of profiling a job; 0 = none)");
  }
  if (const toml::node* n = gate->get("explain_ncu")) {
    auto b = n->value<bool>();
    if (!b || !n->is_boolean()) fail(source, *n, "gate.explain_ncu", "expected true or false");
    s.ncu = *b;
  }
  if (const toml::node* n = gate->get("explain_count_threshold")) {
    s.count_threshold = number_in_range(source, *n, "explain_count_threshold", "0.01 for 1%");
  }
  return s;
}

explain_settings load_explain_settings(const std::filesystem::path& manifest_path) {
  auto text = read_whole_file(manifest_path);
  if (!text) throw error(errc::not_found, manifest_path.string() + ": cannot read the manifest");
  return parse_explain_settings(*text, manifest_path.string());
}

}  // namespace rnx
