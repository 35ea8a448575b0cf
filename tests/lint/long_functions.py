#!/usr/bin/env python3
"""Lists the C++ functions longer than a limit (120 lines by default), so "no function over 120 lines" is checkable,
and the files over 700 lines in a component's src/ that docs/architecture.md gives no reason for.

A function is a body that opens at namespace or class level after a parameter list (`) {`, `) const {`,
`) -> T {`, a constructor's `) : a_(x) {`); lambdas and local classes count as part of the function around them.
Comments, string and character literals are blanked first, so braces inside them do not count. Lines counted
are from the line of the opening brace's signature to the closing brace.

  python3 tests/lint/long_functions.py .                 # every function over 120 lines outside tests/
  python3 tests/lint/long_functions.py . --limit 80      # a stricter limit
  python3 tests/lint/long_functions.py . --check         # exit 1 when any is listed (for ctest)
  python3 tests/lint/long_functions.py --self-test       # each rule catches a break (ctest lint.long_functions.self_test)

Prints `LINES  FILE:LINE  NAME`, longest first. A file is long past 700 lines when it is in a component's src/ (a
top-level folder with a CMakeLists.txt) and is not named, with its reason, in docs/architecture.md's section
"Files over 700 lines, and why" as a line `- `PATH`: why` (or `- `PATH` (N lines): why`); a path named there that
is no longer over 700 lines is listed too, so the section stays true.
"""
import argparse
import os
import re
import sys
import tempfile

SOURCE_EXT = (".cpp", ".hpp", ".cu", ".h", ".cc")
SKIP_DIRS = {"tests", "build", "third_party", "node_modules"}
CONTROL = re.compile(r"\b(if|for|while|switch|catch|return|sizeof|decltype|alignof|noexcept)\s*$")


def blank_literals(text):
    """The text with comments, string and char literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def signature_name(head):
    """The function's name from the text before its body, or None when the brace opens no function body."""
    head = re.sub(r"\s+", " ", head).strip()
    if not head or head.endswith(("=", ",", "(", "return")):
        return None
    # Strip what may follow the parameter list: qualifiers, a trailing return type, a constructor's initializers.
    depth = 0
    close = -1
    for k in range(len(head) - 1, -1, -1):
        ch = head[k]
        if ch == ")":
            if depth == 0 and close < 0:
                close = k
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0 and close >= 0:
                before = head[:k].rstrip()
                tail = head[close + 1:]
                # A constructor's initializer list: "f(...) : a_(x), b_(y)": find the parameter list before " : ".
                if re.match(r"^\s*(const|noexcept|override|final|mutable|->|&|\s)*[^:]*$", tail) is None:
                    close = -1
                    depth = 0
                    continue
                if CONTROL.search(before) or not before:
                    return None
                m = re.search(r"([~\w:<>]+(?:operator\s*\S+)?)\s*$", before)
                if not m or before.endswith(("]", ">")) and "operator" not in before:
                    return None  # a lambda ([...](...) {) or a template argument
                return m.group(1)
    return None


def functions(text):
    """(name, first line, last line) of each function body at namespace or class level."""
    clean = blank_literals(text)
    # Preprocessor lines (#if __has_include(...), #define F(x) {...}) are no code here.
    clean = re.sub(r"(?m)^[ \t]*#.*$", lambda m: " " * len(m.group(0)), clean)
    found = []
    stack = []  # per open brace: ("fn", name, line) / ("scope", None, line) / ("block", ...)
    last_stop = 0
    line = 1
    for i, ch in enumerate(clean):
        if ch == "\n":
            line += 1
        elif ch == "{":
            inside_fn = any(kind == "fn" for kind, _, _ in stack)
            head = clean[last_stop:i]
            name = None if inside_fn else signature_name(head)
            if name:
                first = line - clean[last_stop:i].strip("\n ").count("\n") if head.strip() else line
                stack.append(("fn", name, first))
            else:
                stack.append(("scope" if not inside_fn else "block", None, line))
            last_stop = i + 1
        elif ch == "}":
            if stack:
                kind, name, first = stack.pop()
                if kind == "fn":
                    found.append((name, first, line))
            last_stop = i + 1
        elif ch == ";":
            last_stop = i + 1
    return found


def source_files(root, include_tests):
    for folder, dirs, names in os.walk(root):
        rel = os.path.relpath(folder, root)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not d.startswith("build")
                         and (include_tests or d not in SKIP_DIRS or rel != "."))
        for n in sorted(names):
            if n.endswith(SOURCE_EXT):
                yield os.path.join(folder, n)


FILE_LIMIT = 700
REASONS_DOC = "docs/architecture.md"
REASONS_HEADING = "Files over 700 lines, and why"


def component_src_files(root):
    """Paths (relative to root) of every file under a component's src/: a top-level folder with a CMakeLists.txt."""
    for component in sorted(os.listdir(root)):
        src = os.path.join(root, component, "src")
        if component.startswith((".", "build")) or component in SKIP_DIRS or not os.path.isdir(src):
            continue
        if not os.path.isfile(os.path.join(root, component, "CMakeLists.txt")):
            continue
        for folder, dirs, names in os.walk(src):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for n in sorted(names):
                yield os.path.relpath(os.path.join(folder, n), root)


