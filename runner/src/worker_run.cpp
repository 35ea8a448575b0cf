// Starting a worker process on a job, reading its result lines and log, and reaping or killing it.
#include "worker_run.hpp"

#include "process.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/text.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rnx::runner::detail {

namespace fs = std::filesystem;

worker_run::worker_run(const fs::path& worker, const fs::path& job_path) {
  int result_pipe[2];
  int log_pipe[2];
  if (::pipe2(result_pipe, O_CLOEXEC) != 0 || ::pipe2(log_pipe, O_CLOEXEC) != 0) {
    throw error(errc::internal, std::string("pipe failed: ") + std::strerror(errno));
  }
  pid_ = ::fork();
  if (pid_ < 0) throw error(errc::internal, std::string("fork failed: ") + std::strerror(errno));
  if (pid_ == 0) {
    ::setpgid(0, 0);  // its own process group: a timeout kills compiler helpers it started too
    ::dup2(result_pipe[1], 3);
    ::dup2(log_pipe[1], 1);
    ::dup2(log_pipe[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    std::string w = worker.string();
    std::string j = job_path.string();
    const char* argv[] = {w.c_str(), "--job", j.c_str(), "--result-fd", "3", nullptr};
    ::execv(w.c_str(), const_cast<char* const*>(argv));
    ::execvp(w.c_str(), const_cast<char* const*>(argv));
    std::string msg = "cannot start the worker " + w + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);
  ::close(result_pipe[1]);
  ::close(log_pipe[1]);
  result_fd_ = result_pipe[0];
  log_fd_ = log_pipe[0];
}
worker_run::~worker_run() {
  if (result_fd_ >= 0) ::close(result_fd_);
  if (log_fd_ >= 0) ::close(log_fd_);
  if (pid_ > 0 && !reaped_) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::vector<std::string> worker_run::poll_lines(int timeout_ms) {
  std::vector<std::string> lines;
  pollfd fds[2] = {{result_fd_, POLLIN, 0}, {log_fd_, POLLIN, 0}};
  int n = ::poll(fds, 2, std::max(timeout_ms, 0));
  if (n < 0 && errno != EINTR) throw error(errc::internal, std::string("poll failed: ") + std::strerror(errno));
  char buffer[65536];
  if (fds[1].fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
    ssize_t got = ::read(log_fd_, buffer, sizeof buffer);
    if (got > 0) {
      log_.append(buffer, static_cast<std::size_t>(got));
      if (log_.size() > 256 * 1024) log_.erase(0, log_.size() - 128 * 1024);
    } else if (got == 0) {
      ::close(log_fd_);
      log_fd_ = -1;
    }
  }
  if (fds[0].fd >= 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
    ssize_t got = ::read(result_fd_, buffer, sizeof buffer);
    if (got > 0) {
      pending_.append(buffer, static_cast<std::size_t>(got));
      std::size_t nl;
      while ((nl = pending_.find('\n')) != std::string::npos) {
        lines.push_back(pending_.substr(0, nl));
        pending_.erase(0, nl + 1);
      }
    } else if (got == 0) {
      ::close(result_fd_);
      result_fd_ = -1;
    }
  }
  return lines;
}


void worker_run::kill() { ::kill(-pid_, SIGKILL); }

std::string worker_run::wait_description(bool& clean) {
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  ::kill(-pid_, SIGKILL);  // helpers the kernel left behind (compile workers) go with it
  clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    std::string text = "killed by signal " + std::to_string(sig) + " (" + detail::signal_name(sig) + ")";
    if (sig == SIGKILL) text += "; out of memory?";
    return text;
  }
  return "exit status " + std::to_string(WEXITSTATUS(status));
}

std::string worker_run::log_tail() const { return tail_lines(log_, 12); }

}  // namespace rnx::runner::detail
