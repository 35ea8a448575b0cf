// Reading a whole file: the one way the parts take in a manifest, a document, a trace or a kernel's source; and
// writing one atomically, the one way a document rnx writes replaces the file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace rnx {

// The bytes of the file at `path`, read as binary; nullopt when it cannot be opened. The caller says in its own
// error what the file was for and how to fix the path.
std::optional<std::string> read_whole_file(const std::filesystem::path& path);

// `text` into the file at `path`, all or nothing: written to a temporary file beside it and renamed into place.
// Throws rnx::error naming `path`: not_found when the folder cannot be written or the file replaced, internal
// when the write itself fails (a full disk).
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace rnx
