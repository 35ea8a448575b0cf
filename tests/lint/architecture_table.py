#!/usr/bin/env python3
"""docs/architecture.md's table of components says what CMake links: one row per component folder, and each row's
"depends on" exactly what the folder's targets link.

    python3 tests/lint/architecture_table.py ROOT
    python3 tests/lint/architecture_table.py --self-test   # each rule catches a break
                                                          # (ctest lint.architecture_table.self_test)

A component is a top-level folder with a CMakeLists.txt and a src/ folder. The table is the first Markdown table
under "## Components", with columns "folder" and "depends on". A "depends on" cell is a list of names separated by
`,` or `;`, each a component folder (`common`) or one of the external names below, optionally followed by a note in
parentheses (free text, not checked; backticks are ignored).

What a folder depends on is read from every target_link_libraries() in its CMakeLists.txt (libraries and
executables, PUBLIC, PRIVATE and INTERFACE, inside any if(): the union of what any configuration links):
* an rnx target (`rnx::x` or `rnx_x`, `rnx-x`) defined by add_library/add_executable in another component folder
  is a dependency on that folder; one in the same folder is not a dependency;
* an external link item is named by EXTERNAL below (OpenSSL::SSL and OpenSSL::Crypto are both "OpenSSL",
  ${TORCH_LIBRARIES} is "libtorch", rnx_third_party is "toml++ and CLI11"); IGNORED items (warning flags, the C
  library's threads and dlopen) are no dependency. A link item in neither list fails the lint, so a new library
  cannot be linked without this table and the documentation naming it.
Only direct links count: a dependency reached through another component is not listed.

Fails, naming the component, the difference and the fix, when:
* a component folder has no row, or a row names no component folder;
* a row lists a component or external library its CMakeLists.txt does not link, or misses one it links;
* a row names something that is neither a component folder nor an external name;
* a row depends on a component listed below it (a component depends only on those above it).

Exit 1 with one line per problem, 0 when there is none.
"""
import os
import re
import sys

TABLE_FILE = "docs/architecture.md"
SECTION = "## Components"
SELF = "tests/lint/architecture_table.py"

# CMake link item -> the name the table uses for it.
EXTERNAL = {
    "Boost::headers": "Boost headers",
    "OpenSSL::SSL": "OpenSSL",
    "OpenSSL::Crypto": "OpenSSL",
    "Eigen3::Eigen": "Eigen",
    "SQLite::SQLite3": "SQLite",
    "rnx_third_party": "toml++ and CLI11",
    "${TORCH_LIBRARIES}": "libtorch",
    "${RNX_TORCH_PYTHON_LIBRARY}": "libtorch",
    "Python3::Python": "CPython",
}
# Link items that are no dependency worth a row's words: compile warnings, and libc's threads and dlopen.
IGNORED = {"rnx_warnings", "Threads::Threads", "${CMAKE_DL_LIBS}"}
KEYWORDS = {"PUBLIC", "PRIVATE", "INTERFACE", "LINK_PUBLIC", "LINK_PRIVATE", "LINK_INTERFACE_LIBRARIES"}


def cmake_code(text):
    """The CMake text without # comments (no quoted # in the calls this reads)."""
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def defined_targets(text):
    """Every target name (and alias) add_library/add_executable defines in this CMake text."""
    return set(re.findall(r"\badd_(?:library|executable)\s*\(\s*([^\s)]+)", cmake_code(text)))


def link_items(text):
    """Every item named in target_link_libraries() calls (the target linked to is not an item)."""
    items = []
    for args in re.findall(r"\btarget_link_libraries\s*\(([^)]*)\)", cmake_code(text)):
        items += [word for word in args.split()[1:] if word not in KEYWORDS]
    return items


