#include "rnx/common/text.hpp"

#include <algorithm>
#include <cstdint>

namespace rnx {

std::string tail_lines(const std::string& text, int lines) {
  std::size_t pos = text.size();
  while (pos > 0 && (text[pos - 1] == '\n' || text[pos - 1] == ' ')) --pos;
  std::size_t end = pos;
  int seen = 0;
  while (pos > 0) {
    if (text[pos - 1] == '\n' && ++seen == lines) break;
    --pos;
  }
  return text.substr(pos, end - pos);
}

std::string percent_encode(std::string_view text) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string toml_quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

namespace {

// One code point decoded from `text` at `i` (advanced past it); U+FFFD for a byte that starts no valid sequence
// (overlong forms, surrogates and values past U+10FFFF included), which then advances by one byte.
char32_t next_code_point(std::string_view text, std::size_t& i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  int length = b0 >= 0xF0 && b0 <= 0xF4 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC2 && b0 <= 0xDF ? 2 : 0;
  if (length == 0 || b0 > 0xF4 || i + length > text.size()) {
    ++i;
    return 0xFFFD;
  }
  char32_t cp = b0 & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07);
  for (int k = 1; k < length; ++k) {
    unsigned char b = byte(i + k);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  bool overlong = (length == 3 && cp < 0x800) || (length == 4 && cp < 0x10000);
  if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return 0xFFFD;
  }
  i += length;
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Bidirectional embeddings, overrides and isolates reorder what follows them on screen.
bool is_bidi_control(char32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F ||
         cp == 0x061C;
}

// Skips the escape sequence that starts at text[i] (ESC, or a C1 introducer already decoded as `introducer`),
// leaving i past its end. `introducer` is the byte after ESC ('[' for CSI, ']' for OSC, ...).
bool byte_in(std::string_view text, std::size_t i, unsigned char lo, unsigned char hi) {
  return i < text.size() && static_cast<unsigned char>(text[i]) >= lo && static_cast<unsigned char>(text[i]) <= hi;
}

void skip_escape(std::string_view text, std::size_t& i, char32_t introducer) {
  auto at_string_end = [&](std::size_t k) {  // BEL, ESC \, or the 8-bit ST (U+009C)
    if (text[k] == '\a') return std::size_t{1};
    if (text[k] == '\x1b' && k + 1 < text.size() && text[k + 1] == '\\') return std::size_t{2};
    if (static_cast<unsigned char>(text[k]) == 0xC2 && k + 1 < text.size() &&
        static_cast<unsigned char>(text[k + 1]) == 0x9C) {
      return std::size_t{2};
    }
    return std::size_t{0};
  };
  if (introducer == '[') {
    // CSI: parameter and intermediate bytes (0x20-0x3F), then one final byte (0x40-0x7E).
    while (byte_in(text, i, 0x20, 0x3F)) ++i;
    if (byte_in(text, i, 0x40, 0x7E)) ++i;
  } else if (introducer == ']' || introducer == 'P' || introducer == 'X' || introducer == '^' || introducer == '_') {
    // OSC, DCS, SOS, PM, APC: a string up to its terminator (or the end of the text).
    while (i < text.size()) {
      if (auto n = at_string_end(i)) {
        i += n;
        return;
      }
      ++i;
    }
  } else {
    // Two-byte (ESC x) and three-byte (ESC ( B, ESC # 8) forms: intermediates 0x20-0x2F, then one final byte.
    while (byte_in(text, i, 0x20, 0x2F)) ++i;
  }
}

}  // namespace

std::string terminal_safe(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    char32_t cp = next_code_point(text, i);
    if (cp == 0x1B) {
      if (i >= text.size()) break;
      char32_t introducer = static_cast<unsigned char>(text[i]);
      ++i;
      if (introducer >= 0x80) {  // not an ASCII introducer: drop the ESC and decode the rest normally
        --i;
        continue;
      }
      skip_escape(text, i, introducer);
      continue;
    }
    if (cp >= 0x80 && cp <= 0x9F) {
      // C1 controls; 0x9B (CSI), 0x9D (OSC), 0x90 (DCS), 0x98, 0x9E, 0x9F start sequences in 8-bit terminals.
      if (cp == 0x9B) skip_escape(text, i, '[');
      if (cp == 0x9D) skip_escape(text, i, ']');
      if (cp == 0x90 || cp == 0x98 || cp == 0x9E || cp == 0x9F) skip_escape(text, i, ']');
      continue;
    }
    if (cp == '\n') {
      out += keep_newlines ? '\n' : ' ';
      continue;
    }
    if (cp == '\t') {
      out += ' ';
      continue;
    }
    if (cp < 0x20 || cp == 0x7F || is_bidi_control(cp)) continue;
    append_utf8(out, cp);
  }
  return out;
}

