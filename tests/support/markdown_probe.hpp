// Test support: what of a Markdown text could still act as markup once its code spans and escapes are read as
// CommonMark reads them, and what GitHub would link in it (mentions, issue references, URLs). Shared by the
// escaper's tests (tests/common), the gate report's (tests/gate) and the optimizer's (tests/optimize).
#pragma once

#include <cstddef>
#include <regex>
#include <string>
#include <vector>

namespace rnx::test_support {

// `md` with its code spans and backslash-escaped characters cut out (a code span: a run of N backticks up to the
// next run of exactly N, as CommonMark reads them): both are shown literally, so only what is left could be markup.
// With `keep_escaped`, an escaped character stays, without its backslash (the text as shown).
inline std::string outside_code_spans(const std::string& md, bool keep_escaped = false) {
  std::string out;
  std::size_t i = 0;
  while (i < md.size()) {
    if (md[i] == '\\' && i + 1 < md.size()) {  // an escaped character is text: left out with its backslash
      if (keep_escaped) out += md[i + 1];
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

// `md` without its fenced code blocks (a line of three or more backticks up to a line of at least as many) and
// code spans, its escapes read: the text GitHub scans for mentions and references ("\\#1" still links once shown).
inline std::string outside_code(const std::string& md) {
  std::string prose;
  std::size_t fence = 0;  // the open block's fence length, 0 outside a block
  std::size_t at = 0;
  while (at < md.size()) {
    std::size_t end = md.find('\n', at);
    if (end == std::string::npos) end = md.size();
    const std::string line = md.substr(at, end - at);
    at = end + 1;
    std::size_t indent = line.find_first_not_of(' ');
    std::size_t ticks = 0;
    while (indent != std::string::npos && indent + ticks < line.size() && line[indent + ticks] == '`') ++ticks;
    if (fence == 0 && indent != std::string::npos && indent <= 3 && ticks >= 3) {
      fence = ticks;
    } else if (fence > 0) {
      if (ticks >= fence && line.find_first_not_of("` ", indent) == std::string::npos) fence = 0;
    } else {
      prose += line + "\n";
    }
  }
  return outside_code_spans(prose, true);
}

// What GitHub would link in `text` (Markdown outside code, or a commit message): @mentions, issue references
// (#12, GH-12, owner/repo#12) and URLs (scheme://, www.).
inline std::vector<std::string> github_links(const std::string& text) {
  static const std::regex link(R"((^|[^A-Za-z0-9_`])@[A-Za-z0-9][A-Za-z0-9-]*(/[A-Za-z0-9_.-]+)?)"
                               R"(|#[0-9]+|\b[Gg][Hh]-[0-9]+|[A-Za-z][A-Za-z0-9+.-]*://\S*|\b[Ww][Ww][Ww]\.\S*)");
  std::vector<std::string> found;
  for (std::sregex_iterator it(text.begin(), text.end(), link), end; it != end; ++it) found.push_back(it->str());
  return found;
}

}  // namespace rnx::test_support
