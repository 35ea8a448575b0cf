// The two ends a worker process (rnx-runner-worker, rnx-verify-worker) shares with whoever started it: its
// command line (--job JOB.json --result-fd N) and its result channel, one JSON object per line on fd N.
#pragma once

#include <boost/json/object.hpp>

#include <string>

namespace rnx::runner {

struct worker_args {
  std::string job_path;  // empty when --job is missing: the caller prints its usage
  int result_fd = 1;
};
worker_args parse_worker_args(int argc, char** argv);

// Writes `event` and a newline to `fd` in full. A failed write means the parent is gone and nobody is left to
// report to, so the process exits at once with 70 (EX_SOFTWARE) instead of running on unobserved.
void emit_line(int fd, const boost::json::object& event);

}  // namespace rnx::runner
