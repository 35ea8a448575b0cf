// Test helper: runs a command where new namespaces are refused, as on a machine with unprivileged user namespaces
// disabled (a seccomp filter makes unshare() and namespace-creating clone() fail with EPERM for the command and
// everything it starts). Used to show that the verifier's sandbox stage fails closed there.
//
//   rnx-test-no-namespaces rnx verify --candidate ...
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rnx-test-no-namespaces COMMAND [ARG...]\n");
    return 2;
  }
#if defined(__x86_64__) || defined(__aarch64__)
  const auto nr = static_cast<std::uint32_t>(offsetof(seccomp_data, nr));
  const auto arg0 = static_cast<std::uint32_t>(offsetof(seccomp_data, args));
  constexpr std::uint32_t namespaces = CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC;
  std::vector<sock_filter> f = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, nr),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg0),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, namespaces, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(f.size()), f.data()};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    std::fprintf(stderr, "rnx-test-no-namespaces: cannot install the filter: %s\n", std::strerror(errno));
    return 3;
  }
#endif
  ::execvp(argv[1], argv + 1);
  std::fprintf(stderr, "rnx-test-no-namespaces: cannot run %s: %s\n", argv[1], std::strerror(errno));
  return 127;
}
