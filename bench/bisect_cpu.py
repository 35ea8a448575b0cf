#!/usr/bin/env python3
"""Slow creep and a single culprit on a real CPU kernel: the drift budget and `rnx bisect`, end to end.

    python3 bench/bisect_cpu.py creep   [--rnx build/bin/rnx] [--out bench/results/drift_creep_cpu.json]
    python3 bench/bisect_cpu.py culprit [--rnx build/bin/rnx] [--out bench/results/bisect_culprit_cpu.json]
    python3 bench/bisect_cpu.py calibrate                      # only the true ratios of the slowed variants

A throwaway git repository holds one corpus kernel (bench/corpus/kernels/, gemm_fp32 at batch 1 by default) and
an rnx.toml. Slowed commits rewrite the kernel with bench/corpus/slowdown.py's calibrated wrapper (each call
busy-waits a fixed fraction of its own time), cumulative: after k slowing commits the fraction is
(1 + STEP)^k - 1, so every slowing commit costs STEP against its parent; commit 1 carries the wrapper at a
negligible fraction, so its own cost (a Python call and two clock reads) is in every commit, not in the first
slowing one. Doc commits change docs/notes.md only.

creep: main starts at a commit tagged v1.0 (the drift anchor), then gets 8 commits, 5 slowing by 1.5% and 3 doc
commits. Each commit is a pull request gated paired against its parent (`rnx gate --mode paired`, +-2% band,
[gate] drift_budget = 0.05, anchor = "tag:v*", embedded store), then merged: its head run is stored as main's
baseline (`rnx gate --results`, a push). The script records each verdict, whether the drift budget flagged it, how
(method "stored": against v1.0's stored run; "paired": v1.0's commit measured beside the head in the pull request's
job, when the stored run left it undecided) and which commits it named; then it runs the `rnx bisect` command the
first flagged pull request's drift.json gives (v1.0 .. that head; v1.0 .. main when none is given), which must name
the slowing commits of that range and no doc commit.

culprit: 16 commits, commit 11 slows the kernel by 8%, the others touch docs; `rnx bisect` from commit 1 to 16
must name commit 11 in at most 5 paired runs.

calibrate (also the first stage of the others): the true ratio of each slowed variant against the original,
measured side by side in this process (original and variant called alternately, median of per-pair ratios).

Prints tables and writes JSON; timings never go into a unit test.
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "bench", "corpus")
sys.path.insert(0, CORPUS)
import slowdown  # noqa: E402  (bench/corpus/slowdown.py: the calibrated wrapper)

MANIFEST = """[project]
name = "creep"

[defaults]
runtimes = ["eager"]
dtypes = ["float32"]
batch = [1]
device = "{device}"
{bench}
[[kernel]]
name = "{kernel}"
path = "kernels/{kernel}.py"
inputs = {inputs}

