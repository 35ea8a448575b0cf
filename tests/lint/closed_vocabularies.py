#!/usr/bin/env python3
"""No string-literal comparison for a closed vocabulary in product code (docs/architecture.md, Closed vocabularies).

    python3 tests/lint/closed_vocabularies.py ROOT [--count]

A closed vocabulary is an enum whose to_string names its values: every `case E::v: return "text";` in product code
adds "text" to the vocabulary of E, and so does every enumerator of a `BOOST_DESCRIBE_ENUM(E, ...)` (a described
enum travels as its enumerators' names). A comparison `== "text"` or `!= "text"` (either side) against such a text is a
value the program should hold as the enum: the text is turned into the enum once, where it is read.

What may still compare the same letters is listed in ALLOWED, each with why: the point where the text becomes the
enum (a parser), and text that is someone else's vocabulary and happens to spell one of ours (GitHub's event names,
/proc/stat's "cpu" line, SQLite's "ok"). An entry that no longer matches anything is itself a problem, so the list
cannot outlive its code.

Exit 1 with FILE:LINE: TEXT (ENUMS) for every comparison not allowed, 0 when there is none; --count prints the
number of comparisons found (allowed ones included) and of those allowed. tests/, bench/ and examples/ are exempt.

    python3 tests/lint/closed_vocabularies.py --self-test   # each rule catches its break (ctest)
"""
import re
import sys

from lint_support import read_sources, report_self_tests, tracked_sources

CASE = re.compile(r'case\s+(\w+)::(\w+)\s*:\s*return\s+"([^"\\]+)"')
# An enum described with Boost.Describe travels as its enumerators' names (rnx/common/described_json.hpp).
DESCRIBED = re.compile(r'BOOST_DESCRIBE_ENUM\(\s*(\w+)\s*,([^)]*)\)')
COMPARE = re.compile(r'(?:[!=]=\s*"([^"\\]*)")|(?:"([^"\\]*)"\s*[!=]=)')

# (path, text): why the letters may be compared there.
ALLOWED = {
    ("common/src/drift_settings.cpp", "accepted"): "the parser of [gate] anchor (accepted, tag:GLOB, days:N)",
    ("common/src/drift_settings.cpp", "tag:"): "the parser of [gate] anchor",
    ("common/src/drift_settings.cpp", "days:"): "the parser of [gate] anchor",
    ("runner/src/scheduler.cpp", "cuda"): "the parser of --devices refusing a bare kind",
    ("runner/src/scheduler.cpp", "auto"): "the parser of --devices refusing a bare kind",
    ("optimize/src/config.cpp", "command"): "the parser of --rewriter (command or command:PATH)",
    ("gate/src/gate_context.cpp", "pull_request"): "GitHub's event names, read into event_kind",
    ("gate/src/gate_context.cpp", "push"): "GitHub's event names, read into event_kind",
    ("gate/src/gate_context.cpp", "issue_comment"): "GitHub's event names, read into event_kind",
    ("http/src/github.cpp", "admin"): "GitHub's repository permission names",
    ("http/src/client.cpp", "invalid"): "the reserved DNS name .invalid (RFC 2606)",
    ("runner/src/peaks.cpp", "cpu"): "the first word of /proc/stat's total line",
    ("baseline-service/src/store_backup.cpp", "ok"): "SQLite's answer to PRAGMA integrity_check",
    ("baseline-service/src/admin.cpp", "ok"): "/healthz's status field, the service's liveness answer",
    ("baseline-service/src/pages_compare.cpp", "cpu"): "an environment fingerprint's field name, not a device",
    ("baseline-service/src/pages_html.cpp", "compare"): "a URL path segment",
    ("baseline-service/src/pages_routes.cpp", "log"): "the pages' ?scale=linear|log, turned into a bool here",
    ("gate/src/cmd_import.cpp", "cpu"): "rnx import's Google Benchmark timer (cpu or real), turned into a bool here",
    ("gate/src/cmd_profile.cpp", "removed"): "the parser of --factors (a number, inf or removed)",
    ("gate/src/init_scaffold.cpp", "none"): "rnx init --workflow none, turned into an empty name here",
    ("importers/src/gbench.cpp", "time"): "Google Benchmark's aggregate_unit",
    ("verify/src/worker_audit.cpp", "none"): "the Python loader's parameters note (none: nothing to vary)",
}

