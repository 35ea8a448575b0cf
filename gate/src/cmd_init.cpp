// `rnx init`: scaffold rnx.toml, a workflow and the .gitignore line from the kernels of a repository.
#include "commands.hpp"

#include "init_scaffold.hpp"

#include <iostream>
#include <memory>

namespace rnx::cli {

namespace {

using namespace rnx::gate;

void print_kernels(const scan_result& scan) {
  std::cout << "rnx init: found " << scan.kernels.size() << " kernel" << (scan.kernels.size() == 1 ? "" : "s") << " in "
            << scan.files_read << " .py file" << (scan.files_read == 1 ? "" : "s") << ":\n";
  for (const auto& k : scan.kernels) {
    std::cout << "  " << k.name << "  " << k.path.generic_string() << "  ";
    if (k.kernelbench) {
      std::cout << "KernelBench Model: get_inputs() makes the inputs\n";
      continue;
    }
    std::string params;
    std::string inputs;
    for (const auto& in : k.inputs) {
      params += (params.empty() ? "" : ", ") + in.name;
      inputs += (inputs.empty() ? "" : ", ") + in.name + " = \"" + (in.shape.empty() ? "?" : in.shape) + "\"";
    }
    std::cout << (k.entry.empty() ? "run" : k.entry) << "(" << params << "): "
              << (k.shapes_complete() ? "inputs " + inputs
                                      : "shapes not found (" + inputs + "): declare them in rnx.toml, see its comment")
              << "\n";
  }
  for (const auto& s : scan.skipped) std::cout << "  skipped " << s.path.generic_string() << ": " << s.reason << "\n";
}

void run_init(const init_options& options, bool dry_run) {
  init_plan plan = plan_init(options);
  print_kernels(plan.scan);
  for (const auto& f : plan.files) {
    const char* verb = f.action == file_action::create    ? (dry_run ? "would write " : "wrote ")
                       : f.action == file_action::replace ? (dry_run ? "would replace " : "replaced ")
                                                          : (dry_run ? "would append to " : "appended to ");
    if (dry_run) {
      std::cout << "\n--- " << verb << f.path.generic_string() << " (" << f.note << ")\n" << f.content;
    }
  }
  if (dry_run) {
    std::cout << "\nrnx init: nothing written (--dry-run)\n";
    return;
  }
  apply_init(plan, options.root);
  for (const auto& f : plan.files) {
    const char* verb = f.action == file_action::create    ? "wrote "
                       : f.action == file_action::replace ? "replaced "
                                                          : "appended to ";
    std::cout << "rnx init: " << verb << f.path.generic_string() << " (" << f.note << ")\n";
  }
  std::cout << "rnx init: next, measure the kernels:  rnx bench --out .rnx/run.json\n";
}

}  // namespace

void add_init_command(CLI::App& app) {
  auto o = std::make_shared<init_options>();
  auto dry_run = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("init",
                                 "Scaffold rnx.toml, .github/workflows/rnx.yml and the .gitignore line from "
                                 "the kernels found in a repository");
  cmd->add_option("--dir", o->root, "The repository's root: scanned for kernels, where the files go")
      ->capture_default_str();
  cmd->add_option("--project", o->project, "Project name (default: the folder's name)");
  cmd->add_option("--workflow", o->workflow,
                  "The ci-examples workflow to copy, its file name without .yml (e.g. pr-gate, report-only-hosted), "
                  "or none (default: pr-gate when a kernel uses CUDA or Triton, else report-only-hosted)");
  cmd->add_flag("--force", o->force, "Replace an existing rnx.toml or .github/workflows/rnx.yml");
  cmd->add_flag("--dry-run", *dry_run, "Print what would be written and write nothing");
  cmd->callback([o, dry_run] {
    run_init(*o, *dry_run);
    exit_code() = 0;
  });
}

}  // namespace rnx::cli
