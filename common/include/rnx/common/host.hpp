// The machine this process runs on, as the environment fingerprint names it (rnx bench, rnx import).
#pragma once

#include <string>

namespace rnx::host {

// The CPU's model name from /proc/cpuinfo ("unknown" where it says none).
std::string cpu_model();
// The distribution's PRETTY_NAME with the kernel's name, release and architecture.
std::string os_name();

}  // namespace rnx::host
