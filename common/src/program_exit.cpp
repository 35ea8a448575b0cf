// The failure exit of rnx's programs (program_exit.hpp).
#include "rnx/common/program_exit.hpp"

#include "rnx/common/error.hpp"

#include <exception>
#include <iostream>

namespace rnx {

int failure_exit_code(std::string_view program) {
  try {
    throw;
  } catch (const error& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << program << ": internal error: " << e.what() << "\n";
    return 3;
  }
}

}  // namespace rnx
