// The environment of the repository's kernels: rnx's, less the job's credentials (rnx/common/kernel_environment.hpp).
#include "rnx/common/kernel_environment.hpp"

#include "rnx/common/secret_scan.hpp"

#include <algorithm>
#include <array>

extern char** environ;

namespace rnx {

bool withheld_from_kernels(std::string_view name, std::string_view value) {
  static constexpr std::array<std::string_view, 7> prefixes = {"AWS_",    "AZURE_",    "ARM_",    "GOOGLE_",
                                                               "GCLOUD_", "CLOUDSDK_", "ACTIONS_"};
  if (credential_name(std::string(name))) return true;
  for (std::string_view p : prefixes) {
    if (name.substr(0, p.size()) == p) return true;
  }
  // A path or a list of paths (PATH, LD_LIBRARY_PATH, a cache folder) is never a credential; any other value is
  // scanned for one.
  if (value.empty() || value.front() == '/') return false;
  return !scan_secrets(value).removed.empty();
}

std::vector<std::string> kernel_withheld_variables(const std::vector<std::string>& passed) {
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::size_t equals = entry.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, equals);
    if (std::find(passed.begin(), passed.end(), name) != passed.end()) continue;
    if (withheld_from_kernels(name, entry.substr(equals + 1))) names.emplace_back(name);
  }
  return names;
}

}  // namespace rnx
