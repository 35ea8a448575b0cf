#!/usr/bin/env python3
"""One way to do each thing, where a second way has bitten: every rule names the one place allowed to do it.

    python3 tests/lint/one_way.py ROOT

* JSON text is read by rnx::json::parse (common/src/json.cpp) only. Boost.JSON 1.81's own parser reads about one
  double in six one unit in the last place off; a service reply read that way made the gate's verdict.json differ
  from the verdict the service stored (gate.e2e_runner.paired_service, "to the bit").
* A program is started through rnx::start_program (common/src/program_start.cpp; run_process starts its child there)
  or by the sandbox's or candidate host's own fork; never popen() or
  system(), which hand the arguments to a shell.

Exit 1 with FILE:LINE: RULE for every break, 0 when there is none. tests/ is exempt.
"""
import re
import subprocess
import sys

RULES = [
    (re.compile(r"\b(?:bj|boost::json)::(?:parse\s*\(|parser\b|stream_parser\b)"), {"common/src/json.cpp"},
     "JSON is read with rnx::json::parse (rnx/common/json.hpp), which reads every number to the nearest double"),
    (re.compile(r"(?<![\w.])(?:popen|system)\s*\("), set(),
     "run programs with rnx::run_process (rnx/common/process.hpp): no shell between rnx and its arguments"),
]


def code_lines(text):
    """The file's lines with // comments and string literals blanked (so prose may name what code may not do)."""
    out = []
    for line in text.splitlines():
        line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
        out.append(line.split("//", 1)[0])
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = subprocess.run(["git", "-C", root, "ls-files", "*.cpp", "*.hpp", "*.cu", "*.h"], check=True,
                           stdout=subprocess.PIPE, text=True).stdout.split()
    problems = 0
    for path in files:
        if path.startswith(("tests/", "bench/corpus/", "examples/")):
            continue
        with open(f"{root}/{path}", encoding="utf-8") as f:
            lines = code_lines(f.read())
        for number, line in enumerate(lines, 1):
            for pattern, allowed, rule in RULES:
                if path not in allowed and pattern.search(line):
                    print(f"{path}:{number}: {rule}")
                    problems += 1
    print(f"one_way: {len(files)} files, {problems} problem{'s' if problems != 1 else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