[gate]
rope = 0.02
drift_budget = {budget}
anchor = "tag:v*"
"""


DEVICE = {"name": "cpu"}  # set from --device in main()


def kernel_inputs(kernel):
    """--inputs when given, else the inputs table of KERNEL in bench/corpus/rnx.toml (rnx.gpu.toml for CUDA)."""
    if DEVICE.get("inputs"):
        return DEVICE["inputs"]
    text = open(os.path.join(CORPUS, "rnx.gpu.toml" if DEVICE["name"] == "cuda" else "rnx.toml")).read()
    block = text.split('name   = "%s"' % kernel, 1)[1].split("[[kernel]]", 1)[0]
    for line in block.splitlines():
        if line.startswith("inputs"):
            return line.split("=", 1)[1].strip()
    raise SystemExit("bisect_cpu.py: kernel %s has no inputs table in bench/corpus/rnx.toml" % kernel)


def sh(args, cwd=None, check=True, env=None):
    r = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env)
    if check and r.returncode != 0:
        raise SystemExit("bisect_cpu.py: %s failed (%d):\n%s\n%s" % (" ".join(args), r.returncode, r.stdout[-3000:],
                                                                     r.stderr[-3000:]))
    return r


def git(repo, *args):
    return sh(["git", "-C", repo, "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args]).stdout.strip()


def variant_source(original, level, step):
    """The kernel after `level` slowing commits. Level 0 carries the wrapper too, busy-waiting a negligible fraction:
    the wrapper's own cost (a Python call and two clock reads, about 1% of a 0.14 ms call) is then in every commit,
    and each slowing commit adds STEP alone."""
    return slowdown.slowed_source(original, (1 + step) ** level - 1 if level else 1e-9, "kernel")


def make_repo(path, kernel, plan, step, budget):
    """plan: list of "slow" / "doc"; returns [(sha, kind, subject)], the first being the anchor commit."""
    original = open(os.path.join(CORPUS, "kernels", kernel + ".py")).read()
    os.makedirs(os.path.join(path, "kernels"))
    os.makedirs(os.path.join(path, "docs"))
    git(path, "init", "-q", "-b", "main")
    with open(os.path.join(path, "rnx.toml"), "w") as f:
        f.write(MANIFEST.format(kernel=kernel, inputs=kernel_inputs(kernel), budget=budget, device=DEVICE["name"],
                                bench="\n[bench]\nthreads = 1\n" if DEVICE["name"] == "cpu" else ""))
    with open(os.path.join(path, "kernels", kernel + ".py"), "w") as f:
        f.write(variant_source(original, 0, step))
    with open(os.path.join(path, "docs", "notes.md"), "w") as f:
        f.write("# Notes\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "commit 1: %s as in the corpus, in the calibrated wrapper at 0%%" % kernel)
    commits = [(git(path, "rev-parse", "HEAD"), "anchor", "commit 1")]
    level = 0
    for i, kind in enumerate(plan, start=2):
        if kind == "slow":
            level += 1
            with open(os.path.join(path, "kernels", kernel + ".py"), "w") as f:
                f.write(variant_source(original, level, step))
            subject = "commit %d: %s does more work (%g%% per call)" % (i, kernel, round(100 * step, 2))
        else:
            with open(os.path.join(path, "docs", "notes.md"), "a") as f:
                f.write("\nNote %d.\n" % i)
            subject = "commit %d: docs" % i
        git(path, "commit", "-qam", subject)
        commits.append((git(path, "rev-parse", "HEAD"), kind, subject))
    return commits


def load_entry(source, name):
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, name, "exec"), module.__dict__)
    return module.run


def true_ratios(kernel, step, levels, seconds=3.0):
    """Median over alternating calls of variant/original time, per level: the ratio the commits really cost."""
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(0)
    original = open(os.path.join(CORPUS, "kernels", kernel + ".py")).read()
    shapes = {name: [1 if d.strip() == "B" else int(d) for d in shape.split(",")]
              for name, shape in re.findall(r'(\w+)\s*=\s*"([^"]*)"', kernel_inputs(kernel))}
    device = DEVICE["name"]
    inputs = {n: torch.randn(*s, device=device) for n, s in shapes.items()}

    def timed(fn):
        if device == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn(**inputs)
        if device == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - t0
    base = load_entry(variant_source(original, 0, step), "rnx_bench_level0")
    rows = []
    for level in levels:
        variant = load_entry(variant_source(original, level, step), "rnx_bench_level%d" % level)
        for _ in range(5):
            base(**inputs), variant(**inputs)
        ratios = []
        stop = time.perf_counter() + seconds
        first = True
        while time.perf_counter() < stop:
            # Which one runs first alternates: the second call of a pair runs warmer (or later in a time slice).
            if first:
                before = timed(base)
                ratios.append(timed(variant) / before)
            else:
                after = timed(variant)
                ratios.append(after / timed(base))
            first = not first
        rows.append({"level": level, "intended": (1 + step) ** level, "measured": statistics.median(ratios),
                     "pairs": len(ratios)})
    print("\ntrue ratios (variant / original, alternating calls in one process, median of %s s of pairs):" % seconds)
    print("%-6s %-10s %-10s %s" % ("level", "intended", "measured", "pairs"))
    for r in rows:
        print("%-6d %-10.4f %-10.4f %d" % (r["level"], r["intended"], r["measured"], r["pairs"]))
    return rows


def run_rnx(rnx, args, cwd, log):
    t0 = time.time()
    r = subprocess.run(["nice", "-n", "5", rnx, *args], cwd=cwd, capture_output=True, text=True)
    with open(log, "a") as f:
        f.write("$ rnx %s\n%s\n%s\n" % (" ".join(args), r.stdout, r.stderr))
    return r, time.time() - t0


def bisect(rnx, repo, good, bad, kernel, args, log, filters=None):
    """rnx bisect GOOD BAD with --kernel KERNEL, or with `filters` (a drift finding's own filters) instead."""
    r, seconds = run_rnx(rnx, ["bisect", good, bad] + (filters or ["--kernel", kernel]) +
                         ["--threshold", str(args.threshold), "--out-dir", os.path.join(repo, ".rnx")] +
                         (["--max-processes", str(args.max_processes)] if args.max_processes else []), repo, log)
    if r.returncode != 0:
        raise SystemExit("rnx bisect failed (%d):\n%s\n%s" % (r.returncode, r.stdout[-4000:], r.stderr[-4000:]))
    print(r.stdout)
    found = json.load(open(os.path.join(repo, ".rnx", "bisect.json")))
    return found, seconds


def creep(args, work, log, true_levels):
    plan = ["slow", "slow", "doc", "slow", "doc", "slow", "slow", "doc"]
    commits = make_repo(work, args.kernel, plan, args.step, args.budget)
    git(work, "tag", "v1.0", commits[0][0])
    store = os.path.join(work, ".rnx", "baselines.db")
    if args.bisect_only:
        found, seconds = bisect(args.rnx, work, "v1.0", "main", args.kernel, args, log)
        slow = {c[0] for c in commits if c[1] == "slow"}
        named = {c["commit"] for c in found["culprits"]}
        position = {c[0]: i + 1 for i, c in enumerate(commits)}
        print("slowing commits %s; named %s" % (sorted(position[c] for c in slow), sorted(position[c] for c in named)))
        return {"commits": [{"sha": c[0], "kind": c[1], "subject": c[2]} for c in commits], "prs": [],
                "bisect": found, "bisect_seconds": round(seconds, 1), "bisect_named_all_slow": slow <= named,
                "bisect_named_doc": sorted(named - slow)}
    # The anchor's run, stored as main's baseline (a push of v1.0).
    git(work, "checkout", "-q", commits[0][0])
    r, _ = run_rnx(args.rnx, ["gate", "--store", store, "--branch", "main", "--commit", commits[0][0], "--no-github",
                              "--out-dir", os.path.join(work, ".rnx", "anchor")], work, log)
    if r.returncode != 0:
        raise SystemExit("anchor gate failed:\n" + r.stdout[-3000:] + r.stderr[-3000:])
    rows = []
    for i in range(1, len(commits)):
        sha, kind, subject = commits[i]
        git(work, "checkout", "-q", sha)
        out = os.path.join(work, ".rnx", "pr%d" % i)
        r, seconds = run_rnx(args.rnx, ["gate", "--store", store, "--mode", "paired", "--pair-ref", commits[i - 1][0],
                                        "--pull-request", str(i), "--branch", "pr-%d" % i, "--base-branch", "main",
                                        "--commit", sha, "--no-github", "--out-dir", out], work, log)
        verdict = json.load(open(os.path.join(out, "verdict.json"))) if os.path.exists(
            os.path.join(out, "verdict.json")) else {}
        drift = json.load(open(os.path.join(out, "drift.json"))) if os.path.exists(
            os.path.join(out, "drift.json")) else {}
        config = (verdict.get("configs") or [{}])[0]
        rows.append({"commit": i + 1, "sha": sha, "kind": kind, "exit": r.returncode, "verdict": verdict.get("verdict"),
                     "paired_ratio": config.get("ratio"), "paired_decision": config.get("decision"),
                     "drift": drift, "seconds": round(seconds, 1)})
        # Merged: the pull request's head run becomes main's newest baseline, as the push job would store it.
        pushed = os.path.join(work, ".rnx", "push%d.json" % i)
        run = json.load(open(os.path.join(out, "run.json")))
        run.pop("pull_request", None)
        run.update({"branch": "main", "base_branch": "main"})
        with open(pushed, "w") as f:
            json.dump(run, f)
        r2, _ = run_rnx(args.rnx, ["gate", "--store", store, "--results", pushed, "--branch", "main", "--commit", sha,
                                   "--no-github", "--out-dir", os.path.join(work, ".rnx", "push%d" % i)], work, log)
        if r2.returncode != 0:
            raise SystemExit("push gate failed:\n" + r2.stdout[-3000:] + r2.stderr[-3000:])
        d = drift.get("configs", [{}])[0] if drift.get("configs") else {}
        blamed = [c[:7] for c in d.get("blamed_commits", [])]
        print("commit %2d %-5s PR verdict %-5s paired %-10s x%.4f  drift x%s [%s] %-8s %-6s blamed %s" % (
            i + 1, kind, verdict.get("verdict"), config.get("decision"), config.get("ratio") or 0,
            "%.4f" % d["ratio"] if d.get("ratio") else "-",
            "%.4f, %.4f" % tuple(d["ci95"]) if d.get("ci95") else "-", d.get("decision", "-"),
            d.get("method", "-"), " ".join(blamed) or "-"), flush=True)
    position = {c[0]: i + 1 for i, c in enumerate(commits)}
    flagged = next((row for row in rows if row["drift"].get("exceeded")), None)
    summary = flagged_summary(flagged, commits, position, true_levels)
    # The bisect the flagged pull request's drift finding asks for (anchor .. its head), else v1.0 .. main.
    git(work, "checkout", "-q", "main")
    command = summary.get("bisect_command", "")
    if command:
        words = command.split()
        found, seconds = bisect(args.rnx, work, words[2], words[3], args.kernel, args, log, filters=words[4:])
        good, bad = words[2], words[3]
    else:
        found, seconds = bisect(args.rnx, work, "v1.0", "main", args.kernel, args, log)
        good, bad = commits[0][0], commits[-1][0]
    in_range = commits[:position[bad]]
    slow = {c[0] for c in in_range if c[1] == "slow"}
    named = {c["commit"] for c in found["culprits"]}
    print("flagged: %s" % json.dumps(summary))
    print("bisect %s..%s: slowing commits %s; named %s" % (
        position[good], position[bad], sorted(position[c] for c in slow), sorted(position[c] for c in named)))
    return {"commits": [{"sha": c[0], "kind": c[1], "subject": c[2]} for c in commits], "prs": rows,
            "flagged": summary, "bisect_range": [position[good], position[bad]],
            "bisect": found, "bisect_seconds": round(seconds, 1), "bisect_named": sorted(position[c] for c in named),
            "bisect_named_all_slow": slow <= named, "bisect_named_doc": sorted(position[c] for c in named - slow)}


def flagged_summary(row, commits, position, true_levels):
    """The first pull request whose drift check flagged the budget: its commit, how it was decided, the true
    cumulative ratio of its head (the calibration's measured ratio at its number of slowing commits), and the
    commits its finding names (blamed by the stored history, or listed since the anchor for rnx bisect)."""
    if row is None:
        return {}
    d = row["drift"]["configs"][0]
    level = sum(1 for c in commits[:row["commit"]] if c[1] == "slow")
    true = next((t["measured"] for t in true_levels if t["level"] == level), None)
    return {"commit": row["commit"], "slowing_commits_so_far": level, "true_cumulative_ratio": true,
            "method": d.get("method"), "ratio": d.get("ratio"), "ci95": d.get("ci95"),
            "p_over_budget": d.get("p_over_budget"),
            "blamed": [position.get(c, c) for c in d.get("blamed_commits", [])],
            "listed_since_anchor": [position.get(c, c) for c in row["drift"].get("commits_since_anchor", [])],
            "bisect_command": d.get("bisect_command", "")}


def culprit(args, work, log):
    plan = ["slow" if i == 11 else "doc" for i in range(2, 17)]
    commits = make_repo(work, args.kernel, plan, args.culprit_step, args.budget)
    git(work, "checkout", "-q", "main")
    found, seconds = bisect(args.rnx, work, commits[0][0], commits[-1][0], args.kernel, args, log)
    named = [c["commit"] for c in found["culprits"]]
    position = {c[0]: i + 1 for i, c in enumerate(commits)}
    print("named commits: %s; paired runs: %d" % ([position[n] for n in named], found["paired_runs"]))
    return {"commits": [{"sha": c[0], "kind": c[1], "subject": c[2]} for c in commits], "bisect": found,
            "named_positions": [position[n] for n in named], "paired_runs": found["paired_runs"],
            "bisect_seconds": round(seconds, 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["creep", "culprit", "calibrate"])
    ap.add_argument("--rnx", default=os.path.join(ROOT, "build", "bin", "rnx"))
    ap.add_argument("--kernel", default="gemm_fp32")
    ap.add_argument("--step", type=float, default=0.015, help="creep: slowdown of each slowing commit")
    ap.add_argument("--culprit-step", type=float, default=0.08, help="culprit: slowdown of commit 11")
    ap.add_argument("--budget", type=float, default=0.05, help="[gate] drift_budget")
    ap.add_argument("--threshold", type=float, default=0.0075, help="rnx bisect --threshold")
    ap.add_argument("--max-processes", type=int, help="rnx bisect --max-processes")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                    help="cuda: the corpus's CUDA sizes (rnx.gpu.toml) and the CUDA sleep of slowdown.py")
    ap.add_argument("--inputs", help="the kernel's inputs table instead of the corpus's, e.g. "
                    "'{ a = \"B,96,256\", b = \"256,256\" }' (shorter calls suffer less from a loaded machine)")
    ap.add_argument("--bisect-only", action="store_true", help="creep: skip the per-PR gates, only rnx bisect")
    ap.add_argument("--keep", help="build the repository here and keep it (default: a temporary folder)")
    ap.add_argument("--out", help="JSON results")
    args = ap.parse_args()
    args.rnx = os.path.abspath(args.rnx)
    DEVICE["name"] = args.device
    DEVICE["inputs"] = args.inputs
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    work = args.keep or tempfile.mkdtemp(prefix="rnx-bisect-bench-")
    if args.keep and os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work, exist_ok=True)
    log = os.path.join(tempfile.gettempdir(), "rnx-bisect-bench-%d.log" % os.getpid())
    print("repository %s, log %s, load average %.1f" % (work, log, os.getloadavg()[0]), flush=True)
    if args.mode == "calibrate":
        result = {"true_ratios": true_ratios(args.kernel, args.step, range(0, 6))}
    elif args.mode == "creep":
        levels = true_ratios(args.kernel, args.step, range(0, 6))
        result = {"true_ratios": levels, **creep(args, work, log, levels)}
    else:
        result = {"true_ratios": true_ratios(args.kernel, args.culprit_step, [0, 1]), **culprit(args, work, log)}
    result.update({"mode": args.mode, "kernel": args.kernel, "device": args.device,
                   "inputs": kernel_inputs(args.kernel), "started": started,
                   "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "load_average_end": os.getloadavg()[0]})
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
        print("wrote", args.out)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
