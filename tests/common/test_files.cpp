// rnx::read_whole_file (common/include/rnx/common/files.hpp): every byte of a file, NULs and CRLFs included, and
// nullopt for a path that cannot be opened.
#include "rnx/common/files.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

TEST_CASE("read_whole_file: the bytes as written, or nullopt when the file cannot be opened") {
  std::string pattern = (fs::temp_directory_path() / "rnx-files-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  const fs::path dir = pattern;
  const std::string bytes("a\r\nb\0c\xff", 7);
  {
    std::ofstream out(dir / "f.bin", std::ios::binary);
    out << bytes;
  }
  CHECK(rnx::read_whole_file(dir / "f.bin") == bytes);
  { std::ofstream empty(dir / "empty"); }
  CHECK(rnx::read_whole_file(dir / "empty") == std::string());
  CHECK_FALSE(rnx::read_whole_file(dir / "missing").has_value());
  fs::remove_all(dir);
}
