// Starting a worker process on a job, reading its result lines and log, and reaping or killing it.
#include "worker_run.hpp"

#include "worker_protocol.hpp"

#include "rnx/common/described_json.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/process.hpp"
#include "rnx/common/text.hpp"

#include <boost/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace rnx::runner::detail {

namespace fs = std::filesystem;
namespace bj = boost::json;

worker_run::worker_run(const fs::path& worker, const fs::path& job_path,
                       const std::optional<sandbox::sandbox_limits>& contain, const std::vector<int>& cores,
                       const std::vector<std::string>& withheld) {
  if (contain) {
    start_contained(worker, job_path, *contain);
  } else {
    start(worker, job_path.string(), false, cores, withheld);
  }
}

worker_run::worker_run(const fs::path& worker, const std::vector<int>& cores,
                       const std::vector<std::string>& withheld) {
  start(worker, "-", true, cores, withheld);
}

void worker_run::release(const fs::path& job_path) {
  const std::string line = job_path.string() + "\n";
  // A worker that died while it waited is found by the read loop (its output ends): the write's SIGPIPE is held
  // back on this thread and taken, so it cannot end the orchestrator.
  sigset_t pipe_signal;
  sigset_t previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
  if (::write(job_fd_, line.data(), line.size()) < 0 && errno == EPIPE) {
    const timespec now{0, 0};
    ::sigtimedwait(&pipe_signal, nullptr, &now);
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ::close(job_fd_);
  job_fd_ = -1;
}

void worker_run::start(const fs::path& worker, const std::string& job_arg, bool held, const std::vector<int>& cores,
                       const std::vector<std::string>& withheld) {
  int result_pipe[2];
  int log_pipe[2];
  int job_pipe[2] = {-1, -1};
  if (::pipe2(result_pipe, O_CLOEXEC) != 0 || ::pipe2(log_pipe, O_CLOEXEC) != 0 ||
      (held && ::pipe2(job_pipe, O_CLOEXEC) != 0)) {
    throw error(errc::internal, std::string("pipe failed: ") + std::strerror(errno));
  }
  // Lanes start workers from several threads at once: start_program builds everything before it forks.
  program_start plan;
  plan.argv = {worker.string(), "--job", job_arg, "--result-fd", "3"};
  plan.descriptors = {{result_pipe[1], 3}, {log_pipe[1], 1}, {log_pipe[1], 2}};
  if (held) {
    plan.descriptors.emplace_back(job_pipe[0], 0);
  } else {
    plan.to_null.push_back(0);
  }
  plan.own_group = true;  // a timeout kills compiler helpers it started too
  // Bound before it execs: its start (the embedded Python, `import torch`) runs on its own lane. The worker binds
  // itself again when it reads its job, and says why it cannot.
  plan.cores = cores;
  plan.close_others = true;  // no other lane's pipe, no descriptor a library left open
  // The repository's kernels run uncontained, but without the job's credentials (docs/runner.md, the workers'
  // environment); and this process, which keeps them, is not readable through /proc/PID/environ by a worker that
  // runs as the same user.
  plan.env_unset = withheld;
  ::prctl(PR_SET_DUMPABLE, 0);
  try {
    pid_ = start_program(plan);
  } catch (...) {
    for (int fd : {result_pipe[0], result_pipe[1], log_pipe[0], log_pipe[1], job_pipe[0], job_pipe[1]}) {
      if (fd >= 0) ::close(fd);
    }
    throw;
  }
  ::close(result_pipe[1]);
  ::close(log_pipe[1]);
  result_fd_ = result_pipe[0];
  log_fd_ = log_pipe[0];
  if (held) {
    ::close(job_pipe[0]);
    job_fd_ = job_pipe[1];
  }
}

void worker_run::start_contained(const fs::path& worker, const fs::path& job_path,
                                 const sandbox::sandbox_limits& limits) {
  scratch_ = std::make_unique<sandbox::scratch_folder>(scratch_prefix);
  allow_weaker_ = limits.allow_weaker;
  sandbox::sandboxed_process p = spawn_contained_worker(worker, job_path, scratch_->path(), limits);
  pid_ = p.pid;
  result_fd_ = p.read_fd;
  cgroup_ = std::move(p.cgroup);  // kept while the worker lives: destroying it kills what is left in it
  // Its output goes to its log in the scratch folder, read once it has ended.
}

worker_run::~worker_run() {
  if (result_fd_ >= 0) ::close(result_fd_);
  if (log_fd_ >= 0) ::close(log_fd_);
  if (job_fd_ >= 0) ::close(job_fd_);
  if (pid_ > 0 && !reaped_) {
    kill();
    ::waitpid(pid_, nullptr, 0);
  }
}

bool worker_run::admit(const std::string& line) {
  if (!refused_.empty()) return false;
  bj::value event;
  try {
    event = json::parse(line, "worker output");
  } catch (const error&) {
    return true;  // the orchestrator skips what is not JSON
  }
  if (!event.is_object()) return true;
  const bj::object& o = event.as_object();
  if (layers_.read(o)) return false;
  const bj::value* kind = o.if_contains("event");
  const auto line_kind =
      kind && kind->is_string() ? worker_line_from_string(std::string_view(kind->as_string())) : std::nullopt;
  if (line_kind == worker_line::log) {
    // A contained worker's last words (its log stays in its sandbox): kept as the log's tail.
    try {
      const auto said = json::from_object<log_event>(event, "the worker's \"log\" line");
      if (log_.size() < std::size_t{64} * 1024) log_ += said.line + "\n";
    } catch (const error&) {
      // A log line that does not read as one adds nothing to the log.
    }
    return false;
  }
  if (line_kind == worker_line::ready) {
    // The worker seals itself before it says it is ready, and reads no kernel before that.
    const std::vector<std::string> missing = layers_.missing();
    if (!missing.empty() && !allow_weaker_) {
      refused_ = "the sandbox could not apply every layer, so no kernel was run: ";
      for (std::size_t i = 0; i < missing.size(); ++i) refused_ += (i ? "; " : "") + missing[i];
      refused_ +=
          " (run where unprivileged user namespaces, Landlock and seccomp are allowed, or pass "
          "--allow-weaker-sandbox to accept the weaker containment)";
      kill();
      return false;
    }
  }
  return true;
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
      if (log_.size() > std::size_t{256} * 1024) log_.erase(0, log_.size() - std::size_t{128} * 1024);
    } else if (got == 0) {
      ::close(log_fd_);
      log_fd_ = -1;
    }
  }
  if (fds[0].fd >= 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
    ssize_t got = ::read(result_fd_, buffer, sizeof buffer);
    if (got > 0) {
      // The kernel runs in the worker with this pipe open: a line past the one maximum is a flood, not a result.
      for (std::string& line : results_.feed(std::string_view(buffer, static_cast<std::size_t>(got)))) {
        if (!scratch_ || admit(line)) lines.push_back(std::move(line));
      }
      if (results_.overflowed()) {
        kill();
        return lines;
      }
    } else if (got == 0) {
      ::close(result_fd_);
      result_fd_ = -1;
    }
  }
  return lines;
}

