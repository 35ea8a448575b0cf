// What the sandbox's own files share (not part of its interface): the result descriptor's number, Landlock's
// system calls and access rights, and the steps the forked child takes (mounts, leaving root, the write rules).
#pragma once

#include <linux/landlock.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <cstdint>

namespace rnx::sandbox::detail {

// The worker finds its result pipe here (passed to it as --result-fd).
constexpr int result_fd_in_worker = 3;

// Landlock, from the kernel's uapi; defined here where the build machine's headers are older than its kernel.
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
constexpr std::uint64_t fs_execute = 1ULL << 0;                                      // EXECUTE
constexpr std::uint64_t fs_write_access = (1ULL << 1) |                              // WRITE_FILE
                                          (1ULL << 4) |                              // REMOVE_DIR
                                          (1ULL << 5) |                              // REMOVE_FILE
                                          (1ULL << 6) |                              // MAKE_CHAR
                                          (1ULL << 7) |                              // MAKE_DIR
                                          (1ULL << 8) |                              // MAKE_REG
                                          (1ULL << 9) |                              // MAKE_SOCK
                                          (1ULL << 10) |                             // MAKE_FIFO
                                          (1ULL << 11) |                             // MAKE_BLOCK
                                          (1ULL << 12);                              // MAKE_SYM
constexpr std::uint64_t fs_refer = 1ULL << 13;                                       // ABI 2
constexpr std::uint64_t fs_truncate = 1ULL << 14;                                    // ABI 3
constexpr std::uint64_t net_tcp = (1ULL << 0) | (1ULL << 1);                         // ABI 4: BIND_TCP, CONNECT_TCP
constexpr std::uint64_t scope_abstract_unix_and_signal = (1ULL << 0) | (1ULL << 1);  // ABI 6

struct landlock_attr {  // landlock_ruleset_attr as of ABI 6; older kernels are passed a prefix of it
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};

struct landlock_beneath {  // landlock_path_beneath_attr (packed in the uapi)
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
} __attribute__((packed));

// In the child between fork and exec (raw system calls only): from here on nothing may be written outside
// `scratch`, /dev (device nodes are opened for writing; /dev/shm is shared memory) and /proc (the CUDA driver
// fails to start without writes there, seen on the H200: error 304; in the worker's own process namespace its
// /proc shows only the worker and its PID 1), TCP needs no rules to be refused, abstract Unix sockets and signals
// outside this process tree are refused. Returns the ABI version applied, or 0 when the kernel has no Landlock.
int restrict_writes(const char* scratch);

// ---- the mount namespace's view (mounts.cpp; child side, raw system calls only) ----

// /dev reduced to what kernels need, with a private /dev/shm of `shm_options`.
bool reduce_dev(const char* shm_options);
// /proc/sys read-only.
bool proc_sys_read_only();
// The scratch folder a tmpfs of `options`, with the caller's files copied in (owned by uid/gid unless -1).
bool scratch_on_tmpfs(const char* scratch, const char* options, uid_t uid, gid_t gid);
// The scratch folder handed to uid/gid where no tmpfs can be mounted.
void hand_over_scratch(const char* scratch, uid_t uid, gid_t gid);

// ---- privileges.cpp ----

// Root leaves host root for good: no supplementary groups, uid/gid `unprivileged`, and of all capabilities only
// CAP_DAC_READ_SEARCH, kept through execve as an ambient one, so that the worker can still read what root could
// (a Python install under /root, the sources) while it writes, changes and opens nothing as root.
bool leave_root(uid_t uid, gid_t gid);

}  // namespace rnx::sandbox::detail
