#!/usr/bin/env python3
"""The user docs stand alone: every file README.md and docs/ point to is in this repository.

Checks README.md and docs/**/*.md for
  * relative Markdown links whose target does not exist (relative to the page);
  * paths into this repository's folders (`runner/src/x.cpp`, `bench/y.py`, ...) that do not exist (pytest node
    ids such as `tests/x.py::test_y` name a user's files and are skipped);
  * Markdown files named anywhere (`FOO.md`) that are not in the repository;
  * absolute paths of a developer's machine (/work/..., /home/...) and references to the project's internal
    tracker ("issue 12", "the brief"), which readers of the docs do not have.
Prints one line per problem (FILE:LINE: what) and exits 1 when there is any.
"""
import argparse
import os
import re
import subprocess
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")
MD_NAME = re.compile(r"(?<![\w/.-])([\w.-]*[A-Za-z0-9_-]\.md)\b(?!/)")
FOREIGN = [
    (re.compile(r"(?<![\w.])/(?:work|home|root|Users)/\w"), "an absolute path of a developer's machine"),
    (re.compile(r"\b[Ii]ssue \d+\b"), "the project's internal tracker (readers have no issue numbers)"),
    (re.compile(r"\bthe brief\b", re.I), "the project's internal brief (readers do not have it)"),
]


def tracked_files(root):
    """The repository's files: git's list (tracked and new, not ignored), else a walk that skips build folders."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout
        return set(out.split())
    except (OSError, subprocess.CalledProcessError):
        found = set()
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
            found.update(os.path.relpath(os.path.join(folder, n), root) for n in names)
        return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    files = tracked_files(root)
    folders = {f.split("/")[0] for f in files if "/" in f}
    basenames = {os.path.basename(f) for f in files}
    repo_path = re.compile(r"(?<![\w/.-])((?:%s)/[\w./*-]*[\w*/])" % "|".join(re.escape(d) for d in sorted(folders)))
    pages = sorted(f for f in files if f == "README.md" or (f.startswith("docs/") and f.endswith(".md")))
    problems = []

    def exists(path):
        path = os.path.normpath(path).rstrip("/")
        return path in files or any(f.startswith(path + "/") for f in files)

    for page in pages:
        page_dir = os.path.dirname(page)
        with open(os.path.join(root, page), encoding="utf-8") as f:
            lines = f.read().splitlines()
        for number, line in enumerate(lines, 1):
            where = "%s:%d" % (page, number)
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                path = os.path.normpath(os.path.join(page_dir, target.split("#")[0]))
                if not exists(path):
                    problems.append("%s: link to %s, which is not in the repository" % (where, target))
            for m in repo_path.finditer(line):
                path = m.group(1)
                # Globs, elisions and pytest node ids (a user's tests/x.py::test_y) name no file of this repository.
                if "*" in path or "..." in path or line.startswith("::", m.end()):
                    continue
                if not exists(path):
                    problems.append("%s: %s is not in the repository" % (where, path))
            for name in MD_NAME.findall(line):
                if os.path.basename(name) not in basenames:
                    problems.append("%s: %s is not in the repository" % (where, name))
            for pattern, what in FOREIGN:
                m = pattern.search(line)
                if m:
                    problems.append("%s: \"%s\" refers to %s" % (where, m.group(0), what))
    for p in problems:
        print(p)
    print("%d pages checked, %d problems" % (len(pages), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
