// `rnx changes`: the change points found in a branch's history, from the embedded store (`--store FILE`).
#include "commands.hpp"

#include "gate_settings.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/text.hpp"
#include "rnx/service/changes.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace rnx::cli {

namespace {

struct changes_options {
  std::string store;
  std::string project;
  std::string config = "rnx.toml";
  bool config_given = false;
  std::string branch;
  std::string env_id;
  std::string kernel;
  int limit = 100;
  std::string format = "table";
  bool scan = false;
};

// --format of rnx changes: an aligned table for a terminal, or one JSON document.
enum class changes_format { table, json };

std::string_view to_string(changes_format f) { return f == changes_format::json ? "json" : "table"; }

std::optional<changes_format> changes_format_from_string(std::string_view text) {
  return enum_from_name(text, {changes_format::table, changes_format::json});
}

std::string project_of(const changes_options& o, store::database& db) {
  std::string name = o.project;
  if (name.empty()) {
    auto m = gate::load_manifest_if_present(o.config, o.config_given);
    if (m) name = m->project;
  }
  if (name.empty()) throw error(errc::usage, "name the project: --project NAME (or run next to its rnx.toml)");
  if (!db.find_project(name)) {
    throw error(errc::not_found,
                "project \"" + name + "\" has no runs in the store " + o.store + "; check --project and --store");
  }
  return name;
}

// Scans the stored history again, run by run as the runs arrived: for a store filled before change points existed.
std::size_t rescan(store::database& db, std::int64_t project_id, const changes_options& o) {
  store::run_filter filter;
  if (!o.branch.empty()) filter.branch = o.branch;
  filter.limit = 1000000;
  auto runs = db.list_runs(project_id, filter);
  std::size_t found = 0;
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    if (it->pull_request || it->branch.empty()) continue;
    found += store::detect_changes(db, it->id).size();
  }
  return found;
}

std::string fixed(double value, int digits) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

void print_table(const std::vector<store::change_record>& changes) {
  if (changes.empty()) {
    std::cout << "no change points\n";
    return;
  }
  for (const auto& c : changes) {
    std::cout << terminal_safe(c.key.label(), false) << "  " << terminal_safe(c.branch, false) << "  "
              << (c.ratio > 1 ? "slower" : "faster") << " x" << fixed(c.ratio, 3) << " [" << fixed(c.ci_lo, 3) << ", "
              << fixed(c.ci_hi, 3) << "]  P " << fixed(c.probability, 3) << "  from commit "
              << terminal_safe(c.commit, false) << " (run " << c.run_id
              << "; before: " << terminal_safe(c.before_commit, false) << ", run " << c.before_run_id << ")  env "
              << terminal_safe(c.env_id, false) << "\n";
  }
}

void run_changes(const changes_options& o) {
  if (o.store.empty()) {
    throw error(errc::usage, "name the embedded store: --store FILE (the file `rnx gate --store FILE` writes)");
  }
  if (!std::filesystem::exists(o.store)) {
    throw error(errc::not_found, "no store at " + o.store + ": `rnx gate --store " + o.store + "` creates it");
  }
  const std::optional<changes_format> format = changes_format_from_string(o.format);
  if (!format) throw error(errc::usage, "--format " + o.format + " is not known: use table or json");
  store::database db(o.store);
  const std::string project = project_of(o, db);
  const auto info = db.find_project(project);
  if (o.scan) std::cerr << "rnx changes: " << rescan(db, info->id, o) << " new change point(s) stored\n";
  store::change_filter filter;
  if (!o.branch.empty()) filter.branch = o.branch;
  if (!o.env_id.empty()) filter.env_id = o.env_id;
  if (!o.kernel.empty()) filter.kernel = o.kernel;
  filter.limit = o.limit;
  const auto changes = db.change_points(info->id, filter);
  if (*format == changes_format::json) {
    boost::json::array list;
    for (const auto& c : changes) list.push_back(store::change_json(c));
    std::cout << json::serialize(boost::json::object{{"project", project}, {"changes", std::move(list)}}) << "\n";
  } else {
    print_table(changes);
  }
  exit_code() = 0;
}

}  // namespace

void add_changes_command(CLI::App& app) {
  auto o = std::make_shared<changes_options>();
  auto* cmd = app.add_subcommand("changes", "List the change points found in a branch's history (embedded store)");
  cmd->add_option("--store", o->store, "The embedded SQLite store (`rnx gate --store FILE`)");
  cmd->add_option("--project", o->project, "Project name (default: [project] name of the manifest)");
  auto* config = cmd->add_option("--config", o->config, "The manifest, for the project name")->capture_default_str();
  cmd->add_option("--branch", o->branch, "Only this branch's change points");
  cmd->add_option("--env-id", o->env_id, "Only this environment's");
  cmd->add_option("--kernel", o->kernel, "Only this kernel's");
  cmd->add_option("--limit", o->limit, "At most this many, newest first")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--format", o->format, "table or json")->capture_default_str();
  cmd->add_flag("--scan", o->scan, "Scan the stored history run by run first (a store filled by an older rnx)");
  cmd->callback([o, config] {
    changes_options options = *o;
    options.config_given = config->count() > 0 && !options.config.empty();
    run_changes(options);
  });
}

}  // namespace rnx::cli