EXEMPT = ("tests/", "bench/", "examples/")


def code_of(line):
    """The line without a // comment (a comment line is dropped whole; a trailing one is cut where it starts)."""
    if line.lstrip().startswith("//"):
        return ""
    at = line.find("  //")
    return line if at < 0 else line[:at]


def vocabulary(texts):
    """text -> the enums that name a value so, from every to_string switch in `texts` (path -> file text)."""
    words = {}
    for text in texts.values():
        for match in CASE.finditer(text):
            words.setdefault(match.group(3), set()).add(match.group(1))
        for match in DESCRIBED.finditer(text):
            for name in match.group(2).split(","):
                if name.strip():
                    words.setdefault(name.strip(), set()).add(match.group(1))
    return words


def comparisons(texts, words):
    """(path, line number, text, enums) for every comparison with a vocabulary's text."""
    found = []
    for path, text in sorted(texts.items()):
        for number, line in enumerate(text.splitlines(), 1):
            for match in COMPARE.finditer(code_of(line)):
                word = match.group(1) if match.group(1) is not None else match.group(2)
                if word in words:
                    found.append((path, number, word, sorted(words[word])))
    return found


def problems_of(texts):
    """(problem lines, comparisons found, of them allowed)."""
    words = vocabulary(texts)
    found = comparisons(texts, words)
    problems = []
    used = set()
    allowed = 0
    for path, number, word, enums in found:
        if (path, word) in ALLOWED:
            used.add((path, word))
            allowed += 1
            continue
        problems.append(f"{path}:{number}: compares with \"{word}\", a value of {', '.join(enums)}: hold the enum "
                        "(turn the text into it where it is read) or, if this is another vocabulary that spells the "
                        "same, add it to ALLOWED with why")
    for path, word in sorted(set(ALLOWED) - used):
        if path in texts:
            problems.append(f"{path}: ALLOWED names \"{word}\" but nothing there compares with it any more: drop "
                            "the entry")
    return problems, len(found), allowed


SELF_TESTS = [
    # (files, problems expected)
    ({"common/src/a.cpp": 'std::string_view to_string(color c) { switch (c) { case color::red: return "red"; } }',
      "common/src/b.cpp": 'if (name == "red") paint();'}, 1),
    ({"common/src/a.cpp": 'switch (c) { case color::red: return "red"; }',
      "common/src/b.cpp": 'if ("red" != name) paint();'}, 1),
    ({"common/src/a.cpp": 'switch (c) { case color::red: return "red"; }',
      "common/src/b.cpp": '// if (name == "red") once\nif (name == "blue") paint();  // == "red"'}, 0),
    # An entry the vocabulary no longer needs (no enum spells "invalid") is stale.
    ({"common/src/a.cpp": 'switch (c) { case color::red: return "red"; }',
      "http/src/client.cpp": 'return lower == "invalid";'}, 1),
    ({"common/src/a.cpp": 'switch (c) { case color::invalid: return "invalid"; }',
      "http/src/client.cpp": 'return lower == "invalid";'}, 0),
    ({"common/src/a.cpp": 'switch (c) { case color::invalid: return "invalid"; }',
      "http/src/client.cpp": 'return lower.empty();'}, 1),
    # A described enum's enumerators are its vocabulary too.
    ({"common/src/a.hpp": 'BOOST_DESCRIBE_ENUM(color, red, green)',
      "common/src/b.cpp": 'if (name == "green") paint();'}, 1),
]


def self_test():
    return report_self_tests("closed_vocabularies", [(str(sorted(files)), len(problems_of(files)[0]), expected)
                                                     for files, expected in SELF_TESTS])


def main():
    args = sys.argv[1:]
    if "--self-test" in args:
        return self_test()
    roots = [a for a in args if not a.startswith("--")]
    root = roots[0] if roots else "."
    texts = read_sources(root, tracked_sources(root), EXEMPT)
    problems, found, allowed = problems_of(texts)
    for line in problems:
        print(line)
    if "--count" in args:
        print(f"closed_vocabularies: {found} comparisons with a closed vocabulary's text, {allowed} of them allowed")
    print(f"closed_vocabularies: {len(texts)} files, {len(problems)} problem{'s' if len(problems) != 1 else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
