// Parsing of the [optimize] table of rnx.toml with toml++.
#include "rnx/optimize/config.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/files.hpp"
#include "rnx/common/manifest_keys.hpp"

#include <toml++/toml.h>

#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace rnx::optimize {

std::string_view to_string(rewriter_kind k) {
  switch (k) {
    case rewriter_kind::command: return "command";
    case rewriter_kind::anthropic: return "anthropic";
    case rewriter_kind::openai: return "openai";
  }
  return "command";
}

namespace {

[[noreturn]] void fail(const std::string& source, const toml::node* n, std::string_view key, const std::string& what) {
  std::string where = source;
  if (n) where += ":" + std::to_string(n->source().begin.line);
  throw error(errc::invalid, where + ": optimize." + std::string(key) + ": " + what);
}

std::string get_string(const std::string& source, const toml::node& n, std::string_view key) {
  auto s = n.value<std::string>();
  if (!s || !n.is_string()) fail(source, &n, key, "expected a string in quotes");
  return *s;
}

double get_number(const std::string& source, const toml::node& n, std::string_view key, double lo, double hi) {
  auto d = n.value<double>();
  if (!d || !(n.is_floating_point() || n.is_integer())) fail(source, &n, key, "expected a number");
  if (!(*d >= lo && *d <= hi)) {
    std::ostringstream msg;
    msg << "must lie in [" << lo << ", " << hi << "], got " << *d;
    fail(source, &n, key, msg.str());
  }
  return *d;
}

int get_int(const std::string& source, const toml::node& n, std::string_view key, int lo, int hi) {
  auto i = n.value<std::int64_t>();
  if (!i || !n.is_integer()) fail(source, &n, key, "expected a whole number");
  if (*i < lo || *i > hi) {
    fail(source, &n, key,
         "must lie in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(*i));
  }
  return static_cast<int>(*i);
}

// The range comes from the one list of rnx.toml keys (rnx/common/manifest_keys.hpp).
double get_number(const std::string& source, const toml::node& n, std::string_view key) {
  const key_range r = manifest_key_range("optimize", key);
  return get_number(source, n, key, r.lo, r.hi);
}

int get_int(const std::string& source, const toml::node& n, std::string_view key) {
  const key_range r = manifest_key_range("optimize", key);
  return get_int(source, n, key, static_cast<int>(r.lo), static_cast<int>(r.hi));
}

rewriter_kind parse_kind(std::string_view s, const std::function<void(const std::string&)>& on_bad) {
  for (auto k : {rewriter_kind::command, rewriter_kind::anthropic, rewriter_kind::openai}) {
    if (to_string(k) == s) return k;
  }
  on_bad("unknown rewriter \"" + std::string(s) + "\" (use command, anthropic or openai)");
  return rewriter_kind::command;
}

}  // namespace

optimize_config parse_optimize_config(std::string_view toml_text, const std::string& source) {
  toml::table doc;
  try {
    doc = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    throw error(errc::bad_input, source + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
                                     ": malformed TOML: " + std::string(e.description()));
  }
  optimize_config c;
  auto node = doc.get("optimize");
  if (!node) return c;
  auto t = node->as_table();
  if (!t) throw error(errc::invalid, source + ": optimize: expected a table [optimize]");
  const std::set<std::string> allowed = manifest_key_names("optimize");
  for (const auto& [k, v] : *t) {
    if (!allowed.count(std::string(k.str()))) {
      std::string names;
      for (const auto& name : allowed) names += (names.empty() ? "" : ", ") + name;
      fail(source, &v, k.str(), "unknown key (allowed: " + names + "; check the spelling)");
    }
  }
  if (auto n = t->get("rewriter")) {
    std::string s = get_string(source, *n, "rewriter");
    c.rewriter = parse_kind(s, [&](const std::string& m) { fail(source, n, "rewriter", m); });
    c.rewriter_set = true;
  }
  if (auto n = t->get("command")) c.command = get_string(source, *n, "command");
  if (auto n = t->get("model")) c.model = get_string(source, *n, "model");
  if (auto n = t->get("base_url")) {
    c.base_url = get_string(source, *n, "base_url");
    if (c.base_url.rfind("http://", 0) != 0 && c.base_url.rfind("https://", 0) != 0) {
      fail(source, n, "base_url", "\"" + c.base_url + "\" is not an http:// or https:// URL");
    }
  }
  if (auto n = t->get("api_key_env")) c.api_key_env = get_string(source, *n, "api_key_env");
  if (auto n = t->get("budget")) c.budget = get_int(source, *n, "budget");
  if (auto n = t->get("timeout_s")) c.timeout_s = get_number(source, *n, "timeout_s");
  if (auto n = t->get("retries")) c.retries = get_int(source, *n, "retries");
  if (auto n = t->get("backoff_s")) c.backoff_s = get_number(source, *n, "backoff_s");
  if (auto n = t->get("max_tokens")) c.max_tokens = get_int(source, *n, "max_tokens");
  if (auto n = t->get("temperature")) c.temperature = get_number(source, *n, "temperature");
  if (c.rewriter == rewriter_kind::command && c.rewriter_set && c.command.empty()) {
    fail(source, node, "command", "rewriter = \"command\" needs command = \"path/to/executable\"");
  }
  return c;
}

namespace {

std::string read_file_text(const std::filesystem::path& path) {
  auto text = read_whole_file(path);
  if (!text) {
    throw error(errc::not_found, path.string() + ": cannot read the manifest (pass --config PATH to rnx.toml)");
  }
  return *text;
}

}  // namespace

optimize_config load_optimize_config(const std::filesystem::path& manifest_path) {
  return parse_optimize_config(read_file_text(manifest_path), manifest_path.string());
}

void apply_rewriter_flag(optimize_config& config, std::string_view flag) {
  if (flag.rfind("command:", 0) == 0) {
    std::string path(flag.substr(8));
    if (path.empty()) throw error(errc::usage, "--rewriter command:PATH needs the executable's path after 'command:'");
    config.rewriter = rewriter_kind::command;
    config.command = path;
  } else if (flag == "command") {
    if (config.command.empty()) {
      throw error(errc::usage,
                  "--rewriter command needs a path: write --rewriter command:PATH or set [optimize] command");
    }
    config.rewriter = rewriter_kind::command;
  } else {
    config.rewriter = parse_kind(flag, [](const std::string& m) { throw error(errc::usage, "--rewriter: " + m); });
  }
  config.rewriter_set = true;
}

std::string strip_optimize_table(std::string_view text) {
  // Line-based so the other tables keep their line numbers in error messages.
  std::string out;
  out.reserve(text.size());
  bool inside = false;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    std::size_t next = end == std::string_view::npos ? text.size() : end + 1;
    std::string_view line = text.substr(pos, next - pos);
    std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line[first] == '[') {
      std::string_view head = line.substr(first);
      std::size_t close = head.find(']');
      std::string name(head.substr(1, close == std::string_view::npos ? 0 : close - 1));
      name.erase(0, name.find_first_not_of(" \t"));
      name.erase(name.find_last_not_of(" \t") + 1);
      inside = name == "optimize" || name.rfind("optimize.", 0) == 0;
    }
    if (inside) {
      if (end != std::string_view::npos) out += '\n';
    } else {
      out.append(line);
    }
    pos = next;
  }
  return out;
}

manifest load_manifest_with_optimize(const std::filesystem::path& path) {
  std::string text = read_file_text(path);
  std::filesystem::path root = std::filesystem::absolute(path).parent_path();
  manifest m = parse_manifest(strip_optimize_table(text), path.string(), root);
  for (const auto& k : m.kernels) {
    if (!std::filesystem::exists(k.resolved_path)) {
      throw error(errc::not_found, path.string() + ":" + std::to_string(k.line) + ": kernel " + k.name + ": no file " +
                                       k.resolved_path.string() + " (paths are relative to the manifest's folder)");
    }
  }
  return m;
}

}  // namespace rnx::optimize
