// The mount namespace's view of the forked child: a reduced /dev, /proc/sys read-only, the scratch tmpfs, the host
// folders nobody may enter covered with what the worker needs of them shown again. Runs
// between fork and exec: raw system calls only, nothing allocated.
#include "detail.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <initializer_list>

namespace rnx::sandbox::detail {

namespace {

constexpr unsigned open_tree_clone = 1;        // OPEN_TREE_CLONE of <linux/mount.h>
constexpr unsigned at_recursive = 0x8000;      // AT_RECURSIVE
constexpr unsigned move_mount_empty_from = 4;  // MOVE_MOUNT_F_EMPTY_PATH
constexpr int max_device_nodes = 48;

struct dirent64_head {  // linux_dirent64
  std::uint64_t ino;
  std::int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

// Calls `each(name, type)` for every entry of the open directory `dir` but . and ..
template <typename F>
void for_each_entry(int dir, F each) {
  alignas(8) char buf[4096];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n <= 0) return;
    for (long at = 0; at < n;) {
      const auto* d = reinterpret_cast<const dirent64_head*>(buf + at);
      at += d->reclen;
      if (std::strcmp(d->name, ".") != 0 && std::strcmp(d->name, "..") != 0) each(d->name, d->type);
    }
  }
}

bool starts_with(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

// "/dev/" + name into `out` (async-signal-safe; names longer than the buffer are skipped).
bool dev_path(char (&out)[96], const char* name) {
  const std::size_t n = std::strlen(name);
  if (n + 6 > sizeof out) return false;
  std::memcpy(out, "/dev/", 5);
  std::memcpy(out + 5, name, n + 1);
  return true;
}

}  // namespace

// /dev becomes a fresh tmpfs holding only what kernels need: null, zero, full, random, urandom, the GPU's nodes
// (/dev/nvidia*, /dev/nvidia-caps, /dev/dri), a private /dev/shm of `shm_options` and the /proc/self/fd links.
// The nodes are bind mounts of the host's, taken (open_tree) before the tmpfs covers them. No terminal, no
// block device, no /dev/mem: a candidate that could write a loop device or type into a tty finds neither.
bool reduce_dev(const char* shm_options) {
  struct node {
    char name[64];
    int tree;
    bool dir;
  } nodes[max_device_nodes];
  int count = 0;
  auto take = [&](const char* name, bool dir) {
    char path[96];
    if (count >= max_device_nodes || std::strlen(name) >= sizeof nodes[0].name || !dev_path(path, name)) return;
    const int tree = static_cast<int>(
        ::syscall(SYS_open_tree, AT_FDCWD, path, open_tree_clone | O_CLOEXEC | (dir ? at_recursive : 0)));
    if (tree < 0) return;
    std::memcpy(nodes[count].name, name, std::strlen(name) + 1);
    nodes[count].tree = tree;
    nodes[count].dir = dir;
    ++count;
  };
  for (const char* name : {"null", "zero", "full", "random", "urandom"}) take(name, false);
  const int basic = count;
  const int dev = ::open("/dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dev < 0) return false;
  for_each_entry(dev, [&](const char* name, unsigned char type) {
    if (starts_with(name, "nvidia") || std::strcmp(name, "dri") == 0) take(name, type == DT_DIR);
  });
  ::close(dev);
  if (basic != 5) return false;
  if (::mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m") != 0) return false;
  bool ok = true;
  for (int i = 0; i < count; ++i) {
    char path[96];
    dev_path(path, nodes[i].name);
    if (nodes[i].dir) {
      ok = ok && ::mkdir(path, 0755) == 0;
    } else {
      const int f = ::open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      ok = ok && f >= 0;
      if (f >= 0) ::close(f);
    }
    ok = ok && ::syscall(SYS_move_mount, nodes[i].tree, "", AT_FDCWD, path, move_mount_empty_from) == 0;
    ::close(nodes[i].tree);
  }
  ok = ok && ::symlink("/proc/self/fd", "/dev/fd") == 0 && ::symlink("/proc/self/fd/0", "/dev/stdin") == 0 &&
       ::symlink("/proc/self/fd/1", "/dev/stdout") == 0 && ::symlink("/proc/self/fd/2", "/dev/stderr") == 0;
  ok = ok && ::mkdir("/dev/shm", 01777) == 0 &&
       ::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, shm_options) == 0;
  return ok &&
         ::mount(nullptr, "/dev", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC, nullptr) == 0;
}

bool reveal_host_paths(reveal_plan& plan) {
  bool ok = true;
  for (std::size_t i = 0; i < plan.shown.size(); ++i) {
    plan.trees[i] =
        static_cast<int>(::syscall(SYS_open_tree, AT_FDCWD, plan.shown[i].c_str(),
                                   open_tree_clone | O_CLOEXEC | (plan.shown_folder[i] ? at_recursive : 0)));
    ok = ok && plan.trees[i] >= 0;
  }
  for (const auto& cover : plan.covers) {
    ok = ok && ::mount("tmpfs", cover.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=64k") == 0;
  }
  for (const auto& folder : plan.skeleton) ok = ok && ::mkdir(folder.c_str(), 0755) == 0;
  for (std::size_t i = 0; i < plan.shown.size(); ++i) {
    if (plan.trees[i] < 0) continue;
    const char* at = plan.shown[i].c_str();
    if (plan.shown_folder[i]) {
      ok = ok && ::mkdir(at, 0755) == 0;
    } else {
      const int f = ::open(at, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      ok = ok && f >= 0;
      if (f >= 0) ::close(f);
    }
    ok = ok && ::syscall(SYS_move_mount, plan.trees[i], "", AT_FDCWD, at, move_mount_empty_from) == 0 &&
         ::mount(nullptr, at, nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) == 0;
    ::close(plan.trees[i]);
  }
  for (const auto& cover : plan.covers) {
    ok = ok && ::mount(nullptr, cover.c_str(), nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                       "mode=0755,size=64k") == 0;
  }
  return ok;
}

// /proc/sys read-only (a bind of itself, remounted): no sysctl can be changed, whoever the candidate is.
bool proc_sys_read_only() {
  return ::mount("/proc/sys", "/proc/sys", nullptr, MS_BIND | MS_REC, nullptr) == 0 &&
         ::mount(nullptr, "/proc/sys", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                 nullptr) == 0;
}

// The scratch folder becomes a tmpfs of `options` (its size limit): what the candidate writes never reaches the
// disk and is gone when the namespace ends, whatever modes it set. It is noexec: no file there can be mapped as
// code, which is what the dynamic loader started on a copied program (`ld.so ./copy`) needs and Landlock's
// execute right does not see. The regular files the caller put there (the job) are copied in first, owned by
// `uid`/`gid` when those are not -1.
bool scratch_on_tmpfs(const char* scratch, const char* options, uid_t uid, gid_t gid) {
  const int old = ::open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (old < 0) return false;
  bool ok = ::mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options) == 0;
  const int fresh = ok ? ::open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  ok = ok && fresh >= 0;
  if (ok) {
    for_each_entry(old, [&](const char* name, unsigned char type) {
      if (type != DT_REG) return;
      const int from = ::openat(old, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
      const int to = ::openat(fresh, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      char buf[8192];
      ssize_t n = 0;
      while (from >= 0 && to >= 0 && (n = ::read(from, buf, sizeof buf)) > 0) {
        if (::write(to, buf, static_cast<std::size_t>(n)) != n) ok = false;
      }
      if (from < 0 || to < 0 || n < 0) ok = false;
      if (to >= 0 && uid != static_cast<uid_t>(-1) && ::fchown(to, uid, gid) != 0) ok = false;
      if (from >= 0) ::close(from);
      if (to >= 0) ::close(to);
    });
  }
  if (fresh >= 0) ::close(fresh);
  ::close(old);
  return ok;
}

// The folder compiled code is loaded from (compiled_folder): a tmpfs of its own, without noexec, inside scratch.
// The candidate cannot remove or rename it (a mount point) nor mount anything (Landlock refuses mount).
bool compiled_on_tmpfs(const char* compiled, const char* options) {
  return ::mkdir(compiled, 0700) == 0 && ::mount("tmpfs", compiled, "tmpfs", MS_NOSUID | MS_NODEV, options) == 0;
}

// Where no tmpfs can be mounted, a caller that was root hands the scratch folder (and what it put there) to the
// unprivileged uid, which must write there.
void hand_over_scratch(const char* scratch, uid_t uid, gid_t gid) {
  const int dir = ::open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  ::fchown(dir, uid, gid);
  for_each_entry(dir, [&](const char* name, unsigned char) {
    if (std::strcmp(name, handed_name) != 0) ::fchownat(dir, name, uid, gid, AT_SYMLINK_NOFOLLOW);
  });
  ::close(dir);
}

int take_handed(const char* handed) {
  return static_cast<int>(::syscall(SYS_open_tree, AT_FDCWD, handed, open_tree_clone | O_CLOEXEC));
}

bool show_handed(int tree, const char* handed) {
  if (tree < 0) return false;
  const bool ok =
      ::mkdir(handed, 0755) == 0 && ::syscall(SYS_move_mount, tree, "", AT_FDCWD, handed, move_mount_empty_from) == 0 &&
      ::mount(nullptr, handed, nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) ==
          0;
  ::close(tree);
  return ok;
}

}  // namespace rnx::sandbox::detail
