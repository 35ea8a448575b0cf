// Running git in the user's repository (the gate and `rnx bench --pair` ask it about revisions).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rnx::gate {

// Runs git with arguments in `dir`; returns trimmed stdout, or nullopt when git fails (or an argument holds a
// single quote, which the shell command could not carry).
std::optional<std::string> git(const std::filesystem::path& dir, const std::vector<std::string>& args);

// Whether `ref` names a commit of the repository around `dir`.
bool is_commit(const std::filesystem::path& dir, const std::string& ref);

}  // namespace rnx::gate
