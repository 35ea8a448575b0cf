// The machine's CPU model, operating system and host name, read from /proc/cpuinfo, /etc/os-release and uname.
#include "rnx/common/host.hpp"

#include <sys/utsname.h>

#include <fstream>

namespace rnx::host {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos && colon + 1 < line.size()) {
        return line.substr(line.find_first_not_of(' ', colon + 1));
      }
    }
  }
  return "unknown";
}

std::string os_name() {
  std::string pretty = "linux";
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      pretty = line.substr(12);
      if (pretty.size() >= 2 && pretty.front() == '"') pretty = pretty.substr(1, pretty.size() - 2);
    }
  }
  if (const std::string kernel = kernel_name(); !kernel.empty()) pretty += "; " + kernel;
  return pretty;
}

std::string kernel_name() {
  struct utsname u {};
  if (::uname(&u) != 0) return {};
  return std::string(u.sysname) + " " + u.release + " " + u.machine;
}

std::string host_name() {
  struct utsname u {};
  return ::uname(&u) == 0 ? std::string(u.nodename) : std::string();
}

}  // namespace rnx::host
