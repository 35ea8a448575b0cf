#!/usr/bin/env python3
"""The drift budget end to end with the real runner: the anchor's stored run leaves it undecided, and the gate
measures the head beside the anchor's commit, paired, which decides.

    python3 tests/gate/drift_e2e.py --rnx build/bin/rnx

A tiny repository: commit one holds a CPU kernel (tagged v1.0), commit two makes it do about 40% more work, commit
three touches a doc file. Commit one's run is stored as main's baseline (the anchor) as if measured on a machine
whose speed swung between its processes (the real run, each process's samples scaled by 0.25, 1 and 4): against
that run no comparison can decide a 5% budget. Commit three is then gated as a pull request, paired against
commit two (`rnx gate --mode paired`, embedded store, [gate] drift_budget = 0.05, anchor = "tag:v*").

Checks (decisions and fields only, never a timing): the gate measured paired at the anchor's commit; drift.json
says method "paired", decision "slower", the budget exceeded; the stored history blames nothing, so the commits
since the anchor (two and three) and the exact `rnx bisect` command are given, in drift.json, the verdict's reason
and report.md; the verdict is WARN (drift_action "warn"). With --results (a job that does not benchmark) the same
pull request stays undecided, method "stored".
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from scratch_repo import check, commit_files, git, init_repo  # noqa: E402  (tests/support/scratch_repo.py)

MANIFEST = """[project]
name = "drift-e2e"

[defaults]
runtimes = ["eager"]
dtypes = ["float32"]
batch = [1]
device = "cpu"

[bench]
threads = 1
processes = 3
max_processes = 4
budget_ms = 150
warmup_ms = 50

[[kernel]]
name = "mm"
path = "mm.py"
inputs = { a = "B,96,256", b = "256,256" }

