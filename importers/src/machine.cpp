// The importing machine's part of an imported run's environment, read the way rnx bench reads it.
#include "import_detail.hpp"

#include "rnx/common/host.hpp"

#include <cstdlib>
#include <thread>

namespace rnx::importers::detail {

machine_facts this_machine() {
  machine_facts m;
  m.cpu = host::cpu_model();
  m.os = host::os_name();
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
