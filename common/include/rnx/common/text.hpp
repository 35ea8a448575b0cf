// Small text helpers shared by the parts that quote another program's output in their messages.
#pragma once

#include <string>

namespace rnx {

// The last `lines` lines of `text`, trailing blank space dropped: enough of a child's output to say why it failed.
std::string tail_lines(const std::string& text, int lines);

}  // namespace rnx
