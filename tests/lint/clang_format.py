#!/usr/bin/env python3
"""Every tracked C++ source is formatted as .clang-format says (what `clang-format -i` would leave unchanged).

The files: git's tracked *.cpp, *.hpp, *.h and *.cu, except examples/ and the kernel corpora (bench/corpus/,
tests/corpus/), which are users' code kept as users write it. The style was measured and applied with clang-format
14 (the Debian package scripts/setup.sh installs); another major version wraps some lines differently, so the check
is skipped there rather than failing on a tool's change of mind.

  python3 tests/lint/clang_format.py [ROOT]        # what ctest lint.clang_format runs

Prints each file that would change with the first differing line, exits 1 on any, 77 (ctest: skipped) without
clang-format 14 or without git.
"""
import difflib
import re
import shutil
import subprocess
import sys

EXCLUDED = ("examples/", "bench/corpus/", "tests/corpus/")
WANTED_MAJOR = 14


def tracked_sources(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "*.cpp", "*.hpp", "*.h", "*.cu"], capture_output=True,
                         text=True, check=True).stdout
    return [f for f in out.splitlines() if f and not f.startswith(EXCLUDED)]


def clang_format_major(binary):
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    match = re.search(r"version (\d+)\.", version)
    return int(match.group(1)) if match else None


def first_difference(path, formatted):
    with open(path, encoding="utf-8") as f:
        original = f.read().splitlines()
    for line in difflib.unified_diff(original, formatted.splitlines(), lineterm="", n=0):
        if line.startswith("@@"):
            return line
    return "(whitespace at the end of the file)"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    binary = shutil.which("clang-format") or shutil.which(f"clang-format-{WANTED_MAJOR}")
    if not binary or clang_format_major(binary) != WANTED_MAJOR:
        print(f"lint.clang_format: skipped: needs clang-format {WANTED_MAJOR} (scripts/setup.sh installs it)")
        return 77
    try:
        files = tracked_sources(root)
    except (OSError, subprocess.CalledProcessError):
        print("lint.clang_format: skipped: not a git checkout")
        return 77
    problems = 0
    for rel in files:
        path = f"{root}/{rel}"
        formatted = subprocess.run([binary, f"--assume-filename={path}", path], capture_output=True, text=True,
                                   check=True).stdout
        with open(path, encoding="utf-8") as f:
            if f.read() == formatted:
                continue
        problems += 1
        print(f"{rel}: not formatted as .clang-format says, first at {first_difference(path, formatted)}; "
              f"run clang-format -i {rel}")
    print(f"lint.clang_format: {len(files)} files checked, {problems} to format")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
