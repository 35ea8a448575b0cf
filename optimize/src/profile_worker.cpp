// The parent side of rnx-profile-worker: command line out, JSON profile (or a JSON error) back.
#include "rnx/optimize/profile_worker.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/text.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/kernel_environment.hpp"
#include "rnx/common/manifest.hpp"
#include "rnx/common/process.hpp"

#include <boost/json.hpp>

#include <cstdlib>
#include <unistd.h>

namespace rnx::optimize {

namespace fs = std::filesystem;

fs::path default_profile_worker_path() { return helper_program_path("RNX_PROFILE_WORKER", "rnx-profile-worker"); }

std::vector<std::string> profile_worker_argv(const fs::path& manifest_path, const std::string& kernel,
                                             const profile_options& options, const fs::path& worker) {
  fs::path program = worker.empty() ? default_profile_worker_path() : worker;
  std::vector<std::string> argv{program.string(),
                                fs::absolute(manifest_path).string(),
                                kernel,
                                options.runtime,
                                options.dtype.empty() ? "-" : options.dtype,
                                std::to_string(options.batch),
                                options.device.empty() ? "-" : options.device,
                                std::to_string(options.warmup_calls),
                                std::to_string(options.calls)};
  if (options.mark_window_only) argv.emplace_back("mark-window");
  return argv;
}

process_options profile_worker_process(const fs::path& manifest_path, std::chrono::seconds timeout) {
  process_options po;
  po.timeout = timeout;
  // Importing the kernel must not leave __pycache__ in the user's tree.
  po.env_set["PYTHONDONTWRITEBYTECODE"] = "1";
  // The repository's kernel runs here as in rnx bench's workers: without the job's credentials, less the
  // manifest's [bench] pass_env (docs/runner.md, the workers' environment).
  po.env_unset = kernel_withheld_variables(load_manifest(manifest_path).pass_env);
  return po;
}

op_profile profile_in_worker(const fs::path& manifest_path, const std::string& kernel, const profile_options& options,
                             std::chrono::seconds timeout, const fs::path& worker) {
  const std::vector<std::string> argv = profile_worker_argv(manifest_path, kernel, options, worker);
  const std::string program = argv.front();
  process_result r = run_process(argv, profile_worker_process(manifest_path, timeout));
  if (r.timed_out) {
    throw error(errc::kernel_failed, "profiling kernel " + kernel + " did not finish within " +
                                         std::to_string(timeout.count()) + " s (fewer --calls, or a smaller --batch)");
  }
  boost::json::value v;
  try {
    v = json::parse(r.out, "rnx-profile-worker output");
  } catch (const error&) {
    std::string why = r.signal ? "was killed by signal " + std::to_string(r.signal)
                               : "exited with status " + std::to_string(r.exit_code);
    throw error(errc::kernel_failed, "rnx-profile-worker (" + program + ") " + why + " while profiling kernel " +
                                         kernel + ": " + tail_lines(r.err, 6));
  }
  if (auto* o = v.if_object(); o && o->contains("error")) {
    const auto& e = o->at("error").as_object();
    throw error(errc_from_name(e.at("code").as_string()).value_or(errc::internal),
                std::string(e.at("message").as_string()));
  }
  return profile_from_json(v, "rnx-profile-worker output");
}

}  // namespace rnx::optimize
