// Small text helpers shared by the parts: quoting another program's output, URLs and TOML strings, and the one
// escaper per target for text that came from outside (a candidate, a kernel, a manifest, a run): every renderer
// passes such text through the escaper of its target, so it is shown as data and never read as markup.
#pragma once

#include <cstddef>
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

// `text` safe to print on a terminal: ANSI escape sequences (CSI, OSC such as hyperlinks and titles, DCS, and
// two-byte ESC sequences) removed, C0 and C1 control characters and DEL removed (a carriage return too, so nothing
// overwrites what was printed), bidirectional overrides removed, invalid UTF-8 replaced by U+FFFD, tabs made
// spaces. Newlines stay when `keep_newlines` (a multi-line message), else they become spaces (one table cell).
std::string terminal_safe(std::string_view text, bool keep_newlines = true);

// `text` as literal Markdown (GitHub Flavored, for PR comments and step summaries), on one line: terminal_safe
// without newlines, then \ ` * _ [ ] ( ) < > ! # | ~ & $ { } backslash-escaped, and a leading block marker
// ("-", "+", "=", "1." or "1)"), so no emphasis, code, link, image, heading, quote, list, table cell break, HTML
// tag, entity or math can start inside it. Safe in a paragraph and in a table cell.
std::string markdown_escape(std::string_view text);

// `text` as a Markdown code span (monospace, for names, commits and ids), on one line: terminal_safe without
// newlines, a fence of more backticks than any run inside it, "|" as "\|" (a table cell's end otherwise). Code
// spans show their content literally, so tags, entities and link syntax inside stay text. For table cells and
// paragraphs alike (outside a table GitHub shows the backslash before a "|").
std::string markdown_code(std::string_view text);

// `text` for HTML text or a quoted attribute value: & < > " ' as character references; control characters
// (newlines kept, tabs made spaces) removed and invalid UTF-8 replaced, as in terminal_safe.
std::string html_escape(std::string_view text);

// At most the first `limit` bytes of `text`, each control or non-ASCII byte as '?': text from a request or a command
// line quoted in an error message, so a message never carries terminal controls or a cut UTF-8 sequence.
std::string message_shown(std::string_view text, std::size_t limit);

}  // namespace rnx
