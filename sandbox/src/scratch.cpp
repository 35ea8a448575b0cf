// The scratch folder a sandboxed worker runs in (host side): made under $TMPDIR, removed with all it holds.
#include "rnx/sandbox/sandbox.hpp"

#include "rnx/common/error.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>

namespace rnx::sandbox {

void remove_tree(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Folders first made enterable and writable, top-down (a mode-000 folder hides what is inside it).
  std::vector<fs::path> pending = {path};
  while (!pending.empty()) {
    const fs::path p = pending.back();
    pending.pop_back();
    if (!fs::is_directory(fs::symlink_status(p, ec))) continue;
    fs::permissions(p, fs::perms::owner_all, fs::perm_options::add, ec);
    for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) pending.push_back(it->path());
    ec.clear();
  }
  fs::remove_all(path, ec);
}

scratch_folder::scratch_folder(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) {
    throw error(errc::internal, "cannot create a temporary folder: " + std::string(std::strerror(errno)));
  }
  path_ = pattern;
}

scratch_folder::~scratch_folder() { remove_tree(path_); }

}  // namespace rnx::sandbox
