// Reading a whole file and writing one atomically (files.hpp).
#include "rnx/common/files.hpp"

#include "rnx/common/error.hpp"

#include <unistd.h>

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

void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path temp = target;
  temp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw error(errc::not_found, path + ": cannot write (does the folder exist and is it writable?)");
    out << text;
    out.flush();
    if (!out) throw error(errc::internal, path + ": write failed (disk full?)");
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {
    fs::remove(temp, ec);
    throw error(errc::not_found, path + ": cannot replace file: " + ec.message());
  }
}

}  // namespace rnx
