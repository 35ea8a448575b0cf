// The gate's `rnx bench` child process: run it (rnx::run_process, output shown live), read the run documents.
#include "gate_bench.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/process.hpp"

#include <charconv>
#include <filesystem>
#include <iostream>

namespace rnx::gate {

std::string self_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw error(errc::internal, "cannot find the rnx executable through /proc/self/exe: " + ec.message());
  return path.string();
}

std::vector<std::string> bench_arguments(const bench_request& request) {
  std::vector<std::string> args{self_executable(), "bench", "--config", request.config, "--out", request.out};
  if (!request.pair_ref.empty()) {
    args.insert(args.end(), {"--pair", request.pair_ref, "--base-out", request.base_out});
  }
  for (const auto& kernel : request.kernels) args.insert(args.end(), {"--kernel", kernel});
  for (const auto& runtime : request.runtimes) args.insert(args.end(), {"--runtime", runtime});
  for (const auto& dtype : request.dtypes) args.insert(args.end(), {"--dtype", dtype});
  for (const auto batch : request.batches) args.insert(args.end(), {"--batch", std::to_string(batch)});
  if (request.quiet) args.push_back("--quiet");
  if (request.processes) args.insert(args.end(), {"--processes", std::to_string(*request.processes)});
  if (request.max_processes) args.insert(args.end(), {"--max-processes", std::to_string(*request.max_processes)});
  if (!request.shard.empty()) args.insert(args.end(), {"--shard", request.shard});
  if (!request.run_group.empty()) args.insert(args.end(), {"--run-group", request.run_group});
  // The shortest text that reads back as the same double: the child decides on exactly the policy resolved here.
  auto number = [](double v) {
    char text[64];
    const auto [end, ec] = std::to_chars(text, text + sizeof text, v);
    return std::string(text, ec == std::errc() ? end : text);
  };
  if (request.budget_ms) args.insert(args.end(), {"--budget-ms", number(*request.budget_ms)});
  if (request.rope) args.insert(args.end(), {"--rope", number(*request.rope)});
  if (request.probability) args.insert(args.end(), {"--probability", number(*request.probability)});
  return args;
}

bench_outcome run_bench(const bench_request& request) {
  const std::vector<std::string> args = bench_arguments(request);

  for (const auto& out : {request.out, request.base_out}) {
    if (out.empty()) continue;
    std::error_code ec;
    std::filesystem::remove(out, ec);  // a stale file from an earlier job must not pass for this run
    auto parent = std::filesystem::path(out).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  }

  std::string shown;
  for (std::size_t i = 1; i < args.size(); ++i) shown += (i > 1 ? " " : "") + args[i];
  std::cout << "rnx gate: running rnx " << shown << "\n" << std::flush;

  process_options options;
  options.what = capture::inherit;  // the user reads rnx bench's output live, in the job log
  process_result result;
  try {
    result = run_process(args, options);
  } catch (const error& e) {
    throw error(errc::internal, e.what());  // rnx's own executable: not the user's input
  }
  if (result.signal) {
    throw error(errc::kernel_failed, "rnx bench was killed by signal " + std::to_string(result.signal) +
                                         " before it wrote " + request.out + "; see its output above");
  }
  const int code = result.exit_code;
  if (code == 2) {
    throw error(errc::invalid, "rnx bench rejected the configuration " + request.config +
                                   " (its message is above); fix it and run `rnx bench --config " + request.config +
                                   "` locally to check");
  }
  if (!std::filesystem::exists(request.out)) {
    throw error(errc::kernel_failed, "rnx bench exited with " + std::to_string(code) + " without writing " +
                                         request.out + "; see its output above");
  }
  bench_outcome outcome;
  outcome.head = read_run_file(request.out);
  if (!request.pair_ref.empty()) {
    if (!std::filesystem::exists(request.base_out)) {
      throw error(errc::kernel_failed, "rnx bench --pair " + request.pair_ref + " exited with " + std::to_string(code) +
                                           " without writing the base run " + request.base_out);
    }
    outcome.base = read_run_file(request.base_out);
  }
  return outcome;
}

}  // namespace rnx::gate
