#!/usr/bin/env python3
"""`rnx bisect` end to end on a tiny repository: a CPU kernel whose third commit doubles its work among doc commits.

    python3 tests/gate/bisect_e2e.py --rnx build/bin/rnx

Checks: the doubling commit is the one culprit, with its size and a repro command; bisect.json is written; a second
bisect reuses the paired runs of the first and measures nothing; --comment and --issue post the findings to the
local fake GitHub API (tests/gate/fake_github.py), Markdown-escaped; bad revisions exit 2 naming them.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from scratch_repo import check, commit_files, git, init_repo  # noqa: E402  (tests/support/scratch_repo.py)

HERE = os.path.dirname(os.path.abspath(__file__))

MANIFEST = """[project]
name = "bisect-e2e"

[defaults]
runtimes = ["eager"]
dtypes = ["float32"]
batch = [1]
device = "cpu"

[bench]
threads = 1
processes = 2
max_processes = 2
budget_ms = 150
warmup_ms = 50

[[kernel]]
name = "mm"
path = "mm.py"
inputs = { a = "B,96,96", b = "96,96" }
"""

ONCE = "def run(a, b):\n    return a @ b\n"
# The same result, twice the work: the second product is thrown away.
TWICE = "def run(a, b):\n    c = a @ b\n    (a @ b).sum()\n    return c\n"


def make_repo(repo):
    shas = [init_repo(repo, {"rnx.toml": MANIFEST, "mm.py": ONCE}, "one: mm")]
    for i, change in enumerate(["doc", "slow", "doc"], start=2):
        if change == "slow":
            shas.append(commit_files(repo, {"mm.py": TWICE}, "three: mm does its product twice <b>*bold*</b>"))
        else:
            shas.append(commit_files(repo, {"NOTES.md": "note %d\n" % i}, "commit %d: notes" % i, append=True))
    return shas


def start_github(work):
    port_file = os.path.join(work, "github.port")
    state = os.path.join(work, "github.state.json")
    setup = os.path.join(work, "github.setup.json")
    with open(setup, "w") as f:
        json.dump({"token": "t0k3n"}, f)
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_github.py"), "--repo", "octo/kernels",
                             "--setup", setup, "--log", os.path.join(work, "github.log"), "--port-file", port_file,
                             "--state-out", state, "--max-seconds", "240"])
    deadline = time.time() + 20
    while not os.path.exists(port_file):
        if time.time() > deadline:
            proc.kill()
            sys.exit("FAIL: the fake GitHub API did not start")
        time.sleep(0.05)
    return proc, "http://127.0.0.1:" + open(port_file).read().strip(), state


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rnx", required=True)
    a = ap.parse_args()
    rnx = os.path.abspath(a.rnx)
    problems = []
    with tempfile.TemporaryDirectory(prefix="rnx-bisect-e2e-") as work:
        repo = os.path.join(work, "repo")
        shas = make_repo(repo)
        github, url, state = start_github(work)
        env = dict(os.environ, GITHUB_API_URL=url, GITHUB_REPOSITORY="octo/kernels", GITHUB_TOKEN="t0k3n")
        try:
            args = [rnx, "bisect", shas[0], "main", "--threshold", "0.1", "--out-dir", os.path.join(work, "out")]
            p = subprocess.run(args + ["--comment", "7", "--issue"], cwd=repo, capture_output=True, text=True,
                               timeout=150, env=env)
            check(p.returncode == 0, "rnx bisect exited %d: %s %s" % (p.returncode, p.stdout[-2000:], p.stderr[-2000:]),
                  problems)
            print(p.stdout)
            found = json.load(open(os.path.join(work, "out", "bisect.json")))
            named = [c["commit"] for c in found["culprits"]]
            check(named == [shas[2]], "culprits %s, expected only %s (commit three)" % (named, shas[2]), problems)
            if named:
                c = found["culprits"][0]
                check(c["ratio"] > 1.3, "the culprit's size is x%.3f, expected about x2" % c["ratio"], problems)
                check(c["parent"] == shas[1], "the culprit's parent is %s" % c["parent"], problems)
                check(("--pair " + shas[1]) in c["repro"], "the repro command does not pair with the parent: " +
                      c["repro"], problems)
            check(found["paired_runs"] >= 2 and found["reused_runs"] == 0,
                  "first bisect: %d paired, %d reused" % (found["paired_runs"], found["reused_runs"]), problems)
            check("repro (in a checkout of %s)" % shas[2][:12] in p.stdout, "no repro line printed", problems)

            again = subprocess.run(args, cwd=repo, capture_output=True, text=True, timeout=60)
            second = json.load(open(os.path.join(work, "out", "bisect.json")))
            check(again.returncode == 0 and second["paired_runs"] == 0
                  and second["reused_runs"] == found["paired_runs"],
                  "second bisect: exit %d, %d paired, %d reused" % (again.returncode, second["paired_runs"],
                                                                   second["reused_runs"]), problems)
            check([c["commit"] for c in second["culprits"]] == named, "the second bisect named others", problems)

            for bad, words in [(["nosuchrev", "main"], "nosuchrev"), (["main", shas[0]], "not an ancestor")]:
                q = subprocess.run([rnx, "bisect", *bad, "--out-dir", os.path.join(work, "bad")], cwd=repo,
                                   capture_output=True, text=True, timeout=60)
                check(q.returncode == 2 and words in q.stderr, "rnx bisect %s: exit %d %s" % (bad, q.returncode,
                                                                                             q.stderr[-400:]), problems)
        finally:
            github.send_signal(signal.SIGINT)  # it writes --state-out on the way out
            github.wait(timeout=20)
        posted = json.load(open(state))
        comments = [c for c in posted["comments"] if c["issue"] == 7]
        check(len(comments) == 1, "%d comments on #7, expected 1" % len(comments), problems)
        check(len(posted["issues"]) == 1, "%d issues opened, expected 1" % len(posted["issues"]), problems)
        for body in [c["body"] for c in comments] + [i["body"] for i in posted["issues"]]:
            check(shas[2][:12] in body, "a posted body does not name the culprit", problems)
            check("<b>" not in body, "a commit subject reached GitHub unescaped", problems)
        if posted["issues"]:
            check(shas[2][:12] in posted["issues"][0]["title"], "the issue title does not name the culprit", problems)
    if problems:
        sys.exit("FAIL: " + "; ".join(problems))
    print("ok: the doubling commit named alone, reused on a second bisect, posted as a comment and an issue")


if __name__ == "__main__":
    main()
