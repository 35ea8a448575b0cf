// The seccomp filter the worker installs on itself, its SIGSYS handler, and what it refused (blocked()).
#include "rnx/sandbox/sandbox.hpp"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>

namespace rnx::sandbox {

namespace {

#if defined(__x86_64__)
constexpr std::uint32_t audit_arch = AUDIT_ARCH_X86_64;
constexpr std::uint32_t x32_syscall_bit = 0x40000000;  // __X32_SYSCALL_BIT of <asm/unistd.h>
#elif defined(__aarch64__)
constexpr std::uint32_t audit_arch = AUDIT_ARCH_AARCH64;
#endif
constexpr unsigned long tiocsti = 0x5412;    // TIOCSTI: type into a terminal
constexpr unsigned long tioclinux = 0x541C;  // TIOCLINUX: the console's selection pasting does the same

// What the filter refused, by system call: written by the SIGSYS handler (async-signal-safe: atomics only), read
// by blocked(). A refused call is recorded however it was made (Python, libc, ctypes, a raw syscall).
constexpr int max_refused_kinds = 16;
struct refused_slot {
  std::atomic<std::uint64_t> key{0};  // arch << 32 | nr, plus one (0 = free)
  std::atomic<int> count{0};
};
refused_slot refused[max_refused_kinds];
std::atomic<int> refused_overflow{0};

void record_refused(std::uint32_t arch, std::uint32_t nr) {
  const std::uint64_t key = ((static_cast<std::uint64_t>(arch) << 32) | nr) + 1;
  for (auto& slot : refused) {
    std::uint64_t seen = slot.key.load(std::memory_order_relaxed);
    if (seen == 0 && slot.key.compare_exchange_strong(seen, key)) seen = key;
    if (seen == key) {
      slot.count.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  refused_overflow.fetch_add(1, std::memory_order_relaxed);
}

bool native_call(std::uint32_t arch, std::uint32_t nr) {
#if defined(__x86_64__)
  return arch == audit_arch && nr < x32_syscall_bit;
#else
  return arch == audit_arch;
#endif
}

// SIGSYS from SECCOMP_RET_TRAP: record what was refused and make the call return an ordinary error (EPERM, or
// ENOSYS for a foreign ABI or an unknown number), so the candidate goes on and the report can name the call.
void on_sigsys(int, siginfo_t* info, void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
  const auto nr = static_cast<std::uint32_t>(info->si_syscall);
  const auto arch = static_cast<std::uint32_t>(info->si_arch);
  record_refused(arch, nr);
  const long result = native_call(arch, nr) ? -EPERM : -ENOSYS;
#if defined(__x86_64__)
  uc->uc_mcontext.gregs[REG_RAX] = result;
#elif defined(__aarch64__)
  uc->uc_mcontext.regs[0] = static_cast<unsigned long long>(result);
#endif
}

std::string refused_name(std::uint32_t arch, std::uint32_t nr) {
  if (!native_call(arch, nr)) {
#if defined(__x86_64__)
    if (arch == audit_arch) return "x32 system call " + std::to_string(nr & ~x32_syscall_bit);
    if (arch == AUDIT_ARCH_I386) return "i386 system call " + std::to_string(nr);
#endif
    return "system call " + std::to_string(nr) + " of a foreign ABI";
  }
  switch (nr) {
    case SYS_socket: return "socket";
    case SYS_io_uring_setup: return "io_uring_setup";
    case SYS_ptrace: return "ptrace";
    case SYS_process_vm_readv: return "process_vm_readv";
    case SYS_process_vm_writev: return "process_vm_writev";
    case SYS_pidfd_getfd: return "pidfd_getfd";
    case SYS_open_by_handle_at: return "open_by_handle_at";
    case SYS_memfd_create: return "memfd_create";
    case SYS_ioctl: return "ioctl(TIOCSTI)";
    default: return "system call " + std::to_string(nr);
  }
}

}  // namespace

bool install_filter(int phase, std::string& why) {
#if !defined(__x86_64__) && !defined(__aarch64__)
  (void)phase;
  why = "seccomp filters are built for x86-64 and aarch64 only";
  return false;
#else
  // Phase 2 adds nothing to the filter: a kernel's first call may start its compilers (Triton runs ptxas and a
  // C compiler), so new processes are allowed; restrict_execute confines what they may run, RLIMIT_NPROC how
  // many there are, and the refusals below hold in them too (the filter is inherited).
  if (phase >= 2) return true;
  struct sigaction sa {};
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  ::sigemptyset(&sa.sa_mask);
  if (::sigaction(SIGSYS, &sa, nullptr) != 0) {
    why = std::string("sigaction(SIGSYS) failed: ") + std::strerror(errno);
    return false;
  }
  constexpr std::uint32_t trap = SECCOMP_RET_TRAP;
  constexpr std::uint32_t allow = SECCOMP_RET_ALLOW;
  std::vector<sock_filter> f;
  auto stmt = [&](std::uint16_t code, std::uint32_t k) { f.push_back(BPF_STMT(code, k)); };
  auto jump = [&](std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
    f.push_back(BPF_JUMP(code, k, jt, jf));
  };
  const auto nr_offset = static_cast<std::uint32_t>(offsetof(seccomp_data, nr));
  const auto arg0_offset = static_cast<std::uint32_t>(offsetof(seccomp_data, args));  // low word (little endian)
  const auto arg1_offset = arg0_offset + 8;
  // Every refusal traps, so the handler can record it (and a foreign-ABI call gets ENOSYS rather than a kill).
  stmt(BPF_LD | BPF_W | BPF_ABS, static_cast<std::uint32_t>(offsetof(seccomp_data, arch)));
  jump(BPF_JMP | BPF_JEQ | BPF_K, audit_arch, 1, 0);
  stmt(BPF_RET | BPF_K, trap);  // a foreign syscall ABI (i386) is never legitimate here
  stmt(BPF_LD | BPF_W | BPF_ABS, nr_offset);
#if defined(__x86_64__)
  // x32 system calls carry AUDIT_ARCH_X86_64 too, with __X32_SYSCALL_BIT in the number: the checks below compare
  // plain numbers, so an x32 socket() would pass them. Nothing here uses the x32 ABI; numbers at and beyond the
  // bit (syscall(-1) among them) are refused with ENOSYS, as the kernel would.
  jump(BPF_JMP | BPF_JGE | BPF_K, x32_syscall_bit, 0, 1);
  stmt(BPF_RET | BPF_K, trap);
#endif
  // socket(domain, ...): netlink stays (interface queries), everything else traps, AF_UNIX included: the
  // reference (and with it CUDA's set-up) ran before this filter, and a Unix socket on disk (the Docker
  // daemon's, say) would give the candidate what the network namespace takes away.
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 4);
  stmt(BPF_LD | BPF_W | BPF_ABS, arg0_offset);
  jump(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 0, 1);
  stmt(BPF_RET | BPF_K, allow);
  stmt(BPF_RET | BPF_K, trap);
  // ioctl(fd, TIOCSTI or TIOCLINUX, ...): typing into a terminal. The sandbox has none (a new session, stdio on
  // /dev/null, no tty in its /dev); refused here as well.
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 5);
  stmt(BPF_LD | BPF_W | BPF_ABS, arg1_offset);
  jump(BPF_JMP | BPF_JEQ | BPF_K, tiocsti, 2, 0);
  jump(BPF_JMP | BPF_JEQ | BPF_K, tioclinux, 1, 0);
  stmt(BPF_RET | BPF_K, allow);
  stmt(BPF_RET | BPF_K, trap);
  // sigaction(SIGSYS, new): the handler that records refusals stays (reading it is fine). Refused with a plain
  // EPERM, not a trap: Python's subprocess resets every handler in its vfork child with all signals blocked,
  // and a trap delivered while SIGSYS is blocked kills the process (that is how Triton's compiler steps died).
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigaction, 0, 7);
  stmt(BPF_LD | BPF_W | BPF_ABS, arg0_offset);
  jump(BPF_JMP | BPF_JEQ | BPF_K, SIGSYS, 0, 5);
  stmt(BPF_LD | BPF_W | BPF_ABS, arg1_offset);
  jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2);
  stmt(BPF_LD | BPF_W | BPF_ABS, arg1_offset + 4);
  jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
  stmt(BPF_LD | BPF_W | BPF_ABS, nr_offset);
  // io_uring (it could open sockets behind seccomp's back); another process's memory and descriptors (the
  // judge's, above all: already out of reach, since the judge is not dumpable and nothing here has
  // CAP_SYS_PTRACE); open_by_handle_at (with CAP_DAC_READ_SEARCH it opens files by handle, past the mount
  // namespace); memfd_create: its file lies on no mount the sandbox made, so neither noexec nor Landlock's execute
  // rule covers it, and a program copied into it could be started (execve of /proc/self/fd/N, execveat) or mapped
  // by the dynamic loader. Neither torch, torch.compile nor Triton needs it.
  for (long nr : {SYS_io_uring_setup, SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev, SYS_pidfd_getfd,
                  SYS_open_by_handle_at, SYS_memfd_create}) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1);
    stmt(BPF_RET | BPF_K, trap);
  }
  stmt(BPF_RET | BPF_K, allow);
  sock_fprog prog{static_cast<unsigned short>(f.size()), f.data()};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    why = std::string("PR_SET_NO_NEW_PRIVS failed: ") + std::strerror(errno);
    return false;
  }
  // TSYNC: every thread of the worker (torch's pools included) gets the filter, not just this one.
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
    why = std::string("seccomp(SET_MODE_FILTER) failed: ") + std::strerror(errno);
    return false;
  }
  return true;
#endif
}

blocked_counts blocked() {
  blocked_counts b;
  for (const auto& slot : refused) {
    const std::uint64_t key = slot.key.load();
    const int count = slot.count.load();
    if (key == 0 || count == 0) continue;
    const auto arch = static_cast<std::uint32_t>((key - 1) >> 32);
    const auto nr = static_cast<std::uint32_t>((key - 1) & 0xffffffffU);
    if (!native_call(arch, nr)) {
      b.foreign_abi += count;
    } else if (nr == SYS_socket) {
      b.sockets += count;
    } else if (nr == SYS_io_uring_setup) {
      b.io_uring += count;
    } else {
      b.other += count;
    }
    b.calls += (b.calls.empty() ? "" : ", ") + refused_name(arch, nr) + " x" + std::to_string(count);
  }
  if (const int more = refused_overflow.load())
    b.calls += (b.calls.empty() ? "" : ", ") + std::to_string(more) + " more";
  return b;
}

}  // namespace rnx::sandbox
