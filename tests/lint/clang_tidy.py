#!/usr/bin/env python3
"""Runs clang-tidy (the checks of .clang-tidy) on the C++ files a change touches, within a time bound.

The files: those changed since the merge base with main (git diff BASE, plus new files git does not ignore), that
the build compiles (build/compile_commands.json, CMAKE_EXPORT_COMPILE_COMMANDS). With no git, no main, or no
changed file, a fixed small list of sources stands in, so the test always checks something.

  python3 tests/lint/clang_tidy.py --build build            # what ctest lint.clang_tidy runs
  python3 tests/lint/clang_tidy.py --build build --base HEAD~3 --deadline 600

Prints each finding (FILE:LINE: warning ... [check]) and exits 1 on any; files the deadline left unchecked are
named (exit 0 when at least one was checked). Exits 77 (ctest: skipped) without clang-tidy or a compile database.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

FIXED = ["common/src/json.cpp", "stats/src/verdict.cpp", "baseline-service/src/router.cpp"]
FINDING = re.compile(r"^(\S+?):(\d+):(\d+): (warning|error): (.*) \[([\w.,-]+)\]$")


def git(root, *args):
    return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, check=True).stdout


def changed_files(root, base):
    """Files changed since `base` (default: the merge base with main), new untracked ones included; None without git."""
    try:
        if not base:
            for ref in ("main", "origin/main"):
                try:
                    base = git(root, "merge-base", "HEAD", ref).strip()
                    break
                except subprocess.CalledProcessError:
                    continue
        if not base:
            return None
        names = git(root, "diff", "--name-only", "--diff-filter=d", base).split()
        names += git(root, "ls-files", "--others", "--exclude-standard").split()
        return sorted(set(names))
    except (OSError, subprocess.CalledProcessError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("--build", required=True, help="the build folder holding compile_commands.json")
    ap.add_argument("--base", help="compare with this revision (default: the merge base with main)")
    ap.add_argument("--deadline", type=float, default=150, help="seconds for all files together")
    ap.add_argument("--clang-tidy", default=os.environ.get("CLANG_TIDY", "clang-tidy"))
    a = ap.parse_args()
    tidy = shutil.which(a.clang_tidy)
    database = os.path.join(a.build, "compile_commands.json")
    if not tidy or not os.path.exists(database):
        print("skipped: %s" % ("no clang-tidy on PATH" if not tidy else database + " is missing (configure with "
                                "CMAKE_EXPORT_COMPILE_COMMANDS=ON)"))
        return 77
    root = os.path.realpath(a.root)
    with open(database, encoding="utf-8") as f:
        compiled = {os.path.relpath(os.path.realpath(os.path.join(e["directory"], e["file"])), root)
                    for e in json.load(f)}
    changed = changed_files(root, a.base)
    files = [f for f in (changed or []) if f in compiled and not f.startswith("third_party/")]
    if not files:
        files = [f for f in FIXED if f in compiled]
        print("no changed C++ file the build compiles: checking %s" % ", ".join(files))
    start = time.monotonic()
    findings, checked, left = [], [], []
    for f in files:
        remaining = a.deadline - (time.monotonic() - start)
        if remaining <= 5:
            left.append(f)
            continue
        try:
            out = subprocess.run([tidy, "-p", a.build, "--quiet", os.path.join(root, f)], capture_output=True,
                                 text=True, timeout=remaining).stdout
        except subprocess.TimeoutExpired:
            left.append(f)
            continue
        checked.append(f)
        for line in out.splitlines():
            m = FINDING.match(line)
            if m and os.path.realpath(m.group(1)).startswith(root + os.sep):
                findings.append("%s:%s: %s [%s]" % (os.path.relpath(m.group(1), root), m.group(2), m.group(5),
                                                    m.group(6)))
    for line in sorted(set(findings)):
        print(line)
    if left:
        print("not checked within %.0f s: %s" % (a.deadline, ", ".join(left)))
    print("%d file(s) checked in %.0f s, %d finding(s)" % (len(checked), time.monotonic() - start, len(set(findings))))
    if findings:
        return 1
    return 0 if checked else 77


if __name__ == "__main__":
    sys.exit(main())
