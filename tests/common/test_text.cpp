// The escapers of common/include/rnx/common/text.hpp with hostile strings (images with a secret in the URL, HTML
// headings, carriage returns, ANSI and OSC 8 sequences, javascript: links), and the verdict renderers that use them:
// nothing of the input survives as markup or as a terminal control.
#include "rnx/common/report.hpp"
#include "rnx/common/text.hpp"

#include "../support/markdown_probe.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace rnx;
using rnx::test_support::outside_code_spans;

namespace {

const std::vector<std::string> hostile = {
    "![leak](https://evil.example/x.png?token=SECRET)",
    "<h1>rnx verify: accepted</h1><img src=x onerror=alert(1)>",
    "rejected\rrnx verify: ACCEPTED",
    "\x1b[2J\x1b[Hrnx verify: accepted",
    "\x1b]8;;https://evil.example\x1b\\click here\x1b]8;;\x1b\\",
    "\x1b]0;window title\x07text",
    "[ok](javascript:alert(1))",
    "<https://evil.example>",
    "&lt;script&gt; &#60;b&#62;",
    "# rnx: **PASS**",
    "> quoted",
    "- item",
    "1. item",
    "`code` ``` fence",
    "~~struck~~ *em* _em_ $x^2$",
    "a|b\nsecond line\r\n### heading",
    "\xc2\x9b"
    "2J C1 CSI",
    "\xe2\x80\xae"
    "reversed",
    "\xff\xfe invalid utf-8",
    "\x1bP"
    "device control\x1b\\",
};

// Whether `md` has a Markdown-active character that is not backslash-escaped.
bool has_live_markup(const std::string& md) {
  const std::string active = "\\`*_[]()<>!#|~&${}";
  for (std::size_t i = 0; i < md.size(); ++i) {
    if (active.find(md[i]) == std::string::npos) continue;
    if (md[i] == '\\') {
      ++i;  // an escape: the next character is literal
      continue;
    }
    return true;
  }
  return false;
}

bool has_terminal_control(const std::string& text, bool newlines_allowed) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' && newlines_allowed) continue;
    if (c < 0x20 || c == 0x7f) return true;
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      return true;  // a C1 control encoded as UTF-8
    }
    if (c == 0xE2 && text.compare(i, 3, "\xe2\x80\xae") == 0) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("terminal_safe: escape sequences and control characters are removed, the text stays") {
  CHECK(terminal_safe("\x1b[2J\x1b[31mred\x1b[0m") == "red");
  CHECK(terminal_safe("\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\") == "click");
  CHECK(terminal_safe("\x1b]0;title\x07text") == "text");
  CHECK(terminal_safe("rejected\rACCEPTED") == "rejectedACCEPTED");
  CHECK(terminal_safe("a\tb\nc") == "a b\nc");
  CHECK(terminal_safe("a\nb", false) == "a b");
  CHECK(terminal_safe("\xc2\x9b"
                      "2Jx") == "x");
  CHECK(terminal_safe("caf\xc3\xa9 \xe2\x9c\x93") == "caf\xc3\xa9 \xe2\x9c\x93");  // UTF-8 text is kept
  CHECK(terminal_safe("\xff") == "\xef\xbf\xbd");                                  // invalid bytes become U+FFFD
  CHECK(terminal_safe("\xe2\x80\xae"
                      "abc") == "abc");
  for (const auto& h : hostile) {
    CAPTURE(h);
    CHECK_FALSE(has_terminal_control(terminal_safe(h), true));
    CHECK_FALSE(has_terminal_control(terminal_safe(h, false), false));
    CHECK(terminal_safe(h).find("\x1b") == std::string::npos);
  }
}

TEST_CASE("markdown_escape: every hostile string is one line of literal text") {
  CHECK(markdown_escape("![leak](https://evil.example/x.png?token=SECRET)") ==
        "\\!\\[leak\\]\\(https://evil.example/x.png?token=SECRET\\)");
  CHECK(markdown_escape("<h1>x</h1>") == "\\<h1\\>x\\</h1\\>");
  CHECK(markdown_escape("&lt;") == "\\&lt;");
  CHECK(markdown_escape("- item") == "\\- item");
  CHECK(markdown_escape("12. item") == "12\\. item");
  CHECK(markdown_escape("1 configurations: 1 equivalent, 0 faster") == "1 configurations: 1 equivalent, 0 faster");
  for (const auto& h : hostile) {
    CAPTURE(h);
    auto md = markdown_escape(h);
    CHECK_FALSE(has_live_markup(md));
    CHECK_FALSE(has_terminal_control(md, false));
    CHECK(md.find('\n') == std::string::npos);
    // Nothing can start a block: no heading, quote or list marker at the start.
    CHECK(md.rfind("#", 0) != 0);
    CHECK(md.rfind(">", 0) != 0);
    CHECK(md.rfind("- ", 0) != 0);
  }
}

TEST_CASE("markdown_code: a code span no input can close, one line, pipes escaped for tables") {
  CHECK(markdown_code("attention/eager/float32/b8") == "`attention/eager/float32/b8`");
  CHECK(markdown_code("a`b") == "``a`b``");
  CHECK(markdown_code("`x`") == "`` `x` ``");
  CHECK(markdown_code("a|b") == "`a\\|b`");
  for (const auto& h : hostile) {
    CAPTURE(h);
    auto md = markdown_code(h);
    CHECK_FALSE(has_terminal_control(md, false));
    // The fence is longer than any run of backticks inside.
    std::size_t fence = 0;
    while (fence < md.size() && md[fence] == '`') ++fence;
    std::size_t run = 0;
    for (std::size_t i = fence; i + fence < md.size(); ++i) {
      run = md[i] == '`' ? run + 1 : 0;
      CHECK(run < fence);
    }
  }
}

TEST_CASE("html_escape: no tag, attribute quote or entity of the input survives") {
  CHECK(html_escape("<h1 class='x'>\"a\" & b</h1>") == "&lt;h1 class=&#39;x&#39;&gt;&quot;a&quot; &amp; b&lt;/h1&gt;");
  for (const auto& h : hostile) {
    CAPTURE(h);
    auto out = html_escape(h);
    CHECK(out.find_first_of("<>\"'") == std::string::npos);
    CHECK_FALSE(has_terminal_control(out, true));
  }
}

TEST_CASE("verdict renderers: reasons, names and commits from a run are data in Markdown and on the terminal") {
  for (const auto& h : hostile) {
    CAPTURE(h);
    verdict_document v;
    v.verdict = overall::block;
    v.reason = h;
    v.baseline = baseline_ref{"3", h, h};
    config_verdict c;
    c.key = {h, "eager", "float32", 8};
    c.result = decision::slower;
    c.reason = h;
    v.configs.push_back(c);
    const std::string full = render_verdict_markdown(v);
    CHECK_FALSE(has_terminal_control(full, true));
    const std::string md = outside_code_spans(full);
    CHECK(md.find("![leak]") == std::string::npos);
    CHECK(md.find("<h1>") == std::string::npos);
    CHECK(md.find("<img") == std::string::npos);
    CHECK(md.find("<code>") != std::string::npos);  // the label is one
    CHECK(md.find("](javascript:") == std::string::npos);
    CHECK(md.find("\n# ") == std::string::npos);
    CHECK(md.find("\n### heading") == std::string::npos);
    CHECK_FALSE(has_terminal_control(md, true));
    const std::string text = render_verdict_text(v);
    CHECK_FALSE(has_terminal_control(text, true));
    CHECK(text.find('\x1b') == std::string::npos);
  }
}

TEST_CASE("message_shown: a prefix of at most `limit` bytes, control and non-ASCII bytes as '?'") {
  CHECK(message_shown("run-42", 40) == "run-42");
  CHECK(message_shown("abcdef", 4) == "abcd");
  CHECK(message_shown("a\nb\x1b[2J\x7f", 40) == "a?b?[2J?");
  CHECK(message_shown("caf\xc3\xa9", 40) == "caf??");
  CHECK(message_shown("", 8).empty());
}
