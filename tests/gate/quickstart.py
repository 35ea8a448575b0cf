#!/usr/bin/env python3
"""docs/quickstart.md, literally: its marked code blocks run in order in a fresh folder with the built rnx.

A block is run when the line before its ```sh fence is a marker
    <!-- quickstart-test exit=N expect="TEXT" expect="TEXT" ... -->
(exit defaults to 0; each expect must appear in the block's stdout or stderr, with \\" for a quote). Each block
runs in `bash -eo pipefail` in the same folder, with the rnx build folder first on PATH, no GITHUB_*/RNX_*
variables (a developer's machine, not CI) and a fixed git identity. Afterwards the files the page promises are
checked: rnx.toml, the workflow, the .gitignore line, the embedded store.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

MARKER = re.compile(r"^<!-- quickstart-test(?P<attrs>.*)-->\s*$")
ATTR = re.compile(r'(\w+)=(?:"((?:[^"\\]|\\.)*)"|(\S+))')


def blocks_of(page):
    """[(line number, exit code, [expected texts], script)] of the marked blocks, in order."""
    lines = open(page, encoding="utf-8").read().splitlines()
    out = []
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if not m:
            i += 1
            continue
        expect_exit, expects = 0, []
        for name, quoted, bare in ATTR.findall(m.group("attrs")):
            value = bare if bare else quoted.replace('\\"', '"')
            if name == "exit":
                expect_exit = int(value)
            elif name == "expect":
                expects.append(value)
            else:
                raise SystemExit("%s:%d: unknown marker attribute %s" % (page, i + 1, name))
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```sh"):
            raise SystemExit("%s:%d: a quickstart-test marker must stand right above a ```sh block" % (page, i + 1))
        end = i + 2
        while end < len(lines) and lines[end] != "```":
            end += 1
        if end == len(lines):
            raise SystemExit("%s:%d: the block is not closed" % (page, i + 2))
        out.append((i + 2, expect_exit, expects, "\n".join(lines[i + 2:end]) + "\n"))
        i = end + 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="the folder holding rnx and rnx-runner-worker")
    ap.add_argument("--page", required=True, help="docs/quickstart.md")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder")
    ap.add_argument("--load", type=int, default=2,
                    help="CPU-bound processes kept running beside the quick start (the page promises its verdicts on "
                         "a busy machine; default 2, as two builds would)")
    args = ap.parse_args()
    # Each burner ends by itself after ctest's timeout for this test, should this process be killed before it.
    burn = "import time\nend = time.time() + 600\nwhile time.time() < end:\n    pass\n"
    burners = [subprocess.Popen([sys.executable, "-c", burn]) for _ in range(args.load)]
    try:
        return run_page(args)
    finally:
        for b in burners:
            b.kill()
            b.wait()


def run_page(args):
    blocks = blocks_of(args.page)
    if len(blocks) < 6:
        print("FAIL: only %d marked blocks in %s; the quick start has at least 6" % (len(blocks), args.page))
        return 1
    work = tempfile.mkdtemp(prefix="rnx-quickstart-")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "RNX_"))}
    env.update(PATH=os.path.abspath(args.bin) + os.pathsep + env.get("PATH", ""), GIT_AUTHOR_NAME="Ada",
               GIT_AUTHOR_EMAIL="ada@example.com", GIT_COMMITTER_NAME="Ada", GIT_COMMITTER_EMAIL="ada@example.com",
               GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    started = time.time()
    failed = None
    for line, expect_exit, expects, script in blocks:
        t0 = time.time()
        r = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=work, env=env, capture_output=True,
                           text=True, timeout=300)
        output = r.stdout + r.stderr
        missing = [e for e in expects if e not in output]
        status = "ok  " if r.returncode == expect_exit and not missing else "FAIL"
        print("%s block at line %d: exit %d (expected %d), %.1f s" % (status, line, r.returncode, expect_exit,
                                                                      time.time() - t0), flush=True)
        if status == "FAIL":
            failed = "%s:%d: %s\n--- script\n%s--- output\n%s" % (
                args.page, line, "missing %r" % missing if missing else "exit %d" % r.returncode, script, output)
            break
    if not failed:
        checks = [
            ("rnx.toml", lambda: "[[kernel]]" in open(os.path.join(work, "rnx.toml")).read()),
            (".github/workflows/rnx.yml",
             lambda: "rnx-dev/rnx@" in open(os.path.join(work, ".github", "workflows", "rnx.yml")).read()),
            (".gitignore has .rnx/", lambda: ".rnx/" in open(os.path.join(work, ".gitignore")).read().split()),
            (".rnx/baselines.db", lambda: os.path.getsize(os.path.join(work, ".rnx", "baselines.db")) > 0),
            ("git ignores .rnx/", lambda: subprocess.run(["git", "status", "--porcelain", "--ignored", ".rnx"], cwd=work,
                                                         env=env, capture_output=True, text=True).stdout.startswith("!!")),
        ]
        for what, check in checks:
            try:
                ok = check()
            except OSError as e:
                ok, what = False, "%s (%s)" % (what, e)
            if not ok:
                failed = "after the quick start: %s does not hold in %s" % (what, work)
                break
    print("%d blocks, %.1f s, %d CPU-bound processes beside them, load average %.1f (1 min) on %d cores" % (
        len(blocks), time.time() - started, args.load, os.getloadavg()[0], os.cpu_count()))
    if failed:
        print("FAIL " + failed)
        print("(folder kept: %s)" % work)
        return 1
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
