// rnx-profile-worker MANIFEST KERNEL RUNTIME DTYPE BATCH DEVICE WARMUP CALLS [mark-window]: profiles one kernel
// configuration with libtorch's profiler and prints the profile as JSON (or {"error": {...}}) on stdout; with
// mark-window the calls run without a profiler, marked for one outside (Nsight Compute).
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/optimize/config.hpp"
#include "rnx/optimize/profile_kernel.hpp"

#include <cmath>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  using namespace rnx;
  try {
    if (argc != 9 && !(argc == 10 && std::string(argv[9]) == "mark-window")) {
      throw error(errc::usage,
                  "usage: rnx-profile-worker MANIFEST KERNEL RUNTIME DTYPE BATCH DEVICE WARMUP CALLS [mark-window] "
                  "(run by rnx profile, rnx optimize and rnx explain)");
    }
    manifest m = optimize::load_manifest_with_optimize(argv[1]);
    const kernel_spec* spec = m.find_kernel(argv[2]);
    if (!spec) throw error(errc::usage, std::string("no kernel named \"") + argv[2] + "\" in " + argv[1]);
    optimize::profile_options o;
    o.runtime = argv[3];
    if (std::string(argv[4]) != "-") o.dtype = argv[4];
    o.batch = std::stoll(argv[5]);
    if (std::string(argv[6]) != "-") o.device = argv[6];
    o.warmup_calls = std::stoi(argv[7]);
    o.calls = std::stoi(argv[8]);
    o.mark_window_only = argc == 10;
    optimize::op_profile p = optimize::profile_kernel(*spec, o);
    std::cout << json::serialize(optimize::to_json(p, static_cast<int>(p.ops.size()), {}));
    return 0;
  } catch (const error& e) {
    std::cout << json::serialize(e.to_json());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cout << json::serialize(error(errc::kernel_failed, e.what()).to_json());
    return 3;
  }
}