def cmake_dependencies(cmake_texts):
    """{folder: (rnx folders it links, external names it links)}, and the problems met reading the links.

    cmake_texts is {folder: its CMakeLists.txt text} for every component folder."""
    owner = {}
    for folder, text in cmake_texts.items():
        for target in defined_targets(text):
            owner[target] = folder
    deps, problems = {}, []
    for folder, text in cmake_texts.items():
        components, external = set(), set()
        for item in link_items(text):
            if item in IGNORED:
                continue
            if item in EXTERNAL:
                external.add(EXTERNAL[item])
            elif item in owner:
                if owner[item] != folder:
                    components.add(owner[item])
            else:
                problems.append(f"{folder}/CMakeLists.txt links {item}, which is no component's target and not "
                                f"in EXTERNAL or IGNORED of {SELF}: add it there with the name "
                                f"{TABLE_FILE}'s table gives it")
        deps[folder] = (components, external)
    return deps, problems


def table_cells(line):
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def table_rows(markdown):
    """[(folder, depends-on cell)] of the first table under "## Components", in the table's order."""
    lines = markdown.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == SECTION)
    except StopIteration:
        raise ValueError(f'{TABLE_FILE} has no "{SECTION}" section; the table of components belongs there')
    rows, header = [], None
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if not line.lstrip().startswith("|"):
            if header:
                break
            continue
        cells = table_cells(line)
        if header is None:
            header = [cell.lower() for cell in cells]
            if "folder" not in header or "depends on" not in header:
                raise ValueError(f'{TABLE_FILE}: the table under "{SECTION}" needs columns "folder" and "depends on"')
        elif not all(set(cell) <= set("-: ") for cell in cells):
            row = dict(zip(header, cells))
            rows.append((row["folder"].strip("`").rstrip("/"), row["depends on"]))
    if header is None:
        raise ValueError(f'{TABLE_FILE} has no table under "{SECTION}"')
    return rows


def listed_names(cell):
    """The names a "depends on" cell lists, notes in parentheses and backticks dropped."""
    text = re.sub(r"\([^)]*\)", "", cell.replace("`", ""))
    return [name.strip() for name in re.split(r"[,;]", text) if name.strip()]


def differences(rows, deps):
    """One line per way the table and the CMake links disagree."""
    problems = []
    order = [folder for folder, _ in rows]
    externals = set(EXTERNAL.values())
    for folder in sorted(set(deps) - set(order)):
        problems.append(f"{folder}/: a component folder with no row in {TABLE_FILE}'s table; add a row "
                        f"`{folder}/` below what it depends on")
    for folder, cell in rows:
        if folder not in deps:
            problems.append(f"{folder}: the row names no component folder (a top-level folder with CMakeLists.txt "
                            f"and src/); fix the folder's name or remove the row")
            continue
        components, external = deps[folder]
        listed_components, listed_external = set(), set()
        for name in listed_names(cell):
            if name in deps:
                listed_components.add(name)
            elif name in externals:
                listed_external.add(name)
            else:
                problems.append(f"{folder}: the row depends on \"{name}\", which is neither a component folder nor "
                                f"one of {', '.join(sorted(externals))}; name what CMake links")
        for name in sorted(components - listed_components) + sorted(external - listed_external):
            problems.append(f"{folder}: {folder}/CMakeLists.txt links {name}, which the row does not list; add "
                            f"{name} to its \"depends on\"")
        for name in sorted(listed_components - components) + sorted(listed_external - external):
            problems.append(f"{folder}: the row depends on {name}, which {folder}/CMakeLists.txt does not link; "
                            f"remove {name} from its \"depends on\"")
        for name in sorted(listed_components):
            if name in order and order.index(name) > order.index(folder):
                problems.append(f"{folder}: depends on {name}, listed below it; a component depends only on those above it, "
                                f"so move {name}'s row above {folder}'s")
    return problems


def check(markdown, cmake_texts):
    """All problems of the table in `markdown` against the component folders' CMake texts."""
    try:
        rows = table_rows(markdown)
    except ValueError as e:
        return [str(e)]
    deps, problems = cmake_dependencies(cmake_texts)
    return problems + differences(rows, deps)


