// Small text helpers shared by the parts: quoting another program's output, URLs and TOML strings.
#pragma once

#include <string>
#include <string_view>

namespace rnx {

// The last `lines` lines of `text`, trailing blank space dropped: enough of a child's output to say why it failed.
std::string tail_lines(const std::string& text, int lines);

// `text` with every byte but the unreserved ones (A-Z a-z 0-9 - . _ ~) percent-encoded: a path segment or query
// value.
std::string percent_encode(std::string_view text);

// `text` as a TOML basic string, quotes included.
std::string toml_quoted(std::string_view text);

}  // namespace rnx
