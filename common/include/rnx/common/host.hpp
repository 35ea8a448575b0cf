// The machine this process runs on, as the environment fingerprint names it (rnx bench, rnx import).
#pragma once

#include <string>

namespace rnx::host {

// The CPU's model name from /proc/cpuinfo ("unknown" where it says none).
std::string cpu_model();
// The distribution's PRETTY_NAME with the kernel's name, release and architecture.
std::string os_name();
// The kernel's name, release and architecture alone ("Linux 6.1.0-18-amd64 x86_64"), as other tools record an OS.
std::string kernel_name();
// The host name ("" where the system gives none).
std::string host_name();

}  // namespace rnx::host
