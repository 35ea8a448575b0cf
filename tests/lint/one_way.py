#!/usr/bin/env python3
"""One way to do each thing, where a second way has bitten: every rule names the one place allowed to do it.

    python3 tests/lint/one_way.py ROOT

* JSON text is read by rnx::json::parse (common/src/json.cpp) only. Boost.JSON 1.81's own parser reads about one
  double in six one unit in the last place off; a service reply read that way made the gate's verdict.json differ
  from the verdict the service stored (gate.e2e_runner.paired_service, "to the bit").
* A program is started through rnx::start_program (common/src/program_start.cpp; run_process starts its child there)
  or by the sandbox's own fork; never popen() or system(), which hand the arguments to a shell.
* fork() and vfork() are called only by the two program starters: common/src/program_start.cpp and the sandbox's
  launch (sandbox/src/*.cpp). Each builds everything before it forks; a child forked elsewhere from one of the runner's lane threads once built strings after fork()
  and could wait forever on an allocator lock.
* The verdict policy's options (--rope, --probability, --resamples, --statistic, --on-abstain, --report-only) are
  declared by rnx::add_policy_options (common/src/policy_options.cpp) only: --rope was once parsed three ways with
  three ranges, and its default written in four places.

Exit 1 with FILE:LINE: RULE for every break, 0 when there is none. tests/ is exempt.

    python3 tests/lint/one_way.py ROOT --self-test   # each rule catches a break (ctest lint.one_way.self_test)
"""
import fnmatch
import re
import sys

from lint_support import read_sources, report_self_tests, tracked_sources

RULES = [
    (re.compile(r"\b(?:bj|boost::json)::(?:parse\s*\(|parser\b|stream_parser\b)"), {"common/src/json.cpp"},
     "JSON is read with rnx::json::parse (rnx/common/json.hpp), which reads every number to the nearest double"),
    (re.compile(r"(?<![\w.])(?:popen|system)\s*\("), set(),
     "run programs with rnx::run_process (rnx/common/process.hpp): no shell between rnx and its arguments"),
    (re.compile(r"(?<![\w.>])v?fork\s*\("),
     {"common/src/program_start.cpp", "sandbox/src/*.cpp"},
     "fork() outside the program starters: start the program with rnx::start_program "
     "(rnx/common/process.hpp), which builds its whole plan before it forks"),
]

# Rules about string literals themselves: matched on the code with its comments removed but its strings kept.
LITERAL_RULES = [
    (re.compile(r'add_(?:option|flag)\w*\(\s*"--(?:rope|probability|resamples|statistic|on-abstain|report-only)"'),
     {"common/src/policy_options.cpp"},
     "a verdict policy option declared outside rnx::add_policy_options (rnx/common/policy_options.hpp): one parser, "
     "one range and one default for every command"),
]


def code_lines(text):
    """The file's lines with // comments and string literals blanked (so prose may name what code may not do)."""
    out = []
    for line in text.splitlines():
        line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
        out.append(line.split("//", 1)[0])
    return out


def allowed_in(path, allowed):
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in allowed)


def problems_in(path, text):
    """(line number, rule) for every break in the file at `path` (relative to the root) whose text is `text`."""
    found = []
    for number, line in enumerate(code_lines(text), 1):
        for pattern, allowed, rule in RULES:
            if not allowed_in(path, allowed) and pattern.search(line):
                found.append((number, rule))
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("//", 1)[0] if line.lstrip().startswith("//") else line
        for pattern, allowed, rule in LITERAL_RULES:
            if not allowed_in(path, allowed) and pattern.search(code):
                found.append((number, rule))
    return found


# (path, text, rules broken): each rule catches its break, and what it allows or ignores passes.
SELF_TESTS = [
    ("gate/src/a.cpp", "auto v = boost::json::parse(text);", 1),
    ("common/src/json.cpp", "auto v = boost::json::parse(text);", 0),
    ("gate/src/a.cpp", "int rc = std::system(command.c_str());", 1),
    ("gate/src/a.cpp", "FILE* f = popen(command, \"r\");", 1),
    ("runner/src/worker_run.cpp", "const pid_t pid = ::fork();", 1),
    ("runner/src/worker_run.cpp", "pid_t pid = fork ();", 1),
    ("gate/src/a.cpp", "if (vfork() == 0) _exit(0);", 1),
    ("common/src/program_start.cpp", "const pid_t pid = ::fork();", 0),
    ("sandbox/src/launch.cpp", "const pid_t init = ::fork();", 0),
    ("verify/src/candidate_remote.cpp", "pid_ = ::fork();", 1),
    ("runner/src/a.cpp", "// never fork() here", 0),
    ("runner/src/a.cpp", "warn(\"a pull request from a fork()\");", 0),
    ("runner/src/a.cpp", "pthread_atfork(nullptr, nullptr, child); tree.fork(); p->fork(); my_fork();", 0),
    ("gate/src/cmd_compare.cpp", "cmd->add_option(\"--rope\", options->policy.rope, \"band\");", 1),
    ("gate/src/cmd_bench.cpp", "cmd.add_flag(\"--report-only\", flags.report_only);", 1),
    ("gate/src/cmd_bench.cpp", "cmd->add_option(\"--min-samples\", args->min_samples, \"per process\");", 0),
    ("gate/src/cmd_bench.cpp", "// cmd->add_option(\"--rope\", x) was here", 0),
    ("common/src/policy_options.cpp", "cmd.add_option(\"--rope\", into.rope, help);", 0),
]


def self_test():
    return report_self_tests("one_way", [(f"{path}: `{text}`", len(problems_in(path, text)), expected)
                                         for path, text, expected in SELF_TESTS])


def main():
    if "--self-test" in sys.argv[1:]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = tracked_sources(root)
    problems = 0
    for path, text in read_sources(root, files, ("tests/", "bench/corpus/", "examples/")).items():
        for number, rule in problems_in(path, text):
            print(f"{path}:{number}: {rule}")
            problems += 1
    print(f"one_way: {len(files)} files, {problems} problem{'s' if problems != 1 else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
