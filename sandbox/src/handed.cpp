// The files handed to a sandboxed worker (host side, before the sandbox starts): which files of a kernel's folder
// are the kernel's own, and their copies in the handed folder, made with this process's rights.
#include "rnx/sandbox/sandbox.hpp"

#include "detail.hpp"
#include "rnx/common/error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <iterator>

namespace rnx::sandbox {

namespace fs = std::filesystem;

namespace {

// What a kernel imports or includes from beside it.
bool is_source(const fs::path& name) {
  static const std::array<std::string_view, 13> suffixes = {".py", ".pyi", ".c",   ".cc", ".cpp", ".cxx", ".h",
                                                            ".hh", ".hpp", ".hxx", ".cu", ".cuh", ".inl"};
  const std::string ext = name.extension().string();
  return std::find(suffixes.begin(), suffixes.end(), ext) != suffixes.end();
}

bool hidden(const fs::path& name) { return name.filename().string().rfind('.', 0) == 0; }

// Started as root, the worker's user (nobody) reads only what others may: a file or folder closed to others stays
// closed to it here too (judged from the kernel's folder down; that folder's own ancestors are what handing skips).
bool open_to_worker(const struct stat& st, bool folder) {
  if (::geteuid() != 0) return true;
  return (st.st_mode & S_IROTH) && (!folder || (st.st_mode & S_IXOTH));
}

// `relative` opened beneath the open folder `dir`, no component followed through a link (a file swapped for a link
// to ~/.ssh between the listing and the copy is refused). -1 with errno on failure.
int open_beneath(int dir, const fs::path& relative) {
  int at = ::dup(dir);
  if (at < 0) return -1;
  const auto last = std::prev(relative.end());
  for (auto it = relative.begin(); it != relative.end(); ++it) {
    const int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (it == last ? 0 : O_DIRECTORY);
    const int next = ::openat(at, it->c_str(), flags);
    const int saved = errno;
    ::close(at);
    if (next < 0) {
      errno = saved;
      return -1;
    }
    at = next;
  }
  return at;
}

void copy_contents(int from, const fs::path& to) {
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) throw error(errc::internal, "cannot write " + to.string() + ": " + std::strerror(errno));
  char buf[65536];
  ssize_t n = 0;
  bool ok = true;
  while ((n = ::read(from, buf, sizeof buf)) > 0) {
    for (ssize_t done = 0; ok && done < n;) {
      const ssize_t w = ::write(out, buf + done, static_cast<std::size_t>(n - done));
      ok = w > 0;
      done += w > 0 ? w : 0;
    }
  }
  ok = ok && n == 0 && ::fchmod(out, 0644) == 0;  // whatever the caller's umask
  ::close(out);
  if (!ok) throw error(errc::internal, "cannot copy into " + to.string() + ": " + std::strerror(errno));
}

// `folder` and each folder above it up to `base` (which exists), open to the worker's user whatever the umask.
void make_folders(const fs::path& base, const fs::path& relative) {
  fs::path at = base;
  for (const auto& part : relative) {
    at /= part;
    std::error_code ec;
    fs::create_directory(at, ec);
    fs::permissions(at,
                    fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                        fs::perms::others_exec,
                    ec);
    if (ec) throw error(errc::internal, "cannot make " + at.string() + ": " + ec.message());
  }
}

}  // namespace

fs::path handed_folder(const fs::path& workdir) { return workdir / detail::handed_name; }

std::vector<fs::path> kernel_sources(const fs::path& kernel) {
  const fs::path folder = fs::absolute(kernel).parent_path();
  const fs::path own = kernel.filename();
  std::vector<fs::path> out = {own};
  std::uintmax_t bytes = 0;
  std::vector<fs::path> level = {fs::path()};  // folders of this level, relative to `folder`
  for (int depth = 0; depth <= 3 && !level.empty(); ++depth) {
    std::vector<fs::path> files, below;
    std::uintmax_t level_bytes = 0;
    for (const auto& sub : level) {
      std::error_code ec;
      std::vector<fs::directory_entry> entries;
      for (fs::directory_iterator it(folder / sub, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(*it);
      std::sort(entries.begin(), entries.end());
      for (const auto& e : entries) {
        const fs::path name = e.path().filename();
        struct stat st {};
        if (hidden(name) || ::lstat(e.path().c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode) && name != "__pycache__" && open_to_worker(st, true)) below.push_back(sub / name);
        if (S_ISREG(st.st_mode) && is_source(name) && open_to_worker(st, false) && !(sub.empty() && name == own)) {
          files.push_back(sub / name);
          level_bytes += static_cast<std::uintmax_t>(st.st_size);
        }
      }
    }
    if (out.size() + files.size() > max_handed_files || bytes + level_bytes > static_cast<std::uintmax_t>(max_handed_mb)
                                                                                  << 20) {
      break;
    }
    out.insert(out.end(), files.begin(), files.end());
    bytes += level_bytes;
    level = std::move(below);
  }
  return out;
}

fs::path hand_kernel(const fs::path& workdir, const fs::path& kernel, const std::string& role) {
  const fs::path to = handed_folder(workdir) / role;
  make_folders(workdir, fs::path(detail::handed_name) / role);
  const fs::path folder = fs::absolute(kernel).parent_path();
  const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) throw error(errc::internal, "cannot open " + folder.string() + ": " + std::strerror(errno));
  try {
    for (const auto& relative : kernel_sources(kernel)) {
      // The kernel itself is what the caller named (a link to it is followed); everything beside it is opened
      // without following any link.
      const bool named = relative == kernel.filename();
      const int from = named ? ::open(fs::absolute(kernel).c_str(), O_RDONLY | O_CLOEXEC) : open_beneath(dir, relative);
      if (from < 0) {
        if (named) throw error(errc::internal, "cannot read " + kernel.string() + ": " + std::strerror(errno));
        continue;  // gone since it was listed, or swapped for a link: not the kernel's
      }
      struct stat st {};
      if (::fstat(from, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(from);
        if (named) throw error(errc::internal, kernel.string() + " is not a regular file");
        continue;
      }
      try {
        make_folders(to, relative.parent_path());
        copy_contents(from, to / relative);
      } catch (...) {
        ::close(from);
        throw;
      }
      ::close(from);
    }
  } catch (...) {
    ::close(dir);
    throw;
  }
  ::close(dir);
  return to / kernel.filename();
}

}  // namespace rnx::sandbox
