// The `rnx` command line: dispatches to the subcommands and maps errors to exit codes.
#include "commands.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/program_exit.hpp"
#include "rnx/common/run_document.hpp"

#include <map>
#include <string>

namespace rnx::cli {
int& exit_code() {
  static int code = 0;
  return code;
}

CLI::Option* add_format_option(CLI::App& cmd, output_format& format) {
  const std::map<std::string, output_format> names{
      {"text", output_format::text}, {"json", output_format::json}, {"markdown", output_format::markdown}};
  return cmd.add_option("--format", format, "Output format: text, json or markdown")
      ->transform(CLI::CheckedTransformer(names))
      ->default_str("text");
}

void add_config_filter_options(CLI::App& cmd, std::vector<std::string>& kernels, std::vector<std::string>& runtimes,
                               std::vector<std::string>& dtypes, std::vector<std::int64_t>& batches) {
  cmd.add_option("--kernel", kernels, "Only these kernels (repeatable)");
  cmd.add_option("--runtime", runtimes, "Only these runtimes")->check(CLI::IsMember(bench_runtime_names()));
  cmd.add_option("--dtype", dtypes, "Only these dtypes")->check(CLI::IsMember(measured_dtype_names()));
  cmd.add_option("--batch", batches, "Only these batch sizes")->check(CLI::PositiveNumber);
}
}  // namespace rnx::cli

int main(int argc, char** argv) {
  CLI::App app{"rnx: a CI performance gate for GPU and PyTorch kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "rnx 0.1.0");
  rnx::cli::add_compare_command(app);
  rnx::cli::add_import_command(app);
#ifdef RNX_HAVE_GATE
  const rnx::cli::command_run gate = rnx::cli::add_gate_command(app);
  rnx::cli::add_accept_command(app);
  rnx::cli::add_report_command(app);
  rnx::cli::add_init_command(app);
  rnx::cli::add_changes_command(app);
#endif
#ifdef RNX_HAVE_TORCH
  rnx::cli::add_bench_command(app);
  rnx::cli::add_verify_command(app);
  rnx::cli::add_profile_command(app);
  rnx::cli::add_optimize_command(app);
#endif
#if defined(RNX_HAVE_GATE) && defined(RNX_HAVE_TORCH)
  rnx::cli::add_bisect_command(app);
  rnx::cli::add_explain_command(app);
#endif
  try {
    app.parse(argc, argv);
#ifdef RNX_HAVE_GATE
    if (gate.cmd->parsed()) return gate.run();
#endif
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (...) {
    return rnx::failure_exit_code("rnx");
  }
  return rnx::cli::exit_code();
}
