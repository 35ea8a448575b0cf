// Capabilities and what may be executed: leaving root in the forked child, dropping every capability in the
// worker, and Landlock's execute rule (restrict_execute) over the system's program folders.
#include "rnx/sandbox/sandbox.hpp"

#include "detail.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace rnx::sandbox {

namespace detail {

bool leave_root(uid_t uid, gid_t gid, bool keep_read_search) {
  constexpr int read_search = CAP_DAC_READ_SEARCH;
  for (int cap = 0; cap < 64; ++cap) {
    if (keep_read_search && cap == read_search) continue;
    if (::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  }
  if ((keep_read_search && ::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) || ::setgroups(0, nullptr) != 0 ||
      ::setresgid(gid, gid, gid) != 0 || ::setresuid(uid, uid, uid) != 0) {
    return false;
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (keep_read_search) {
    // Only where no mount namespace can cover /root (the weaker sandbox, allowed by --allow-weaker-sandbox): the
    // worker keeps reading what root could, through execve too, and the host_files layer reports it missing.
    data[0].effective = data[0].permitted = data[0].inheritable = 1U << read_search;
    if (::syscall(SYS_capset, &header, data) != 0) return false;
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, read_search, 0, 0) != 0) return false;
  } else {
    if (::syscall(SYS_capget, &header, data) != 0) return false;
    for (const auto& d : data) {
      if (d.effective | d.permitted | d.inheritable) return false;
    }
  }
  return ::getuid() == uid && ::geteuid() == uid && ::getgid() == gid;
}

}  // namespace detail

using detail::fs_execute;
using detail::fs_refer;
using detail::landlock_attr;
using detail::landlock_beneath;

bool restrict_execute(const std::vector<std::filesystem::path>& beneath, const std::filesystem::path& scratch,
                      std::string& why) {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) {
    why = "no Landlock here: what the candidate's processes may execute is not confined; ";
    return false;
  }
  // Every Landlock ruleset of ABI 2 and later denies moving a file to another folder (EXDEV) unless a rule grants
  // it, even one that handles only execution: without this, Triton's cache (a file written in a temporary folder
  // and renamed into place) fails with "Invalid cross-device link". Moves stay allowed inside scratch alone.
  landlock_attr attr{fs_execute | (abi >= 2 ? fs_refer : 0), 0, 0};
  const int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof(std::uint64_t), 0));
  if (ruleset < 0) {
    why = std::string("landlock_create_ruleset failed: ") + std::strerror(errno) + "; ";
    return false;
  }
  auto add = [&](const std::filesystem::path& dir, std::uint64_t access) {
    const int fd = ::open(dir.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return true;  // a folder this machine does not have
    landlock_beneath rule{access, fd};
    const bool added = ::syscall(SYS_landlock_add_rule, ruleset, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &rule, 0) == 0;
    ::close(fd);
    if (!added) why = "landlock_add_rule(" + dir.string() + ") failed: " + std::strerror(errno) + "; ";
    return added;
  };
  bool rules = true;
  for (const auto& dir : beneath) rules = rules && add(dir, fs_execute);
  if (abi >= 2 && !scratch.empty()) rules = rules && add(scratch, fs_refer);
  if (!rules) {
    ::close(ruleset);
    return false;
  }
  const bool ok =
      ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
  if (!ok) why = std::string("landlock_restrict_self failed: ") + std::strerror(errno) + "; ";
  ::close(ruleset);
  return ok;
}

const std::vector<std::filesystem::path>& system_program_folders() {
  static const std::vector<std::filesystem::path> folders = {"/usr",   "/bin",   "/sbin", "/lib",
                                                             "/lib64", "/lib32", "/opt"};
  return folders;
}

bool drop_capabilities(std::string& why) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  // Dropping from the bounding set needs CAP_SETPCAP; without it there is nothing to drop from (a worker that is
  // not root in its namespace lost its capabilities at execve), which the check below confirms.
  // CAP_DAC_READ_SEARCH is permitted only where leave_root kept it (no mount namespace could cover /root, the
  // weaker sandbox): it stays, through execve too, so this process and the compilers it starts read the install.
  constexpr int read_search = CAP_DAC_READ_SEARCH;
  __user_cap_data_struct before[2] = {};
  if (::syscall(SYS_capget, &header, before) != 0) {
    why = std::string("capget failed: ") + std::strerror(errno) + "; ";
    return false;
  }
  const std::uint32_t keep = before[0].permitted & (1U << read_search);
  for (int cap = 0; cap < 64; ++cap) {
    if (keep && cap == read_search) continue;
    if (::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_data_struct only[2] = {};
  only[0].effective = only[0].permitted = only[0].inheritable = keep;
  if (::syscall(SYS_capset, &header, only) != 0) {
    why = std::string("capset failed: ") + std::strerror(errno) + "; ";
    return false;
  }
  if (keep) ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, read_search, 0, 0);
  __user_cap_data_struct now[2] = {};
  if (::syscall(SYS_capget, &header, now) != 0) {
    why = std::string("capget failed: ") + std::strerror(errno) + "; ";
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    const std::uint32_t allowed = i == 0 ? keep : 0;
    if ((now[i].effective | now[i].permitted | now[i].inheritable) & ~allowed) {
      why = "capabilities are left after dropping them; ";
      return false;
    }
  }
  return true;
}

}  // namespace rnx::sandbox
