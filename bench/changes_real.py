#!/usr/bin/env python3
"""A real 3% step on main, found by the change-point detector of the embedded store: the runner, the store and the
detector end to end, on the machine this runs on.

    python3 bench/changes_real.py [--rnx build-gpu/bin/rnx] [--device cuda] [--size 2048] [--flat 12] [--after 4]
                                  [--out bench/results/changes_real_gpu.json]

A throwaway git repository holds tests/device/kernels/chain.py (REPS dependent products of SIZE x SIZE matrices,
batch SIZE, eager float32) and an rnx.toml with no [bench] table: default settings. Main gets `flat` commits that
touch docs only, then one that raises REPS from 33 to 34 (3.03% more work), then `after` doc commits. Every commit
is benchmarked and stored as a push run of main, as the push job of a workflow does (`rnx gate --store FILE
--branch main --commit SHA --no-github`), and after each, `rnx changes --store FILE --format json` lists the change
points stored so far. Printed and written: each run's statistic, the change points as they appeared, the run at
which the step was announced (1 = on the step's own run) and any other change point (a false one). On this
2-core machine pass `--device cpu --size 256` (a smaller chain) to try the script itself.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench", "gpu_probe"))
import between_runs  # noqa: E402  (bench/gpu_probe/between_runs.py: a stored run's statistic, as the detector sees it)
KERNEL = os.path.join(ROOT, "tests", "device", "kernels", "chain.py")

MANIFEST = """[project]
name = "changes-real"

[defaults]
runtimes = ["eager"]
dtypes   = ["float32"]
batch    = [{size}]
device   = "{device}"

[[kernel]]
name   = "chain"
path   = "kernels/chain.py"
inputs = {{ x = "B,{size}", w = "{size},{size}" }}
"""


def run(args, cwd, check=True):
    r = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if check and r.returncode != 0:
        sys.exit(f"changes_real: {' '.join(args)} failed (exit {r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r


def git(repo, *args):
    return run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args], repo).stdout.strip()


def make_repo(repo, args):
    """The commits of main, oldest first: [(sha, kind)], kind "doc" or "step"."""
    os.makedirs(os.path.join(repo, "kernels"))
    os.makedirs(os.path.join(repo, "docs"))
    source = open(KERNEL).read()
    if not re.search(r"^REPS = 33$", source, re.M):
        sys.exit(f"changes_real: {KERNEL} no longer has the line 'REPS = 33' this script raises to 34")
    with open(os.path.join(repo, "kernels", "chain.py"), "w") as f:
        f.write(source)
    with open(os.path.join(repo, "rnx.toml"), "w") as f:
        f.write(MANIFEST.format(size=args.size, device=args.device))
    with open(os.path.join(repo, "docs", "notes.md"), "w") as f:
        f.write("# Notes\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "commit 1: the chain of 33 products")
    commits = [(git(repo, "rev-parse", "HEAD"), "doc")]
    plan = ["doc"] * (args.flat - 1) + ["step"] + ["doc"] * args.after
    for i, kind in enumerate(plan, start=2):
        if kind == "step":
            with open(os.path.join(repo, "kernels", "chain.py"), "w") as f:
                f.write(re.sub(r"^REPS = 33$", "REPS = 34", source, flags=re.M))
            subject = f"commit {i}: 34 products instead of 33 (3.03% more work)"
        else:
            with open(os.path.join(repo, "docs", "notes.md"), "a") as f:
                f.write(f"\nNote {i}.\n")
            subject = f"commit {i}: docs"
        git(repo, "commit", "-qam", subject)
        commits.append((git(repo, "rev-parse", "HEAD"), kind))
    return commits


def statistic_ms(run_json):
    """The run statistic the detector reads (between_runs.summarize) in ms, and the processes it rests on."""
    log_stat, _, processes = between_runs.summarize(json.load(open(run_json))["results"][0])
    return math.exp(log_stat), processes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rnx", default=os.path.join(ROOT, "build-gpu/bin/rnx"))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--flat", type=int, default=12, help="doc-only commits before the step (the first included)")
    ap.add_argument("--after", type=int, default=4, help="doc-only commits after the step")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/results/changes_real_gpu.json"))
    args = ap.parse_args()
    args.rnx = os.path.abspath(args.rnx)
    if not os.access(args.rnx, os.X_OK):
        sys.exit(f"changes_real: {args.rnx} is not built")
    rows, seen = [], set()
    with tempfile.TemporaryDirectory() as repo:
        commits = make_repo(repo, args)
        step_sha = next(sha for sha, kind in commits if kind == "step")
        store = os.path.join(repo, ".rnx", "baselines.db")
        for n, (sha, kind) in enumerate(commits, start=1):
            git(repo, "checkout", "-q", sha)
            out_dir = os.path.join(repo, ".rnx", f"run{n}")
            started = time.monotonic()
            run([args.rnx, "gate", "--store", store, "--branch", "main", "--commit", sha, "--no-github",
                 "--out-dir", out_dir], repo)
            seconds = time.monotonic() - started
            stat, processes = statistic_ms(os.path.join(out_dir, "run.json"))
            listed = json.loads(run([args.rnx, "changes", "--store", store, "--format", "json"], repo).stdout)
            new = [c for c in listed["changes"] if c["id"] not in seen]
            seen.update(c["id"] for c in new)
            rows.append({"run": n, "kind": kind, "commit": sha, "statistic_ms": stat, "processes": processes,
                         "seconds": round(seconds, 1),
                         "new_changes": [{"commit": c["commit"], "direction": c["direction"], "ratio": c["ratio"],
                                          "ci95": c["ci95"], "probability": c["probability"],
                                          "is_the_step": c["commit"] == step_sha} for c in new]})
            said = "; ".join(f"{c['direction']} x{c['ratio']:.4f} [{c['ci95'][0]:.4f}, {c['ci95'][1]:.4f}] "
                             f"P={c['probability']:.3f} at {'the step' if c['commit'] == step_sha else c['commit'][:7]}"
                             for c in new) or "-"
            print(f"run {n:2d} {kind:4s} {stat:.4f} ms ({processes} processes, {seconds:.0f} s)  new change points: "
                  f"{said}", flush=True)
    step_run = next(r["run"] for r in rows if r["kind"] == "step")
    announced = next((r["run"] for r in rows for c in r["new_changes"] if c["is_the_step"] and
                      c["direction"] == "slower"), None)
    false = sum(1 for r in rows for c in r["new_changes"] if not (c["is_the_step"] and c["direction"] == "slower"))
    delay = None if announced is None else announced - step_run + 1
    print(f"\nstep at run {step_run}: announced "
          f"{'never' if delay is None else f'at run {announced}, run {delay} on the new level'}; "
          f"other change points: {false}")
    with open(args.out, "w") as f:
        json.dump({"command": " ".join(["python3", "bench/changes_real.py"] + sys.argv[1:]), "device": args.device,
                   "size": args.size, "step_run": step_run, "announced_run": announced, "delay_runs": delay,
                   "false_change_points": false, "rows": rows}, f, indent=1)
    sys.exit(0 if delay is not None and delay <= 3 and false == 0 else 1)


if __name__ == "__main__":
    main()
