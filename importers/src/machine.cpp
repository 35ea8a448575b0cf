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
  m.kernel = host::kernel_name();
  m.host = host::host_name();
  m.threads = static_cast<std::int64_t>(std::thread::hardware_concurrency());
  if (const char* image = std::getenv("RNX_IMAGE"); image && *image) m.image = image;
  return m;
}

}  // namespace rnx::importers::detail