namespace {

bool ascii_digit(char c) { return c >= '0' && c <= '9'; }

bool ascii_alnum(char c) { return ascii_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool lower_is(char c, char lower) { return c == lower || c == lower - 'a' + 'A'; }

// Whether GitHub would start an automatic link at text[i] that a zero-width joiner right after it breaks.
bool link_starts_after(std::string_view text, std::size_t i) {
  const char ch = text[i];
  const char next = i + 1 < text.size() ? text[i + 1] : '\0';
  if (ch == '@') return ascii_alnum(next);  // @user, @org/team; user@host and owner/repo@sha too
  if (ch == '#') return ascii_digit(next);  // #12, owner/repo#12, Closes #12
  if (ch == '-') return ascii_digit(next) && i >= 2 && lower_is(text[i - 2], 'g') && lower_is(text[i - 1], 'h');
  if (ch == ':') return text.substr(i + 1, 2) == "//";  // scheme://
  if (lower_is(ch, 'w')) return next == '.' && i >= 2 && lower_is(text[i - 2], 'w') && lower_is(text[i - 1], 'w');
  return false;
}

std::size_t longest_backtick_run(std::string_view text) {
  std::size_t longest = 0;
  std::size_t run = 0;
  for (char ch : text) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

}  // namespace

std::string unlinked(std::string_view text) {
  static constexpr std::string_view zero_width_joiner = "\xE2\x80\x8D";  // U+200D in UTF-8
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (link_starts_after(text, i)) out += zero_width_joiner;
  }
  return out;
}

std::string capped(std::string_view text, std::size_t most) {
  if (text.size() <= most) return std::string(text);
  std::size_t cut = most;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + " [... " + std::to_string(text.size() - cut) + " more bytes]";
}

std::string markdown_escape(std::string_view text) {
  const std::string clean = unlinked(terminal_safe(text, false));
  std::string out;
  out.reserve(clean.size() + 8);
  // A block marker at the start (where the text may begin a line): "- ", "+ ", "= ", "1. ", "1) ".
  std::size_t digits = 0;
  while (digits < clean.size() && clean[digits] >= '0' && clean[digits] <= '9') ++digits;
  std::size_t block_marker = std::string::npos;
  if (!clean.empty() && (clean[0] == '-' || clean[0] == '+' || clean[0] == '=')) block_marker = 0;
  if (digits > 0 && digits < clean.size() && (clean[digits] == '.' || clean[digits] == ')')) block_marker = digits;
  for (std::size_t i = 0; i < clean.size(); ++i) {
    char ch = clean[i];
    switch (ch) {
      // Emphasis, code, links and images, HTML and entities, headings, tables, strikethrough, math, escapes.
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '(':
      case ')':
      case '<':
      case '>':
      case '!':
      case '#':
      case '|':
      case '~':
      case '&':
      case '$':
      case '{':
      case '}': out += '\\'; break;
      default:
        if (i == block_marker) out += '\\';
    }
    out += ch;
  }
  return out;
}

std::string markdown_code(std::string_view text) {
  std::string clean = terminal_safe(text, false);
  // A table cell ends at a "|" even inside a code span; GFM takes "\|" there as a literal "|".
  std::string body;
  for (char ch : clean) {
    if (ch == '|') body += '\\';
    body += ch;
  }
  std::string fence(longest_backtick_run(body) + 1, '`');
  bool pad = body.empty() || body.front() == '`' || body.back() == '`' || body.front() == ' ';
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

std::string markdown_quoted(std::string_view text, std::size_t most) {
  std::string body = unlinked(capped(terminal_safe(text, true), most));
  while (!body.empty() && (body.back() == '\n' || body.back() == ' ')) body.pop_back();
  const std::string fence(std::max<std::size_t>(3, longest_backtick_run(body) + 1), '`');
  return fence + "text\n" + body + "\n" + fence + "\n";
}

std::string markdown_cell_quotes::cell(std::string_view label, std::string_view text) {
  const std::string line = terminal_safe(text, false);
  const bool several_lines = terminal_safe(text, true).find('\n') != std::string::npos;
  if (line.size() <= most_ && !several_lines) return markdown_escape(line);
  kept_.emplace_back(std::string(label), std::string(text));
  return markdown_escape(capped(line, most_)) + " (in full below)";
}

std::string markdown_cell_quotes::full_texts(std::string_view title) const {
  if (kept_.empty()) return "";
  std::string out = "<details><summary>" + html_escape(title) + "</summary>\n\n";
  for (const auto& [label, text] : kept_)
    out += "**" + markdown_escape(label) + "**\n\n" + markdown_quoted(text) + "\n";
  return out + "</details>\n";
}

std::string html_escape(std::string_view text) {
  std::string out;
  for (char ch : terminal_safe(text, true)) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string message_shown(std::string_view text, std::size_t limit) {
  std::string out(text.substr(0, limit));
  for (auto& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return out;
}

}  // namespace rnx
