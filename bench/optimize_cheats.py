#!/usr/bin/env python3
"""Does `rnx optimize` measure a cheating candidate at the honest rewrite's speed? Three runs of the rewrite loop.

    python3 bench/optimize_cheats.py [--rnx build/bin/rnx] [--benchmark isolated|shared|both] [--run memo|sabotage|bound]
                                     [--processes N] [--out bench/results/optimize_cheats.json]

Run "bound": bench/corpus/optimize/outer_scale.py (a scaled outer product: 1 MiB of output a call from 4 KiB of
input) against outer_memo.py, a memo every correctness check accepts (it compares its inputs in full and hands back
the kept answer itself). On the same inputs at every call (the shared benchmark) it writes nothing, faster than the
device can write its output: the physical bound refuses to call it faster and it is not kept. In processes of its own
on fresh inputs (rnx optimize's benchmark) it computes, and is no faster than the original.

The original is bench/corpus/optimize/attention_heads.py (attention one head at a time). The scripted rewriter of
tests/optimize (RNX_TEST_CANDIDATE_FILES) proposes, in run "memo", the memoizing candidate and then the honest
rewrite; in run "sabotage", the sabotaging candidate and then the honest rewrite (bench/corpus/optimize/*.py say what
each does). All three pass `rnx verify`, so each run benchmarks both of its candidates against the original.
For each candidate the table shows its measured speedup (the verdict's geometric mean of base/head), P(faster),
the decision and which one was kept, and per run the ratio cheat/honest: 1.0 when the benchmark measures what the
candidate computes, above it when the cheat is paid for its trick.

--benchmark isolated is rnx optimize's benchmark (each side in processes of its own, fresh inputs); shared is the
earlier one (`rnx optimize --shared-process-benchmark`: both sides alternated in one process on the same inputs at
every call); both runs each. Every run uses --no-profile and --no-commit, and a scratch copy of the corpus folder.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(ROOT, "bench", "corpus", "optimize")
REWRITER = os.path.join(ROOT, "tests", "optimize", "fixtures", "rewriter.py")
# run -> (the kernel rnx optimize rewrites, the candidates the scripted rewriter answers with, in order)
RUNS = {"memo": ("attention_heads", ["memoizing.py", "honest.py"]),
        "sabotage": ("attention_heads", ["sabotaging.py", "honest.py"]),
        "bound": ("outer_scale", ["outer_memo.py"])}


def optimize(rnx, benchmark, kernel, names, processes, extra=()):
    """One `rnx optimize` of `kernel` over the candidates `names` (files of bench/corpus/optimize), in a scratch copy
    of that folder; returns its record, its wall seconds and what it printed."""
    work = tempfile.mkdtemp(prefix="rnx-optimize-bench-")
    repo = os.path.join(work, "repo")
    shutil.copytree(CASES, repo)
    candidates = ",".join(os.path.join(CASES, name) for name in names)
    record = os.path.join(work, "record.json")
    cmd = [rnx, "optimize", "--config", os.path.join(repo, "rnx.toml"), "--kernel", kernel,
           "--budget", str(len(names)), "--rewriter", "command:" + REWRITER, "--no-profile", "--no-commit",
           "--work-dir", os.path.join(work, "loop"), "--json-out", record, "--processes", str(processes), *extra]
    if benchmark == "shared":
        cmd.append("--shared-process-benchmark")
    env = dict(os.environ, RNX_TEST_CANDIDATE_FILES=candidates)
    print("$ RNX_TEST_CANDIDATE_FILES=" + candidates + " " + " ".join(cmd), file=sys.stderr, flush=True)
    began = time.time()
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seconds = time.time() - began
    if done.returncode != 0:
        sys.exit(f"rnx optimize failed ({done.returncode}):\n{done.stderr[-3000:]}")
    with open(record) as f:
        result = json.load(f)
    shutil.rmtree(work, ignore_errors=True)
    return result, seconds, done.stdout


def rows_of(benchmark, run, record, seconds):
    rows = []
    for attempt, name in zip(record["attempts"], RUNS[run][1]):
        rows.append({"benchmark": benchmark, "run": run, "candidate": name.removesuffix(".py"),
                     "status": attempt["status"], "kept": attempt["kept"], "speedup": attempt["speedup"],
                     "p_faster": attempt["p_faster"], "reason": attempt["reason"], "run_seconds": round(seconds, 1)})
    return rows


def ratio(rows, benchmark, run, cheat):
    by_name = {r["candidate"]: r["speedup"] for r in rows if r["benchmark"] == benchmark and r["run"] == run}
    if by_name.get(cheat) is None or not by_name.get("honest"):
        return None
    return by_name[cheat] / by_name["honest"]


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rnx", default=os.path.join(ROOT, "build", "bin", "rnx"))
    ap.add_argument("--benchmark", choices=["isolated", "shared", "both"], default="both")
    ap.add_argument("--processes", type=int, default=3, help="worker processes per side (the first look)")
    ap.add_argument("--run", action="append", choices=sorted(RUNS), help="only these runs (default: all)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "optimize_cheats.json"))
    args = ap.parse_args()

    benchmarks = ["shared", "isolated"] if args.benchmark == "both" else [args.benchmark]
    rows = []
    for benchmark in benchmarks:
        for run in args.run or RUNS:
            kernel, names = RUNS[run]
            record, seconds, _ = optimize(args.rnx, benchmark, kernel, names, args.processes)
            rows.extend(rows_of(benchmark, run, record, seconds))

    print(f"{'benchmark':<10} {'run':<9} {'candidate':<11} {'status':<11} {'kept':<5} {'speedup':>8} "
          f"{'P(faster)':>9} {'run s':>6}")
    for r in rows:
        print(f"{r['benchmark']:<10} {r['run']:<9} {r['candidate']:<11} {r['status']:<11} "
              f"{'yes' if r['kept'] else 'no':<5} {fmt(r['speedup']):>8} {fmt(r['p_faster'], 3):>9} "
              f"{r['run_seconds']:>6}")
    summary = []
    print()
    for benchmark in benchmarks:
        memo = ratio(rows, benchmark, "memo", "memoizing")
        sabotage = ratio(rows, benchmark, "sabotage", "sabotaging")
        bound = [r for r in rows if r["benchmark"] == benchmark and r["run"] == "bound"]
        summary.append({"benchmark": benchmark, "memo_over_honest": memo, "sabotage_over_honest": sabotage,
                        "bound_kept": bound[0]["kept"] if bound else None})
        parts = []
        if memo is not None:
            parts.append(f"memoizing/honest {fmt(memo)} (goal <= 1.2)")
        if sabotage is not None:
            parts.append(f"sabotaging/honest {fmt(sabotage)} (goal about 1)")
        if bound:
            parts.append(f"the memo beyond the bound kept: {'yes' if bound[0]['kept'] else 'no'} (goal no): "
                         f"{bound[0]['reason'][:300]}")
        print(f"{benchmark:<10} " + "; ".join(parts))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"command": " ".join(sys.argv), "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "machine": os.uname().nodename, "cpus": os.cpu_count(), "rows": rows, "summary": summary},
                  f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
