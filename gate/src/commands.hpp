// Registration of the `rnx` subcommands; each lives in its own cmd_*.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace rnx::cli {

// A subcommand whose work returns its exit code: main runs it once the command line is parsed, and returns what
// it returns (a thrown rnx::error becomes its exit code as for every subcommand).
struct command_run {
  CLI::App* cmd = nullptr;   // the subcommand; `run` is its work when cmd->parsed()
  std::function<int()> run;  // 0 PASS/WARN, 1 BLOCK/rejected, 2 usage/input error
};

// Each adds one subcommand to `app`. `rnx gate`'s work is returned, to be run by main; the other subcommands'
// callbacks throw rnx::error on failure and set the process exit code through exit_code().
void add_compare_command(CLI::App& app);
void add_import_command(CLI::App& app);
#ifdef RNX_HAVE_GATE
command_run add_gate_command(CLI::App& app);
void add_accept_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_init_command(CLI::App& app);
void add_changes_command(CLI::App& app);
#endif
#ifdef RNX_HAVE_TORCH
void add_bench_command(CLI::App& app);
void add_verify_command(CLI::App& app);
void add_profile_command(CLI::App& app);
void add_optimize_command(CLI::App& app);
#endif
#if defined(RNX_HAVE_GATE) && defined(RNX_HAVE_TORCH)
void add_bisect_command(CLI::App& app);
void add_explain_command(CLI::App& app);
#endif

// --format of the commands that print a document: text for a terminal, JSON, or Markdown.
enum class output_format { text, json, markdown };
// Adds --format (text | json | markdown, default text) to `cmd`, read into `format`.
CLI::Option* add_format_option(CLI::App& cmd, output_format& format);

// --kernel, --runtime, --dtype and --batch of the commands that measure (bench, bisect): only these configurations.
void add_config_filter_options(CLI::App& cmd, std::vector<std::string>& kernels, std::vector<std::string>& runtimes,
                               std::vector<std::string>& dtypes, std::vector<std::int64_t>& batches);

// The exit code a subcommand's callback asks for (0 PASS/WARN, 1 BLOCK/rejected, 2 usage/input error); `rnx gate`
// returns its own instead (command_run).
int& exit_code();

}  // namespace rnx::cli
