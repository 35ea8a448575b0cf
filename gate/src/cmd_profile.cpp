// `rnx profile`: an op profile of one kernel (libtorch profiler, in rnx-profile-worker) or of an imported
// torch.profiler trace, ranked by share of self time, with Amdahl what-ifs.
#include "commands.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/optimize/profile.hpp"
#include "rnx/optimize/profile_worker.hpp"

#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>

namespace rnx::cli {

namespace {

struct profile_cli_options {
  std::string config = "rnx.toml";
  std::string kernel;
  std::string import_path;
  optimize::profile_options profiling;
  int top = 10;
  std::string what_if = "2,10,inf";
  output_format format = output_format::text;
};

std::vector<double> parse_factors(const std::string& text) {
  std::vector<double> out;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) {
    if (item == "inf" || item == "removed") {
      out.push_back(INFINITY);
      continue;
    }
    char* end = nullptr;
    double k = std::strtod(item.c_str(), &end);
    if (end == item.c_str() || *end != '\0' || !(k > 0)) {
      throw error(errc::usage, "--what-if: \"" + item + "\" is not a positive factor (write e.g. 2,10,inf)");
    }
    out.push_back(k);
  }
  if (out.empty()) throw error(errc::usage, "--what-if needs at least one factor (e.g. 2,10,inf)");
  return out;
}

void run_profile(const profile_cli_options& o) {
  std::vector<double> factors = parse_factors(o.what_if);
  optimize::op_profile p;
  if (!o.import_path.empty()) {
    p = optimize::import_trace(o.import_path);
    if (!o.kernel.empty()) p.kernel = o.kernel;
  } else {
    if (o.kernel.empty()) throw error(errc::usage, "rnx profile needs --kernel NAME (or --import trace.json)");
    p = optimize::profile_in_worker(o.config, o.kernel, o.profiling);
  }
  if (o.format == output_format::json) {
    std::cout << json::serialize(optimize::to_json(p, o.top, factors), true) << "\n";
  } else if (o.format == output_format::markdown) {
    std::cout << optimize::render_profile_markdown(p, o.top, factors);
  } else {
    std::cout << optimize::render_profile_text(p, o.top, factors);
  }
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto o = std::make_shared<profile_cli_options>();
  auto* cmd = app.add_subcommand("profile",
                                 "Op profile of a kernel (libtorch profiler) or of a torch.profiler trace, "
                                 "with Amdahl what-ifs");
  cmd->add_option("--config", o->config, "The manifest")->capture_default_str();
  cmd->add_option("--kernel", o->kernel, "Kernel name in the manifest");
  cmd->add_option("--import", o->import_path,
                  "A torch.profiler Chrome trace (JSON) to tabulate instead; parsed, never run");
  cmd->add_option("--runtime", o->profiling.runtime, "Runtime to profile")->capture_default_str();
  cmd->add_option("--dtype", o->profiling.dtype, "dtype (default: the kernel's first)");
  cmd->add_option("--batch", o->profiling.batch, "Batch (default: the kernel's largest)");
  cmd->add_option("--device", o->profiling.device, "Device: auto | cpu | cuda | cuda:N (default: the kernel's)");
  cmd->add_option("--calls", o->profiling.calls, "Calls inside the profiled window")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--warmup", o->profiling.warmup_calls, "Calls before profiling")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--top", o->top, "Ops shown")->capture_default_str()->check(CLI::Range(1, 1000));
  cmd->add_option("--what-if", o->what_if, "Speedup factors for the top ops (inf = the op removed)")
      ->capture_default_str();
  add_format_option(*cmd, o->format);
  cmd->callback([o] { run_profile(*o); });
}

}  // namespace rnx::cli