def stated_reasons(root):
    """{path: reason} from the bullets `- `PATH`...: REASON` of the architecture page's section on long files."""
    try:
        with open(os.path.join(root, REASONS_DOC), encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return {}
    section = re.search(r"(?ms)^## " + re.escape(REASONS_HEADING) + r"[^\n]*\n(.*?)(?=^## |\Z)", text)
    reasons = {}
    for line in section.group(1).splitlines() if section else []:
        bullet = re.match(r"^\s*[-*]\s+`([^`]+)`[^:]*:\s*(\S.*)$", line)
        if bullet:
            reasons[bullet.group(1)] = bullet.group(2)
    return reasons


def line_count(path):
    with open(path, "rb") as f:
        data = f.read()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def long_files(root):
    """`FILE:LINE: what is wrong and the fix` for every file over the limit without a reason, and every stale reason."""
    reasons = stated_reasons(root)
    where = f'"{REASONS_HEADING}" in {REASONS_DOC}'
    problems = []
    seen = set()
    for path in component_src_files(root):
        seen.add(path)
        n = line_count(os.path.join(root, path))
        if n > FILE_LIMIT and path not in reasons:
            problems.append(f"{path}:{FILE_LIMIT + 1}: {n} lines, over {FILE_LIMIT}: split it along its jobs, "
                            f"or name it with its reason under {where} (a line `- `{path}`: why`)")
        elif n <= FILE_LIMIT and path in reasons:
            problems.append(f"{REASONS_DOC}: `{path}` is named under \"{REASONS_HEADING}\" but has {n} lines: "
                            f"take it off that list")
    for path in sorted(set(reasons) - seen):
        problems.append(f"{REASONS_DOC}: `{path}` is named under \"{REASONS_HEADING}\" but is no file in a "
                        f"component's src/: take it off that list or correct the path")
    return problems


def self_test():
    """A file over the limit fails until the architecture page names it with a reason; a stale name fails too."""
    cases = []
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "comp", "src"))
        os.makedirs(os.path.join(root, "docs"))
        open(os.path.join(root, "comp", "CMakeLists.txt"), "w").close()
        with open(os.path.join(root, "comp", "src", "big.cpp"), "w") as f:
            f.write("int x;\n" * (FILE_LIMIT + 1))
        with open(os.path.join(root, "comp", "src", "small.cpp"), "w") as f:
            f.write("int x;\n" * FILE_LIMIT)

        def doc(section_text):
            with open(os.path.join(root, REASONS_DOC), "w") as f:
                f.write(f"# Architecture\n\n## {REASONS_HEADING}\n{section_text}\n## Next\n- `comp/src/big.cpp`: x\n")

        doc("None.\n")
        cases.append(("a file over the limit with no reason", long_files(root), ["comp/src/big.cpp:701:"]))
        doc("- `comp/src/big.cpp` (701 lines):\n")
        cases.append(("a name with no reason", long_files(root), ["comp/src/big.cpp:701:"]))
        doc("- `comp/src/big.cpp` (701 lines): one table of rules, read top to bottom.\n")
        cases.append(("a file with its reason", long_files(root), []))
        doc("- `comp/src/big.cpp`: one table.\n- `comp/src/small.cpp`: no longer long.\n- `comp/src/gone.cpp`: x\n")
        cases.append(("stale names", long_files(root), [f"{REASONS_DOC}: `comp/src/small.cpp`",
                                                        f"{REASONS_DOC}: `comp/src/gone.cpp`"]))
    failures = 0
    for what, got, expected in cases:
        if len(got) != len(expected) or not all(g.startswith(e) for g, e in zip(sorted(got), sorted(expected))):
            print(f"self-test: {what}: got {got}, expected lines starting {expected}")
            failures += 1
    functions_found = [name for name, _, _ in functions("int f(int a) {\n  if (a) {\n  }\n  return \"}\";\n}\n")]
    if functions_found != ["f"]:
        print(f"self-test: one function with a brace in a string: got {functions_found}")
        failures += 1
    print(f"long_functions self-test: {len(cases) + 1} cases, {failures} failed")
    return 1 if failures else 0


def main():
    if "--self-test" in sys.argv[1:]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", nargs="?", default=".")
    ap.add_argument("--limit", type=int, default=120)
    ap.add_argument("--tests", action="store_true", help="include tests/ too")
    ap.add_argument("--check", action="store_true", help="exit 1 when a function is over the limit")
    a = ap.parse_args()
    long = []
    for path in source_files(a.root, a.tests):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name, first, last in functions(text):
            n = last - first + 1
            if n > a.limit:
                long.append((n, os.path.relpath(path, a.root), first, name))
    for n, path, first, name in sorted(long, reverse=True):
        print(f"{n:5d}  {path}:{first}  {name}")
    print(f"{len(long)} function(s) over {a.limit} lines", file=sys.stderr)
    files = long_files(a.root)
    for problem in files:
        print(problem)
    print(f"{len(files)} problem(s) with files over {FILE_LIMIT} lines", file=sys.stderr)
    return 1 if a.check and (long or files) else 0


if __name__ == "__main__":
    sys.exit(main())