SELF_CMAKE = {
    "common": "add_library(rnx_common STATIC a.cpp)\nadd_library(rnx::common ALIAS rnx_common)\n"
              "target_link_libraries(rnx_common PUBLIC Boost::headers PRIVATE OpenSSL::Crypto rnx_warnings)\n",
    "stats": "add_library(rnx_stats STATIC a.cpp)  # the statistics\nadd_library(rnx::stats ALIAS rnx_stats)\n"
             "target_link_libraries(rnx_stats PUBLIC rnx::common\n  PRIVATE Eigen3::Eigen)\n",
    "gate": "add_executable(rnx main.cpp)\nadd_library(rnx_gate STATIC g.cpp)\n"
            "target_link_libraries(rnx PRIVATE rnx_gate rnx::stats)\n"
            "if(RNX_WITH_TORCH)\n  target_link_libraries(rnx_gate PUBLIC rnx::common)\nendif()\n",
}
SELF_HEAD = "# A\n\n## Components\n\nText.\n\n| folder | depends on |\n| --- | --- |\n"
SELF_ROWS = {
    "common": "| `common/` | Boost headers, OpenSSL |\n",
    "stats": "| `stats/` | common, Eigen |\n",
    "gate": "| `gate/` | common; stats (`rnx` only) |\n",
}


def self_doc(rows=("common", "stats", "gate"), **replaced):
    return SELF_HEAD + "".join(replaced.get(row, SELF_ROWS[row]) for row in rows) + "\n## Next\n\n| a | b |\n"


# (what it shows, table, CMake texts, problems expected)
SELF_TESTS = [
    ("the table and the links agree", self_doc(), SELF_CMAKE, 0),
    ("a component folder without a row", self_doc(rows=("common", "stats")), SELF_CMAKE, 1),
    ("a row that names no folder", self_doc(), {k: v for k, v in SELF_CMAKE.items() if k != "gate"}, 1),
    ("a row with a dependency CMake does not link", self_doc(stats="| `stats/` | common, Eigen, gate |\n"),
     SELF_CMAKE, 2),  # not linked, and listed below stats
    ("a row missing a component CMake links", self_doc(gate="| `gate/` | common |\n"), SELF_CMAKE, 1),
    ("a row missing an external library CMake links", self_doc(common="| `common/` | Boost headers |\n"),
     SELF_CMAKE, 1),
    ("an external library CMake does not link", self_doc(stats="| `stats/` | common, Eigen, SQLite |\n"),
     SELF_CMAKE, 1),
    ("a name that is neither a folder nor an external library",
     self_doc(common="| `common/` | Boost headers, OpenSSL, zlib |\n"), SELF_CMAKE, 1),
    ("a dependency on a row below", self_doc(rows=("stats", "common", "gate")), SELF_CMAKE, 1),
    ("a link item no list names", self_doc(),
     dict(SELF_CMAKE, common=SELF_CMAKE["common"] + "target_link_libraries(rnx_common PRIVATE ZLIB::ZLIB)\n"), 1),
    ("no table under the section", "# A\n\n## Components\n\nNone.\n", SELF_CMAKE, 1),
]


def self_test():
    failures = 0
    for name, markdown, cmake_texts, expected in SELF_TESTS:
        got = check(markdown, cmake_texts)
        if len(got) != expected:
            print(f"self-test: {name}: {len(got)} problem(s), expected {expected}:" +
                  "".join(f"\n  {line}" for line in got))
            failures += 1
    print(f"architecture_table self-test: {len(SELF_TESTS)} cases, {failures} failed")
    return 1 if failures else 0


def component_cmake_texts(root):
    texts = {}
    for folder in sorted(os.listdir(root)):
        cmake = os.path.join(root, folder, "CMakeLists.txt")
        if os.path.isfile(cmake) and os.path.isdir(os.path.join(root, folder, "src")):
            with open(cmake, encoding="utf-8") as f:
                texts[folder] = f.read()
    return texts


def main():
    if "--self-test" in sys.argv[1:]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    with open(os.path.join(root, TABLE_FILE), encoding="utf-8") as f:
        markdown = f.read()
    cmake_texts = component_cmake_texts(root)
    problems = check(markdown, cmake_texts)
    for line in problems:
        print(f"{TABLE_FILE}: {line}")
    print(f"architecture_table: {len(cmake_texts)} components, {len(problems)} "
          f"problem{'s' if len(problems) != 1 else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
