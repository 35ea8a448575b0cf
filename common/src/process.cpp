// POSIX process helpers: start a child (start_program), feed its stdin and drain its output with poll(); describe
// signals.
#include "rnx/common/process.hpp"

#include "rnx/common/error.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rnx {

namespace {

struct pipe_pair {
  int fd[2] = {-1, -1};
  explicit pipe_pair(bool wanted) {
    if (wanted && ::pipe2(fd, O_CLOEXEC) != 0) {
      throw error(errc::internal, std::string("pipe: ") + std::strerror(errno));
    }
  }
  pipe_pair(const pipe_pair&) = delete;
  pipe_pair& operator=(const pipe_pair&) = delete;
  ~pipe_pair() {
    close_end(0);
    close_end(1);
  }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

// The child's three standard streams as rnx's ends of its pipes (-1 where the stream is not piped).
struct child_pipes {
  pipe_pair in{true};
  pipe_pair out;
  pipe_pair err;
  explicit child_pipes(capture what) : out(what != capture::inherit), err(what == capture::separately) {}
};

// Wires the child's stdin, stdout and stderr as options.what asks; its folder and process group.
pid_t spawn_child(const std::vector<std::string>& argv, const process_options& options, const child_pipes& pipes) {
  program_start start;
  start.argv = argv;
  start.env_set = options.env_set;
  start.env_unset = options.env_unset;
  start.cwd = options.cwd;
  start.descriptors.emplace_back(pipes.in.fd[0], 0);
  if (options.what != capture::inherit) start.descriptors.emplace_back(pipes.out.fd[1], 1);
  if (options.what == capture::separately) start.descriptors.emplace_back(pipes.err.fd[1], 2);
  if (options.what == capture::stdout_and_stderr) start.descriptors.emplace_back(pipes.out.fd[1], 2);
  if (options.what == capture::stdout_only) start.to_null.push_back(2);
  // Its own process group, so the deadline can end the child's children too (a shell script's python).
  start.own_group = options.timeout.has_value();
  return start_program(start);
}

// Feeds options.input to the child's stdin and reads its stdout and stderr until both close or the deadline
// passes (then the child's process group is killed).
void exchange(pid_t pid, const process_options& options, std::chrono::steady_clock::time_point deadline,
              child_pipes& pipes, process_result& result) {
  std::size_t written = 0;
  if (options.input.empty()) pipes.in.close_end(1);
  if (pipes.in.fd[1] >= 0) ::fcntl(pipes.in.fd[1], F_SETFL, O_NONBLOCK);
  char buf[65536];
  auto drain = [&](const pollfd* polled, pipe_pair& p, std::string& into) {
    if (!polled || !(polled->revents & (POLLIN | POLLHUP | POLLERR))) return;
    const ssize_t got = ::read(p.fd[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) return;
    if (got <= 0) {
      p.close_end(0);
      return;
    }
    if (into.size() < options.max_output) {
      into.append(buf, std::min<std::size_t>(static_cast<std::size_t>(got), options.max_output - into.size()));
    }
  };
  while (pipes.out.fd[0] >= 0 || pipes.err.fd[0] >= 0 || pipes.in.fd[1] >= 0) {
    using std::chrono::milliseconds;
    const auto left = options.timeout
                          ? std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now())
                          : milliseconds(1000);
    if (left.count() <= 0) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    pollfd fds[3];
    int n = 0;
    pollfd* out_polled = nullptr;
    pollfd* err_polled = nullptr;
    pollfd* in_polled = nullptr;
    if (pipes.out.fd[0] >= 0) fds[n] = {pipes.out.fd[0], POLLIN, 0}, out_polled = &fds[n++];
    if (pipes.err.fd[0] >= 0) fds[n] = {pipes.err.fd[0], POLLIN, 0}, err_polled = &fds[n++];
    if (pipes.in.fd[1] >= 0) fds[n] = {pipes.in.fd[1], POLLOUT, 0}, in_polled = &fds[n++];
    const int ready = ::poll(fds, static_cast<nfds_t>(n), static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    drain(out_polled, pipes.out, result.out);
    drain(err_polled, pipes.err, result.err);
    if (in_polled && (in_polled->revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t put = ::write(pipes.in.fd[1], options.input.data() + written, options.input.size() - written);
      if (put > 0) written += static_cast<std::size_t>(put);
      // A child that exits without reading its stdin is not an error of ours.
      if (put < 0 && errno != EAGAIN && errno != EINTR) pipes.in.close_end(1);
      if (written >= options.input.size()) pipes.in.close_end(1);
    }
  }
  pipes.in.close_end(1);
}

// Waits for the child to end; with a deadline, kills its process group once the deadline has passed (a child that
// closed its output early, or one whose output rnx does not read, still has the deadline).
void reap(pid_t pid, const process_options& options, std::chrono::steady_clock::time_point deadline,
          process_result& result) {
  int status = 0;
  const int flags = options.timeout && !result.timed_out ? WNOHANG : 0;
  while (true) {
    const pid_t got = ::waitpid(pid, &status, flags);
    if (got == pid) break;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw error(errc::internal, std::string("waitpid: ") + std::strerror(errno));
    if (std::chrono::steady_clock::now() >= deadline) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    ::usleep(10000);
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  if (result.timed_out) result.exit_code = -1;
}

}  // namespace

process_result run_process(const std::vector<std::string>& argv, const process_options& options) {
  if (argv.empty()) throw error(errc::internal, "run_process: empty argv");
  if (!options.input.empty()) {
    // A child that exits before reading all of its stdin must give EPIPE here, not kill rnx.
    static std::once_flag sigpipe_ignored;
    std::call_once(sigpipe_ignored, [] { std::signal(SIGPIPE, SIG_IGN); });
  }
  const auto deadline = options.timeout ? std::chrono::steady_clock::now() + *options.timeout
                                        : std::chrono::steady_clock::time_point::max();
  child_pipes pipes(options.what);
  const pid_t pid = spawn_child(argv, options, pipes);
  pipes.in.close_end(0);
  pipes.out.close_end(1);
  pipes.err.close_end(1);
  process_result result;
  exchange(pid, options, deadline, pipes, result);
  reap(pid, options, deadline, result);
  return result;
}

int run_capture(const std::vector<std::string>& argv, std::string& output, capture what) {
  process_options options;
  options.what = what == capture::stdout_only ? capture::stdout_only : capture::stdout_and_stderr;
  options.env_set["LC_ALL"] = "C";  // plain ASCII diagnostics: messages are quoted into JSON and compared by tests
  process_result result;
  try {
    result = run_process(argv, options);
  } catch (const error& e) {
    if (e.code() != errc::not_found) throw;
    output += std::string(e.what()) + "\n";
    return 127;
  }
  output += result.out;
  return result.signal ? 128 + result.signal : result.exit_code;
}

std::string signal_name(int signal_number) {
  const char* text = ::strsignal(signal_number);
  return text ? std::string(text) : "signal " + std::to_string(signal_number);
}

std::filesystem::path helper_program_path(const char* env_var, const char* name) {
  if (const char* env = std::getenv(env_var); env && *env) return env;
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path beside = self.parent_path() / name;
    if (std::filesystem::exists(beside)) return beside;
  }
  return name;
}

}  // namespace rnx
