// posix_spawn-based child processes with pipes drained by poll(), so a chatty child never deadlocks us.
#include "rnx/optimize/subprocess.hpp"

#include "rnx/common/error.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace rnx::optimize {

namespace {

struct pipe_pair {
  int fd[2] = {-1, -1};
  pipe_pair() {
    if (::pipe2(fd, O_CLOEXEC) != 0) throw error(errc::internal, std::string("pipe: ") + std::strerror(errno));
  }
  ~pipe_pair() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& set) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    std::string key = kv.substr(0, kv.find('='));
    if (!set.count(key)) env.push_back(std::move(kv));
  }
  for (const auto& [k, v] : set) env.push_back(k + "=" + v);
  return env;
}

}  // namespace

process_result run_process(const std::vector<std::string>& argv, const process_options& options) {
  if (argv.empty()) throw error(errc::internal, "run_process: empty argv");
  // A child that exits before reading all of its stdin must give EPIPE here, not kill rnx.
  static const bool sigpipe_ignored = (std::signal(SIGPIPE, SIG_IGN), true);
  (void)sigpipe_ignored;
  pipe_pair in, out, err;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, so a timeout can end the child's children too (a shell script's python).
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings = merged_environment(options.env_set);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    throw error(errc::not_found, "cannot start '" + argv[0] + "': " + std::strerror(rc) +
                                     " (check the path and that the file is executable)");
  }
  in.close_end(0);
  out.close_end(1);
  err.close_end(1);
  ::fcntl(in.fd[1], F_SETFL, O_NONBLOCK);

  process_result result;
  std::size_t written = 0;
  if (options.input.empty()) in.close_end(1);
  auto deadline = std::chrono::steady_clock::now() + options.timeout;
  char buf[65536];
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    pollfd fds[3];
    int n = 0;
    int out_i = -1, err_i = -1, in_i = -1;
    if (out.fd[0] >= 0) { fds[n] = {out.fd[0], POLLIN, 0}; out_i = n++; }
    if (err.fd[0] >= 0) { fds[n] = {err.fd[0], POLLIN, 0}; err_i = n++; }
    if (in.fd[1] >= 0) { fds[n] = {in.fd[1], POLLOUT, 0}; in_i = n++; }
    int ready = ::poll(fds, n, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    auto drain = [&](int i, pipe_pair& p, std::string& into) {
      if (i < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) return;
      ssize_t got = ::read(p.fd[0], buf, sizeof buf);
      if (got <= 0) {
        p.close_end(0);
        return;
      }
      if (into.size() < options.max_output) into.append(buf, std::min<std::size_t>(got, options.max_output - into.size()));
    };
    drain(out_i, out, result.out);
    drain(err_i, err, result.err);
    if (in_i >= 0 && (fds[in_i].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t put = ::write(in.fd[1], options.input.data() + written, options.input.size() - written);
      if (put > 0) written += static_cast<std::size_t>(put);
      // A child that exits without reading its stdin is not an error of ours.
      if (put < 0 && errno != EAGAIN) in.close_end(1);
      if (written >= options.input.size()) in.close_end(1);
    }
  }
  in.close_end(1);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  if (result.timed_out) result.exit_code = -1;
  return result;
}

}  // namespace rnx::optimize
