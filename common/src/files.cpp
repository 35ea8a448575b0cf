// Reading a whole file (files.hpp).
#include "rnx/common/files.hpp"

#include <fstream>
#include <sstream>

namespace rnx {

std::optional<std::string> read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace rnx
