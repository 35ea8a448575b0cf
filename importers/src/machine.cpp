// The importing machine's part of an imported run's environment, read the way rnx bench reads it.
#include "import_detail.hpp"

#include <sys/utsname.h>

#include <cstdlib>
#include <fstream>
#include <thread>

namespace rnx::importers::detail {

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos && colon + 1 < line.size()) return line.substr(line.find_first_not_of(' ', colon + 1));
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
  struct utsname u {};
  if (::uname(&u) == 0) pretty += std::string("; ") + u.sysname + " " + u.release + " " + u.machine;
  return pretty;
}

}  // namespace

machine_facts this_machine() {
  machine_facts m;
  m.cpu = cpu_model();
  m.os = os_name();
  m.threads = static_cast<std::int64_t>(std::thread::hardware_concurrency());
  if (const char* image = std::getenv("RNX_IMAGE"); image && *image) m.image = image;
  return m;
}

std::string utc_timestamp(std::string_view text) {
  // Only UTC stamps are taken over; a local time with an offset would need a time-zone conversion to compare.
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' || text[16] != ':') {
    return "";
  }
  std::string_view rest = text.substr(19);
  if (!rest.empty() && rest.front() == '.') {
    std::size_t i = 1;
    while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') ++i;
    rest = rest.substr(i);
  }
  if (rest != "Z" && rest != "+00:00") return "";
  return std::string(text.substr(0, 19)) + "Z";
}

}  // namespace rnx::importers::detail
