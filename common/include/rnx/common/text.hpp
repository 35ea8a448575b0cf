// Small text helpers shared by the parts: quoting another program's output, URLs and TOML strings, and the one
// escaper per target for text that came from outside (a candidate, a kernel, a manifest, a run): every renderer
// passes such text through the escaper of its target, so it is shown as data and never read as markup.
#pragma once

#include "rnx/common/secret_scan.hpp"  // secret_value, environment_secrets, redact (moved there)

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// `text` with GitHub's automatic links broken by a zero-width joiner (U+200D, invisible when shown): @mentions of
// users and teams (`@octocat`, `@org/team`), issue and pull request references (`#12`, `GH-12`, `owner/repo#12`,
// and so the closing keywords `Closes #12`), and URLs (`scheme://`, `www.`, a full issue URL among them). Text from
// outside can then notify no one, link or close no issue and add no link. GitHub links these in commit messages
// too, where Markdown's code spans and blocks do not protect. Applying it twice changes nothing.
std::string unlinked(std::string_view text);

// At most `most` bytes of `text`, cut on a UTF-8 character boundary, with " [... N more bytes]" after a cut.
std::string capped(std::string_view text, std::size_t most);

// `text` as literal Markdown (GitHub Flavored, for PR comments and step summaries), on one line: terminal_safe
// without newlines, unlinked, then \ ` * _ [ ] ( ) < > ! # | ~ & $ { } backslash-escaped, and a leading block
// marker ("-", "+", "=", "1." or "1)"), so no emphasis, code, link, image, heading, quote, list, table cell break,
// HTML tag, entity, math, mention or issue reference can start inside it. Safe in a paragraph and in a table cell.
std::string markdown_escape(std::string_view text);

// Text from outside that may be long or span lines (a candidate's exception or printed output, a file name it
// chose) as Markdown: the one way such text enters a PR body, comment or step summary whole. A fenced code block,
// its fence more backticks than any run inside (at least three) so no line of the text can close it; the text
// terminal_safe with newlines kept, unlinked (GitHub links nothing in a code block, but a commit message made of
// the same Markdown is read as plain text) and capped at `most` bytes. Ends with a newline; put it after a blank
// line, never inside a table.
std::string markdown_quoted(std::string_view text, std::size_t most = 4000);

// Outside text for Markdown table cells, which cannot hold a fenced block. cell() gives a short summary: the text
// on one line, capped at `most` bytes, markdown_escape'd, and keeps each text that did not fit whole (cut, or more
// than one line). full_texts(), written below the table, shows those whole, each under its label in a
// markdown_quoted block inside one <details> element; empty when every text fitted.
class markdown_cell_quotes {
 public:
  explicit markdown_cell_quotes(std::size_t most) : most_(most) {}
  std::string cell(std::string_view label, std::string_view text);
  std::string full_texts(std::string_view title) const;

 private:
  std::size_t most_;
  std::vector<std::pair<std::string, std::string>> kept_;  // label, whole text
};

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
