// `rnx import --format F FILE... --out RUN.json`: another harness's benchmark output as an rnx run document.
#include "commands.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/manifest.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/importers/import.hpp"

#include <filesystem>
#include <iostream>
#include <memory>

namespace rnx::cli {

namespace {

struct import_cli_options {
  std::string format;
  std::vector<std::string> files;
  std::string out;
  importers::import_options o;
  std::int64_t pull_request = 0;
  std::string gbench_time = "real";
  std::string config = "rnx.toml";
  bool config_given = false;
};

// Without --project, the manifest's [project] name (the name rnx gate files runs under), when there is a manifest;
// a --config that was named must exist. Left empty, the importer takes the one the harness recorded, if any.
std::string project_of(const import_cli_options& cli, std::string& from) {
  if (!cli.o.project.empty()) return cli.o.project;
  if (!cli.config_given && !std::filesystem::exists(cli.config)) return "";
  const manifest m = load_manifest(cli.config);
  from = "project \"" + m.project + "\" from " + cli.config + " ([project] name; no --project given)";
  return m.project;
}

void run_import(import_cli_options& cli) {
  std::string project_from;
  cli.o.project = project_of(cli, project_from);
  cli.o.fmt = *importers::format_from_string(cli.format);
  cli.o.files = cli.files;
  cli.o.gbench_cpu_time = cli.gbench_time == "cpu";
  if (cli.pull_request > 0) cli.o.pull_request = cli.pull_request;
  importers::import_summary summary;
  const run_document run = importers::import_run(cli.o, &summary);
  write_run_file(run, cli.out);
  std::cout << "rnx import: " << summary.configurations << " configuration" << (summary.configurations == 1 ? "" : "s")
            << " from " << cli.files.size() << " " << cli.format << " file" << (cli.files.size() == 1 ? "" : "s")
            << " -> " << cli.out << " (" << summary.with_samples << " with per-sample times";
  if (summary.aggregates_only) std::cout << ", " << summary.aggregates_only << " aggregates only, marked";
  if (summary.not_ok) std::cout << ", " << summary.not_ok << " failed or skipped in the harness";
  std::cout << "; environment " << run.env.env_id << ")\n";
  if (!summary.environment_note.empty()) std::cerr << "rnx import: note: " << summary.environment_note << "\n";
  if (!project_from.empty()) std::cerr << "rnx import: note: " << project_from << "\n";
  for (const auto& note : summary.notes) std::cerr << "rnx import: note: " << note << "\n";
  for (const auto& warning : summary.warnings) std::cerr << "rnx import: warning: " << warning << "\n";
  if (!summary.few_samples.empty()) {
    std::cerr << "rnx import: warning: " << summary.few_samples.size() << " configuration"
              << (summary.few_samples.size() == 1 ? " has" : "s have") << " fewer than 8 samples (e.g. "
              << summary.few_samples.front() << "); the verdict abstains below --min-samples (8 by default)\n";
  }
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto cli = std::make_shared<import_cli_options>();
  auto* cmd = app.add_subcommand(
      "import", "Convert Google Benchmark, pytest-benchmark or nvbench output to a run document (docs/import.md)");
  cmd->add_option("--format", cli->format, "The harness that wrote FILE")
      ->required()
      ->check(CLI::IsMember({"gbench", "pytest-benchmark", "nvbench"}));
  cmd->add_option("files", cli->files, "The harness's JSON output; several files are several processes of one run")
      ->required();
  cmd->add_option("--out", cli->out, "The run document to write (rnx.run/v1)")->required();
  cmd->add_option("--project", cli->o.project,
                  "Project the run belongs to (default: [project] name of the manifest, else the one the harness "
                  "recorded)");
  auto* config = cmd->add_option("--config", cli->config, "The manifest that names the project")->capture_default_str();
  cmd->add_option("--commit", cli->o.commit, "Commit measured (default: the harness's record, if any)");
  cmd->add_option("--branch", cli->o.branch, "Branch measured (default: the harness's record, if any)");
  cmd->add_option("--base-branch", cli->o.base_branch, "The pull request's base branch");
  cmd->add_option("--pull-request", cli->pull_request, "The pull request's number")->check(CLI::PositiveNumber);
  cmd->add_flag("--allow-aggregates", cli->o.allow_aggregates,
                "Keep configurations with only summaries (mean, median, ...), marked; the verdict abstains on them");
  cmd->add_option("--gbench-time", cli->gbench_time,
                  "gbench: each repetition's real_time (wall clock) or cpu_time (for CPU-bound code on a busy machine)")
      ->check(CLI::IsMember({"real", "cpu"}))
      ->capture_default_str();
  cmd->callback([cli, config] {
    cli->config_given = config->count() > 0;
    run_import(*cli);
  });
}

}  // namespace rnx::cli
