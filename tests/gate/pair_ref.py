#!/usr/bin/env python3
"""`rnx bench --pair REF` passes REF to git as one argument, never through a shell: refs holding quotes, `$(...)`,
backticks or a leading '-' are refused with exit 2 and a message naming the ref, and nothing they spell runs.

    python3 tests/gate/pair_ref.py --rnx build/bin/rnx
"""
import argparse
import os
import subprocess
import sys
import tempfile

MANIFEST = """[project]
name = "pair-ref"

[defaults]
runtimes = ["eager"]
dtypes = ["float32"]
batch = [1]
device = "cpu"

[[kernel]]
name = "add"
path = "add.py"
inputs = { x = "B,8" }
"""


def git(repo, *args):
    subprocess.run(["git", "-C", repo, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rnx", required=True)
    a = ap.parse_args()
    a.rnx = os.path.abspath(a.rnx)
    problems = []
    with tempfile.TemporaryDirectory(prefix="rnx-pair-ref-") as work:
        repo = os.path.join(work, "repo")
        os.makedirs(repo)
        with open(os.path.join(repo, "rnx.toml"), "w") as f:
            f.write(MANIFEST)
        with open(os.path.join(repo, "add.py"), "w") as f:
            f.write("def run(x):\n    return x + 1\n")
        git(repo, "init", "-q", "-b", "main")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "add", "-A")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "k")
        marker = os.path.join(work, "ran")
        refs = [f"x'$(touch {marker}1)'", f"$(touch {marker}2)", f"`touch {marker}3`", f"main;touch {marker}4",
                f"--upload-pack=touch {marker}5"]
        for ref in refs:
            p = subprocess.run([a.rnx, "bench", "--config", os.path.join(repo, "rnx.toml"), "--pair", ref,
                                "--out", os.path.join(work, "h.json"), "--base-out", os.path.join(work, "b.json"),
                                "--quiet"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=120)
            if p.returncode != 2 or "--pair" not in p.stdout or ref not in p.stdout:
                problems.append(f"--pair {ref!r}: exit {p.returncode}, {p.stdout[-300:]!r}")
        ran = [n for n in os.listdir(work) if n.startswith("ran")]
        if ran:
            problems.append(f"a shell ran what a ref spelled: {ran}")
        if os.path.exists(os.path.join(work, "h.json")):
            problems.append("a run document was written for a refused ref")
    if problems:
        sys.exit("FAIL: " + "; ".join(problems))
    print(f"ok: {len(refs)} hostile refs refused with exit 2, nothing they spell ran")


if __name__ == "__main__":
    main()
