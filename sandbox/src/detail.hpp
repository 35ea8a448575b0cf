// What the sandbox's own files share (not part of its interface): the result descriptor's number, Landlock's
// system calls and access rights, and the steps the forked child takes (mounts, leaving root, the write rules).
#pragma once

#include <linux/landlock.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rnx::sandbox::detail {

// The worker finds its result pipe here (passed to it as --result-fd).
constexpr int result_fd_in_worker = 3;

// The name of handed_folder() beneath scratch.
constexpr const char* handed_name = "handed";

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

constexpr std::uint64_t fs_read_file = 1ULL << 2;              // READ_FILE
constexpr std::uint64_t fs_read = fs_read_file | (1ULL << 3);  // READ_FILE, READ_DIR
constexpr std::uint64_t fs_writes = fs_write_access | fs_refer | fs_truncate;

// The Landlock rules of the sandboxed child, made before fork: each path and what may be done beneath it (a file's
// rule holds file rights only). Execution is always confined to the paths given it; reads only with confine_reads.
struct file_rules {
  std::vector<std::string> paths;
  std::vector<std::uint64_t> access;
  bool confine_reads = false;
};

// In the child between fork and exec (raw system calls only): from here on nothing may be written outside
// scratch, /dev (device nodes are opened for writing; /dev/shm is shared memory) and /proc (the CUDA driver fails
// to start without writes there, seen on the H200: error 304; in the worker's own process namespace its /proc
// shows only the worker and its PID 1), nothing executed but beneath the rules' program folders (from the worker's
// first instruction on), nothing read outside the rules' paths where reads are confined; TCP needs no rules to be
// refused, abstract Unix sockets and signals outside this process tree are refused. Returns the ABI version
// applied, or 0 when the kernel has no Landlock.
int restrict_files(const file_rules& rules);

// ---- the mount namespace's view (mounts.cpp; child side, raw system calls only) ----

// /dev reduced to what kernels need, with a private /dev/shm of `shm_options`.
bool reduce_dev(const char* shm_options);
// /proc/sys read-only.
bool proc_sys_read_only();
// The scratch folder a noexec tmpfs of `options`, with the caller's files copied in (owned by uid/gid unless -1).
bool scratch_on_tmpfs(const char* scratch, const char* options, uid_t uid, gid_t gid);
// compiled_folder() made inside the scratch tmpfs and covered by a tmpfs of `options` whose files may be mapped
// as code (no noexec).
bool compiled_on_tmpfs(const char* compiled, const char* options);
// The scratch folder handed to uid/gid where no tmpfs can be mounted (its handed folder stays the caller's).
void hand_over_scratch(const char* scratch, uid_t uid, gid_t gid);
// The handed folder (handed_folder()) as the caller filled it on the disk: taken (open_tree) before the scratch
// tmpfs covers it, -1 when it cannot be; then shown again at the same place inside that tmpfs, read-only, noexec,
// nosuid, nodev (a mount point the worker can neither write, remove nor rename). show_handed closes `tree`.
int take_handed(const char* handed);
bool show_handed(int tree, const char* handed);

// Started as root, the worker runs as nobody, who may not enter a folder such as /root: each of `covers` becomes an
// empty tmpfs holding only `skeleton`'s folders (parents first) and, bind-mounted back read-only, each of `shown`
// (a folder where shown_folder is set, else a file), taken (open_tree) into `trees`' slots before the covering.
// Formatted before fork; true when everything was shown again.
struct reveal_plan {
  std::vector<std::string> covers;
  std::vector<std::string> skeleton;
  std::vector<std::string> shown;
  std::vector<char> shown_folder;
  std::vector<int> trees;
};
bool reveal_host_paths(reveal_plan& plan);

// ---- privileges.cpp ----

// Root leaves host root for good: no supplementary groups, uid/gid `uid`/`gid`, no capability left (none survives
// setresuid without PR_SET_KEEPCAPS, and the bounding set is emptied for any later execve). What the worker needs
// of a folder nobody may enter (/root) was shown to it before (reveal_host_paths), not read through a capability;
// only where no mount namespace could show it (`keep_read_search`, the weaker sandbox) CAP_DAC_READ_SEARCH stays.
bool leave_root(uid_t uid, gid_t gid, bool keep_read_search = false);

}  // namespace rnx::sandbox::detail
