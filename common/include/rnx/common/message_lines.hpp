// The one framing of what a worker process tells its parent: one message a line, none longer than
// max_worker_message_bytes. The runner's worker (its result pipe) and the verify worker (its stdout) are read
// through it; the code those workers run is not trusted, so a line that grows past the maximum without ending is a
// flood, and the reader says so rather than buffering it.
//
//   rnx::message_lines reader;
//   for (std::string& line : reader.feed(std::string_view(chunk, got))) handle(line);
//   if (reader.overflowed()) stop_the_worker(reader.overflow_reason());
#pragma once

#include "rnx/common/process.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rnx {

class message_lines {
 public:
  explicit message_lines(std::size_t max_bytes = max_worker_message_bytes) : max_bytes_(max_bytes) {}

  // Appends what was read and returns the lines it completed, without their '\n'. After an overflow nothing more
  // is kept or returned.
  std::vector<std::string> feed(std::string_view chunk);
  bool overflowed() const { return overflowed_; }
  // "it wrote a message longer than 32 MiB (the most a worker's message may take) and was stopped"
  std::string overflow_reason() const;

 private:
  std::size_t max_bytes_;
  std::string pending_;  // the unfinished line
  bool overflowed_ = false;
};

}  // namespace rnx
