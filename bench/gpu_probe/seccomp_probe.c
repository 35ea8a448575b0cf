/* LD_PRELOAD probe (issue 20): which system calls does a Triton kernel's first call make that rnx's seccomp
   filter refuses? Installs a filter that TRAPs (instead of killing) a foreign-ABI call or a number >= 0x40000000,
   and with PROBE_PROCS=1 also fork/vfork/execve/execveat/clone-without-CLONE_THREAD; the SIGSYS handler prints
   the number, the arch and (for execve) the path, then makes the call fail with EPERM. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static void on_sigsys(int sig, siginfo_t* info, void* ctx) {
  (void)sig;
  ucontext_t* uc = (ucontext_t*)ctx;
  char buf[512];
  const char* path = "";
  if (info->si_syscall == SYS_execve) path = (const char*)uc->uc_mcontext.gregs[REG_RDI];
  int n = snprintf(buf, sizeof buf, "PROBE sigsys pid=%d nr=%d (0x%x) arch=0x%x rdi=0x%llx path=%s\n", getpid(),
                   info->si_syscall, (unsigned)info->si_syscall, info->si_arch,
                   (unsigned long long)uc->uc_mcontext.gregs[REG_RDI], path ? path : "");
  if (n > 0) { ssize_t w = write(2, buf, (size_t)n); (void)w; }
  uc->uc_mcontext.gregs[REG_RAX] = -EPERM;
}

__attribute__((constructor)) static void install(void) {
  if (getenv("PROBE_OFF")) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigaction(SIGSYS, &sa, NULL);
  int procs = getenv("PROBE_PROCS") != NULL;
  struct sock_filter f[64];
  int i = 0;
  f[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
  f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
  f[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1);
  f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
  if (procs) {
    int nrs[] = {SYS_fork, SYS_vfork, SYS_execve, SYS_execveat};
    for (int k = 0; k < 4; ++k) {
      f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[k], 0, 1);
      f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
    }
    f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1);
    f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
    f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4);
    f[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args));
    f[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1);
    f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
  }
  f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = {(unsigned short)i, f};
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) perror("PROBE seccomp");
  else { char b[80]; int n = snprintf(b, sizeof b, "PROBE filter on pid=%d procs=%d\n", getpid(), procs); ssize_t w = write(2, b, n); (void)w; }
}
