// POSIX process helpers: run a command and capture its output; describe signals.
#include "rnx/common/process.hpp"

#include "rnx/common/error.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rnx {

int run_capture(const std::vector<std::string>& argv, std::string& output, capture what) {
  int fds[2];
  if (::pipe(fds) != 0) throw error(errc::internal, std::string("pipe failed: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) throw error(errc::internal, std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(fds[1], 1);
    if (what == capture::stdout_only) {
      const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
      if (null >= 0) ::dup2(null, 2);
    } else {
      ::dup2(fds[1], 2);
    }
    ::close(fds[0]);
    ::close(fds[1]);
    ::setenv("LC_ALL", "C", 1);  // plain ASCII diagnostics: messages are quoted into JSON and compared by tests
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::string msg = "cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::close(fds[1]);
  char buffer[4096];
  while (true) {
    ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      output.append(buffer, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

std::string signal_name(int signal_number) {
  const char* text = ::strsignal(signal_number);
  return text ? std::string(text) : "signal " + std::to_string(signal_number);
}

}  // namespace rnx
