// Landlock's rules (writes, execution, reads), set by the forked child before the worker starts (raw system calls
// only).
#include "detail.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstddef>
#include <initializer_list>

namespace rnx::sandbox::detail {

int restrict_files(const file_rules& rules) {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) return 0;
  landlock_attr attr{fs_write_access | fs_execute | (rules.confine_reads ? fs_read : 0), 0, 0};
  if (abi >= 2) attr.handled_access_fs |= fs_refer;
  if (abi >= 3) attr.handled_access_fs |= fs_truncate;
  std::size_t size = sizeof(std::uint64_t);
  if (abi >= 4) {
    attr.handled_access_net = net_tcp;
    size = 2 * sizeof(std::uint64_t);
  }
  if (abi >= 6) {
    attr.scoped = scope_abstract_unix_and_signal;
    size = sizeof attr;
  }
  const int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) return 0;
  bool ok = true;
  for (std::size_t i = 0; i < rules.paths.size(); ++i) {
    const std::uint64_t access = rules.access[i] & attr.handled_access_fs;
    const int fd = access ? ::open(rules.paths[i].c_str(), O_PATH | O_CLOEXEC) : -1;
    if (fd < 0) continue;  // a folder this machine does not have, or a right not handled here
    landlock_beneath rule{access, fd};
    ok = ok && ::syscall(SYS_landlock_add_rule, ruleset, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &rule, 0) == 0;
    ::close(fd);
  }
  ok = ok && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
  ::close(ruleset);
  return ok ? static_cast<int>(abi) : 0;
}

}  // namespace rnx::sandbox::detail
