// Reading a whole file: the one way the parts take in a manifest, a document, a trace or a kernel's source.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace rnx {

// The bytes of the file at `path`, read as binary; nullopt when it cannot be opened. The caller says in its own
// error what the file was for and how to fix the path.
std::optional<std::string> read_whole_file(const std::filesystem::path& path);

}  // namespace rnx
