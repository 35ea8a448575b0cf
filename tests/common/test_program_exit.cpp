// rnx::failure_exit_code (common/include/rnx/common/program_exit.hpp): an rnx::error ends with its own exit code,
// any other std::exception with 3, each after one line on stderr that names the program.
#include "rnx/common/error.hpp"
#include "rnx/common/program_exit.hpp"

#include <doctest/doctest.h>

#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace {

// The exit code and the stderr text of failure_exit_code for `thrown`.
template <class Exception>
std::pair<int, std::string> exit_of(const Exception& thrown) {
  std::ostringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  int code = -1;
  try {
    throw thrown;
  } catch (...) {
    code = rnx::failure_exit_code("rnx-test");
  }
  std::cerr.rdbuf(old);
  return {code, captured.str()};
}

}  // namespace

TEST_CASE("failure_exit_code: an rnx::error's exit code, 3 for anything else, one line naming the program") {
  auto [usage, usage_text] = exit_of(rnx::error(rnx::errc::usage, "--out is missing"));
  CHECK(usage == 2);
  CHECK(usage_text == "rnx-test: error: --out is missing\n");
  auto [internal, internal_text] = exit_of(rnx::error(rnx::errc::internal, "a bug"));
  CHECK(internal == 3);
  CHECK(internal_text == "rnx-test: error: a bug\n");
  auto [other, other_text] = exit_of(std::runtime_error("bad_alloc somewhere"));
  CHECK(other == 3);
  CHECK(other_text == "rnx-test: internal error: bad_alloc somewhere\n");
}