void worker_run::kill() {
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);  // a contained worker's launcher may have left the group to start a session of its own
  if (cgroup_) cgroup_->kill_all();
}

void worker_run::read_contained_log() {
  std::ifstream in(scratch_->path() / contained_log, std::ios::binary);
  if (!in) return;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(std::max<std::streamoff>(0, size - std::streamoff{128} * 1024));
  std::ostringstream text;
  text << in.rdbuf();
  log_ = text.str();
}

std::string worker_run::wait_description(bool& clean) {
  // Helpers the kernel left behind (compile workers) go with it: the group is killed once the leader has exited
  // but before it is reaped, while its zombie still holds the group's id (reaped first, the id could be reused).
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (scratch_ && log_.empty()) read_contained_log();
  if (!refused_.empty()) {
    clean = false;
    return "stopped before it ran a kernel";
  }
  if (results_.overflowed()) {
    clean = false;
    return results_.overflow_reason();
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    std::string text = "killed by signal " + std::to_string(sig) + " (" + signal_name(sig) + ")";
    if (sig == SIGKILL) text += "; out of memory?";
    return text;
  }
  return "exit status " + std::to_string(WEXITSTATUS(status));
}

std::string worker_run::log_tail() const {
  if (!refused_.empty()) return refused_;
  return tail_lines(log_, 12);
}

}  // namespace rnx::runner::detail
