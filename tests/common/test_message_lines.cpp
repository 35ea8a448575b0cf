// The one framing of a worker's messages: lines split across reads, many in one read, and a flood stopped at the
// maximum with its reason.
#include "rnx/common/message_lines.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

TEST_CASE("message_lines: a line split over reads, several lines in one read, the unfinished rest kept") {
  rnx::message_lines reader(64);
  CHECK(reader.feed("{\"a\":").empty());
  CHECK(reader.feed("1}\n{\"b\":2}\n{\"c\"") == std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"});
  CHECK(reader.feed(":3}\n") == std::vector<std::string>{"{\"c\":3}"});
  CHECK(reader.feed("\n") == std::vector<std::string>{""});
  CHECK_FALSE(reader.overflowed());
}

TEST_CASE("message_lines: a line at the maximum passes; one byte more, ended or not, is a flood") {
  rnx::message_lines at_limit(8);
  CHECK(at_limit.feed(std::string(8, 'x') + "\n") == std::vector<std::string>{std::string(8, 'x')});
  CHECK_FALSE(at_limit.overflowed());

  rnx::message_lines ended(8);
  CHECK(ended.feed("ok\n" + std::string(9, 'x') + "\nlater\n") == std::vector<std::string>{"ok"});
  CHECK(ended.overflowed());
  CHECK(ended.feed("more\n").empty());  // nothing after a flood

  rnx::message_lines unended(8);
  CHECK(unended.feed(std::string(5, 'x')).empty());
  CHECK_FALSE(unended.overflowed());
  CHECK(unended.feed(std::string(4, 'x')).empty());
  CHECK(unended.overflowed());
  CHECK(unended.overflow_reason() ==
        "it wrote a message longer than 8 bytes (the most a worker's message may take) and was stopped");
  CHECK(rnx::message_lines().overflow_reason() ==
        "it wrote a message longer than 32 MiB (the most a worker's message may take) and was stopped");
}
