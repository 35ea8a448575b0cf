// NVML loaded at run time: a CPU machine has no libnvidia-ml, and the runner must still start there.
#include "nvml.hpp"

#include <dlfcn.h>

namespace rnx::runner::detail {

namespace {

using nvml_device = void*;
constexpr int nvml_clock_sm = 1;                            // NVML_CLOCK_SM
constexpr int nvml_clock_id_app_target = 1;                 // NVML_CLOCK_ID_APP_CLOCK_TARGET
constexpr int nvml_clock_id_app_default = 2;                // NVML_CLOCK_ID_APP_CLOCK_DEFAULT
constexpr unsigned long long nvml_user_defined_clocks = 2;  // nvmlClocksEventReasonApplicationsClocksSetting

struct nvml_api {
  int (*init)() = nullptr;
  int (*driver_version)(char*, unsigned) = nullptr;
  int (*by_pci)(const char*, nvml_device*) = nullptr;
  int (*clock)(nvml_device, int, unsigned*) = nullptr;
  int (*max_clock)(nvml_device, int, unsigned*) = nullptr;
  // Optional: older drivers name the first ...ThrottleReasons; either may be missing.
  int (*event_reasons)(nvml_device, unsigned long long*) = nullptr;
  int (*clock_by_id)(nvml_device, int, int, unsigned*) = nullptr;
  bool ok = false;
};

const nvml_api& api() {
  static const nvml_api loaded = [] {
    nvml_api a;
    void* h = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return a;
    a.init = reinterpret_cast<int (*)()>(::dlsym(h, "nvmlInit_v2"));
    a.driver_version = reinterpret_cast<int (*)(char*, unsigned)>(::dlsym(h, "nvmlSystemGetDriverVersion"));
    a.by_pci = reinterpret_cast<int (*)(const char*, nvml_device*)>(::dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2"));
    a.clock = reinterpret_cast<int (*)(nvml_device, int, unsigned*)>(::dlsym(h, "nvmlDeviceGetClockInfo"));
    a.max_clock = reinterpret_cast<int (*)(nvml_device, int, unsigned*)>(::dlsym(h, "nvmlDeviceGetMaxClockInfo"));
    a.event_reasons = reinterpret_cast<int (*)(nvml_device, unsigned long long*)>(
        ::dlsym(h, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!a.event_reasons) {
      a.event_reasons = reinterpret_cast<int (*)(nvml_device, unsigned long long*)>(
          ::dlsym(h, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    }
    a.clock_by_id = reinterpret_cast<int (*)(nvml_device, int, int, unsigned*)>(::dlsym(h, "nvmlDeviceGetClock"));
    a.ok = a.init && a.driver_version && a.by_pci && a.clock && a.max_clock && a.init() == 0;
    return a;
  }();
  return loaded;
}

}  // namespace

std::string nvml_driver_version() {
  if (!api().ok) return "";
  char buffer[96] = {};
  if (api().driver_version(buffer, sizeof buffer) != 0) return "";
  return buffer;
}

std::optional<double> nvml_sm_clock_mhz(const std::string& pci_bus_id, bool maximum) {
  if (!api().ok) return std::nullopt;
  nvml_device device = nullptr;
  if (api().by_pci(pci_bus_id.c_str(), &device) != 0) return std::nullopt;
  unsigned mhz = 0;
  int rc = maximum ? api().max_clock(device, nvml_clock_sm, &mhz) : api().clock(device, nvml_clock_sm, &mhz);
  if (rc != 0) return std::nullopt;
  return static_cast<double>(mhz);
}

std::optional<bool> nvml_clocks_locked(const std::string& pci_bus_id) {
  if (!api().ok) return std::nullopt;
  nvml_device device = nullptr;
  if (api().by_pci(pci_bus_id.c_str(), &device) != 0) return std::nullopt;
  std::optional<bool> locked;
  unsigned long long reasons = 0;
  if (api().event_reasons && api().event_reasons(device, &reasons) == 0) {
    locked = (reasons & nvml_user_defined_clocks) != 0;
  }
  unsigned target = 0;
  unsigned fallback = 0;
  if (api().clock_by_id && api().clock_by_id(device, nvml_clock_sm, nvml_clock_id_app_target, &target) == 0 &&
      api().clock_by_id(device, nvml_clock_sm, nvml_clock_id_app_default, &fallback) == 0) {
    locked = locked.value_or(false) || target != fallback;
  }
  return locked;
}

}  // namespace rnx::runner::detail