[gate]
rope = 0.02
drift_budget = 0.05
anchor = "tag:v*"
"""

ONCE = "def run(a, b):\n    return a @ b\n"
# The same result, about 40% more work: a product over the first 96 of the 256 columns, thrown away.
MORE = "def run(a, b):\n    c = a @ b\n    (a[..., :96] @ b[:96]).sum()\n    return c\n"


def make_repo(repo):
    shas = [init_repo(repo, {"rnx.toml": MANIFEST, "mm.py": ONCE, ".gitignore": ".rnx/\n"}, "one: mm")]
    git(repo, "tag", "v1.0")
    shas.append(commit_files(repo, {"mm.py": MORE}, "two: mm does more work"))
    shas.append(commit_files(repo, {"NOTES.md": "notes\n"}, "three: notes"))
    return shas


def rnx(binary, args, repo, allowed=(0,)):
    p = subprocess.run([binary, *args], cwd=repo, capture_output=True, text=True, timeout=400)
    if p.returncode not in allowed:
        sys.exit("FAIL: rnx %s exited %d:\n%s\n%s" % (" ".join(args), p.returncode, p.stdout[-3000:],
                                                      p.stderr[-3000:]))
    return p


def store_swinging_anchor(binary, repo, sha, work):
    """Commit one measured for real, then stored as main's baseline with its processes' speeds swung apart."""
    git(repo, "checkout", "-q", sha)
    measured = os.path.join(work, "anchor-measured.json")
    rnx(binary, ["bench", "--config", "rnx.toml", "--out", measured], repo)
    run = json.load(open(measured))
    for result in run["results"]:
        groups = result.get("groups") or [len(result["samples_ms"])]
        scaled, start = [], 0
        for i, n in enumerate(groups):
            factor = (0.25, 1.0, 4.0)[i % 3]
            scaled += [x * factor for x in result["samples_ms"][start:start + n]]
            start += n
        result["samples_ms"] = scaled
    run.pop("pull_request", None)
    run.update({"branch": "main", "base_branch": "main", "commit": sha})
    swung = os.path.join(work, "anchor.json")
    with open(swung, "w") as f:
        json.dump(run, f)
    rnx(binary, ["gate", "--store", os.path.join(work, "store.db"), "--results", swung, "--branch", "main",
                 "--commit", sha, "--no-github", "--out-dir", os.path.join(work, "anchor-out")], repo)


def gate_pull_request(binary, repo, work, shas, out, extra):
    git(repo, "checkout", "-q", shas[2])
    p = rnx(binary, ["gate", "--store", os.path.join(work, "store.db"), "--mode", "paired", "--pair-ref", shas[1],
                     "--pull-request", "3", "--branch", "pr-3", "--base-branch", "main", "--commit", shas[2],
                     "--no-github", "--out-dir", out, *extra], repo, allowed=(0, 1))
    print(p.stdout)
    return p, json.load(open(os.path.join(out, "drift.json"))), json.load(open(os.path.join(out, "verdict.json")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rnx", required=True)
    binary = os.path.abspath(ap.parse_args().rnx)
    problems = []
    with tempfile.TemporaryDirectory(prefix="rnx-drift-e2e-") as work:
        repo = os.path.join(work, "repo")
        shas = make_repo(repo)
        store_swinging_anchor(binary, repo, shas[0], work)

        out = os.path.join(work, "pr")
        p, drift, verdict = gate_pull_request(binary, repo, work, shas, out, [])
        check("measuring the head beside the anchor's commit " + shas[0][:12] in p.stdout,
              "the gate did not say it measured paired at the anchor's commit", problems)
        check(drift["checked"] and drift["exceeded"], "drift not exceeded: %s" % drift.get("reason"), problems)
        check(drift["anchor_commit"] == shas[0], "anchor %s, wanted commit one" % drift["anchor_commit"], problems)
        config = drift["configs"][0] if drift["configs"] else {}
        check(config.get("method") == "paired", "method %s, wanted paired" % config.get("method"), problems)
        check(config.get("decision") == "slower", "decision %s, wanted slower" % config.get("decision"), problems)
        check(config.get("blamed_commits") == [], "the swinging stored history blamed %s" %
              config.get("blamed_commits"), problems)
        command = "rnx bisect %s %s --kernel mm --runtime eager --dtype float32 --batch 1" % (shas[0], shas[2])
        check(config.get("bisect_command") == command, "bisect command %r" % config.get("bisect_command"), problems)
        check(drift["commits_since_anchor"] == shas[1:], "commits since the anchor %s" %
              drift["commits_since_anchor"], problems)
        check(verdict["verdict"] in ("WARN", "BLOCK"), "verdict %s, wanted WARN" % verdict["verdict"], problems)
        check(verdict["verdict"] != "BLOCK" or any(c["decision"] == "slower" for c in verdict["configs"]),
              "BLOCK without a slower configuration of the pull request itself", problems)
        check(command in verdict["reason"], "the verdict's reason lacks the bisect command", problems)
        report = open(os.path.join(out, "report.md")).read()
        check("measured paired beside the anchor's commit" in report and "`" + command + "`" in report,
              "report.md lacks the method or the bisect command", problems)

        # The same pull request from prepared files: this job does not benchmark, the stored comparison stands.
        prepared = os.path.join(work, "pr-results")
        _, drift2, _ = gate_pull_request(binary, repo, work, shas, prepared,
                                         ["--results", os.path.join(out, "run.json"), "--base-results",
                                          os.path.join(out, "base-run.json")])
        config2 = drift2["configs"][0] if drift2["configs"] else {}
        check(config2.get("method") == "stored" and config2.get("decision") == "abstain",
              "with --results: %s %s, wanted stored abstain" % (config2.get("method"), config2.get("decision")),
              problems)
        check(not drift2["exceeded"], "with --results the budget was flagged: %s" % drift2["reason"], problems)
    if problems:
        sys.exit("FAIL:\n  " + "\n  ".join(problems))
    print("PASS")


if __name__ == "__main__":
    main()
