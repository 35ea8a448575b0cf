// Test support: what of a Markdown text could still act as markup once its code spans and escapes are read as
// CommonMark reads them. Shared by the escaper's tests (tests/common) and the gate report's (tests/gate).
#pragma once

#include <cstddef>
#include <string>

namespace rnx::test_support {

// `md` with its code spans and backslash-escaped characters cut out (a code span: a run of N backticks up to the
// next run of exactly N, as CommonMark reads them): both are shown literally, so only what is left could be markup.
inline std::string outside_code_spans(const std::string& md) {
  std::string out;
  std::size_t i = 0;
  while (i < md.size()) {
    if (md[i] == '\\' && i + 1 < md.size()) {  // an escaped character is text: left out with its backslash
      i += 2;
      continue;
    }
    if (md[i] != '`') {
      out += md[i++];
      continue;
    }
    std::size_t n = 0;
    while (i + n < md.size() && md[i + n] == '`') ++n;
    std::size_t j = i + n;
    std::size_t close = std::string::npos;
    while (j < md.size()) {
      if (md[j] != '`') {
        ++j;
        continue;
      }
      std::size_t m = 0;
      while (j + m < md.size() && md[j + m] == '`') ++m;
      if (m == n) {
        close = j;
        break;
      }
      j += m;
    }
    if (close == std::string::npos) {  // no closing fence: the backticks are literal
      out += md.substr(i, n);
      i += n;
      continue;
    }
    out += "<code>";
    i = close + n;
  }
  return out;
}

}  // namespace rnx::test_support
