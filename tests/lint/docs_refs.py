#!/usr/bin/env python3
"""The user docs stand alone: every file README.md and docs/ point to is in this repository.

Checks README.md and docs/**/*.md for
  * relative Markdown links whose target does not exist (relative to the page);
  * paths into this repository's folders (`runner/src/x.cpp`, `bench/y.py`, ...) that do not exist (pytest node
    ids such as `tests/x.py::test_y` name a user's files and are skipped);
  * Markdown files named anywhere (`FOO.md`) that are not in the repository;
  * absolute paths of a developer's machine (/work/..., /home/...) and references to the project's internal
    tracker ("issue 12", "the brief"), which readers of the docs do not have.
And every comment of the sources (C++ `//` and `/* */`, `#` in Python, shell, CMake and YAML files) for
  * paths into this repository's folders that do not exist (`// see docs/x.md`, `# bench/foo.py writes it`);
  * files a comment sends the reader to by name alone (`# see <name>.py`) that are in no folder of it.
Prints one line per problem (FILE:LINE: what) and exits 1 when there is any.
"""
import argparse
import io
import os
import re
import subprocess
import sys
import tokenize

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


CPP_SOURCES = (".cpp", ".hpp", ".h", ".cc", ".cu", ".cuh", ".c", ".in")
HASH_SOURCES = (".py", ".sh", ".cmake", ".yml", ".yaml", ".toml")
# A file a comment sends the reader to by its name alone: "see <name>.py", "see also <name>.md". (A bare name
# elsewhere is often the user's file or a library's header: conftest.py, toml.hpp.)
NAMED_FILE = re.compile(r"\b[Ss]ee (?:also )?`?([A-Za-z_][\w.-]*\.(?:md|py|cpp|hpp|cu|sh|cmake|ya?ml|toml))\b(?![\w/-])")
# Placeholder names of examples (tests/x.py, tests/test_x.py::test_y) name no file of this repository.
PLACEHOLDER = re.compile(r"(?:^|/)(?:test_)?(?:x|y|foo|bar)\.\w+$")


def cpp_comments(text):
    """(line, text) of each comment in C or C++ source; string and character literals are skipped."""
    out = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            for k, part in enumerate(text[i + 2:j].split("\n")):
                out.append((line + k, part))
            line += text[i:j].count("\n")
            i = j + 2
        elif c == "R" and text.startswith('R"', i) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = i + 1 if end < 0 else end + len(m.group(1)) + 2
            line += text[i:j].count("\n")
            i = j
        elif c in "\"'" and not (c == "'" and i and text[i - 1].isalnum()):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return out


def hash_comments(path, text):
    """(line, text) of each # comment of a Python, shell, CMake or YAML file (a shebang is no comment)."""
    if path.endswith(".py"):
        try:
            return [(t.start[0], t.string[1:]) for t in tokenize.generate_tokens(io.StringIO(text).readline)
                    if t.type == tokenize.COMMENT and not (t.start[0] == 1 and t.string.startswith("#!"))]
        except (tokenize.TokenError, SyntaxError, IndentationError):
            pass
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        # A # that starts the line or follows a blank, outside quotes ($# and ${#x} are shell, not comments).
        quote = None
        for k, ch in enumerate(line):
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch == "#" and (k == 0 or line[k - 1] in " \t") and not (number == 1 and line.startswith("#!")):
                out.append((number, line[k + 1:]))
                break
    return out


def source_comments(root, files):
    """(file, line, comment) for every comment of the repository's sources."""
    for f in sorted(files):
        name = os.path.basename(f)
        if f.startswith(("third_party/", "docs/")) or "/third_party/" in f:
            continue
        is_cpp = f.endswith(CPP_SOURCES)
        if not is_cpp and not f.endswith(HASH_SOURCES) and name != "CMakeLists.txt" and name != "Dockerfile":
            continue
        try:
            with open(os.path.join(root, f), encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError):
            continue
        for number, comment in (cpp_comments(text) if is_cpp else hash_comments(f, text)):
            yield f, number, comment


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
    comments = 0
    for source, number, comment in source_comments(root, files):
        comments += 1
        where = "%s:%d" % (source, number)
        for m in repo_path.finditer(comment):
            path = m.group(1)
            if "*" in path or "..." in path or comment.startswith(("::", "{"), m.end()) or PLACEHOLDER.search(path):
                continue
            if not exists(path) and not exists(os.path.join(os.path.dirname(source), path)):
                problems.append("%s: the comment names %s, which is not in the repository" % (where, path))
        for name in NAMED_FILE.findall(comment):
            if name not in basenames:
                problems.append("%s: the comment names %s, which is not in the repository" % (where, name))
    for p in problems:
        print(p)
    print("%d pages and %d source comments checked, %d problems" % (len(pages), comments, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
