// The gate's `rnx bench` child process: run it (rnx::run_process, output shown live), read the run documents.
#include "gate_bench.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/process.hpp"

#include <filesystem>
#include <iostream>

namespace rnx::gate {

std::string self_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw error(errc::internal, "cannot find the rnx executable through /proc/self/exe: " + ec.message());
  return path.string();
}

std::string bench_job_path(const bench_request& request) {
  return std::filesystem::path(request.out).replace_extension(".job.json").string();
}

std::vector<std::string> bench_arguments(const std::string& job_path) {
  return {self_executable(), "bench", "--job", job_path};
}

bench_outcome run_bench(const bench_request& request) {
  for (const auto& out : {request.out, request.base_out}) {
    if (out.empty()) continue;
    std::error_code ec;
    std::filesystem::remove(out, ec);  // a stale file from an earlier job must not pass for this run
    auto parent = std::filesystem::path(out).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  }
  const std::string job_path = bench_job_path(request);
  write_bench_job(request, job_path);
  const std::vector<std::string> args = bench_arguments(job_path);
  std::cout << "rnx gate: running rnx bench --job " << job_path << " (run it again with the same command)\n"
            << std::flush;

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
