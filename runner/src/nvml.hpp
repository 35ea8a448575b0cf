// NVML through dlopen (no link-time dependency): driver version and SM clocks, when a driver is present.
#pragma once

#include <optional>
#include <string>

namespace rnx::runner::detail {

// "580.159.04"; empty when NVML is not available.
std::string nvml_driver_version();

// Current / maximum SM clock in MHz of the GPU with this PCI bus id ("00000000:1B:00.0").
std::optional<double> nvml_sm_clock_mhz(const std::string& pci_bus_id, bool maximum = false);

// Whether the GPU's clocks are held where someone set them: its clocks event reasons include the user-defined
// clocks (what locked clocks and application clocks raise), or its SM application clock target differs from the
// default. nullopt where NVML cannot say. Read only: rnx never sets clocks.
std::optional<bool> nvml_clocks_locked(const std::string& pci_bus_id);

}  // namespace rnx::runner::detail
