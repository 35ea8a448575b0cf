#include "rnx/runner/worker_channel.hpp"

#include <boost/json/serialize.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rnx::runner {

worker_args parse_worker_args(int argc, char** argv) {
  worker_args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--job") == 0) args.job_path = argv[i + 1];
    if (std::strcmp(argv[i], "--result-fd") == 0) args.result_fd = std::atoi(argv[i + 1]);
  }
  return args;
}

void emit_line(int fd, const boost::json::object& event) {
  std::string line = boost::json::serialize(event) + "\n";
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) std::_Exit(70);
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace rnx::runner
