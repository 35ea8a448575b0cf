// Reading the environment fingerprint from the OS, libtorch, the embedded Python and (for CUDA) the driver.
#include <Python.h>

#include "rnx/common/host.hpp"
#include "rnx/runner/fingerprint.hpp"

#include "nvml.hpp"
#include "rnx/runner/python.hpp"

#include <ATen/Parallel.h>

#ifdef RNX_RUNNER_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace rnx::runner {

namespace {

std::string support_version(PyObject* versions, const char* key) {
  PyObject* v = PyDict_GetItemString(versions, key);
  return v && PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : "";
}

std::optional<long long> read_khz(const std::filesystem::path& file) {
  std::ifstream in(file);
  long long khz = 0;
  if (!(in >> khz)) return std::nullopt;
  return khz;
}

// A CPU's clocks are held when every core's cpufreq floor equals its ceiling (a performance governor alone still
// lets turbo move them). nullopt without cpufreq (most virtual machines).
std::optional<bool> cpu_clocks_locked() {
  const std::filesystem::path root = "/sys/devices/system/cpu";
  std::error_code ec;
  std::optional<bool> locked;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("cpu", 0) != 0 || name.size() == 3 || name.find_first_not_of("0123456789", 3) != std::string::npos) {
      continue;
    }
    auto low = read_khz(entry.path() / "cpufreq" / "scaling_min_freq");
    auto high = read_khz(entry.path() / "cpufreq" / "scaling_max_freq");
    if (!low || !high) return std::nullopt;
    locked = locked.value_or(true) && *low == *high;
  }
  return locked;
}

}  // namespace

environment collect_environment(at::Device device) {
  environment env;
  env.cpu = host::cpu_model();
  env.os = host::os_name();
  env.threads = at::get_num_threads();
  if (const char* image = std::getenv("RNX_IMAGE"); image && *image) env.image = image;
  py_ref no_args = py_ref::steal(PyTuple_New(0));
  py_ref versions = call_support("versions", no_args.get());
  env.torch = support_version(versions.get(), "torch_full");
  env.python = support_version(versions.get(), "python");
  env.cuda = support_version(versions.get(), "cuda");
  env.device = "cpu: " + env.cpu;
#ifdef RNX_RUNNER_CUDA
  if (device.is_cuda()) {
    const cudaDeviceProp* props = at::cuda::getDeviceProperties(device.index());
    env.device = props->name;
    env.compute_capability = std::to_string(props->major) + "." + std::to_string(props->minor);
    env.driver = detail::nvml_driver_version();
    if (env.driver.empty()) {
      int version = 0;
      if (cudaDriverGetVersion(&version) == cudaSuccess) env.driver = "cuda-driver-api " + std::to_string(version);
    }
    char bus[32];
    std::snprintf(bus, sizeof bus, "%08X:%02X:%02X.0", static_cast<unsigned>(props->pciDomainID),
                  static_cast<unsigned>(props->pciBusID), static_cast<unsigned>(props->pciDeviceID));
    if (auto mhz = detail::nvml_sm_clock_mhz(bus)) env.clocks["sm_mhz"] = *mhz;
    if (auto mhz = detail::nvml_sm_clock_mhz(bus, true)) env.clocks["sm_max_mhz"] = *mhz;
    if (auto locked = detail::nvml_clocks_locked(bus)) env.clocks["locked"] = *locked ? 1 : 0;
  }
#else
  (void)device;
#endif
  if (!device.is_cuda()) {
    if (auto locked = cpu_clocks_locked()) env.clocks["locked"] = *locked ? 1 : 0;
  }
  env.env_id = compute_env_id(env);
  return env;
}

void open_device(at::Device device) {
#ifdef RNX_RUNNER_CUDA
  if (!device.is_cuda()) return;
  c10::cuda::set_device(device.index());
  // One small allocation creates the primary context and the caching allocator's first block.
  (void)at::zeros({1}, at::TensorOptions().device(device));
  c10::cuda::device_synchronize();
#else
  (void)device;
#endif
}

}  // namespace rnx::runner
