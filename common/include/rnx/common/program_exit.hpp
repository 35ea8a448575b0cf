// How rnx's programs (rnx, rnx-server) end on an exception their main() catches: one message line, one exit code.
#pragma once

#include <string_view>

namespace rnx {

// Call inside a catch (...) block of main(): rethrows the exception in flight, prints "PROGRAM: error: WHAT" for an
// rnx::error and returns its exit code, or prints "PROGRAM: internal error: WHAT" for any other std::exception and
// returns 3. Anything that is not a std::exception goes on (and ends the program).
int failure_exit_code(std::string_view program);

}  // namespace rnx
