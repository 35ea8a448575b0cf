#!/usr/bin/env python3
"""Bimodal workers: how often a worker process's samples split into two modes, with and without core pinning, and
what those processes went through (core migrations, page faults, preemptions, as the runner records them).

    python3 bench/bimodal.py [--runs 12] [--rnx build/bin/rnx] [--out bench/results/bimodal.json]

Each run is one `rnx bench` of the demo's kernels (softmax and layernorm, batch 1 and 8, CPU float32, one
thread, 3 worker processes, the demo's sampling settings), alternately with RNX_PIN=0 (the worker left to the
scheduler) and RNX_PIN=1 (the worker pinned to one core). Every worker process is then checked for two modes
with the runner's own rule (a gap of more than 30% between neighbouring sorted samples with at least 35% of the
samples on each side), and the widest spread between process medians of a configuration is recorded.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MANIFEST = """[project]
name = "rnx-bimodal"
[defaults]
runtimes = ["eager"]
dtypes   = ["float32"]
batch    = [1, 8]
device   = "cpu"
[bench]
processes   = 3
samples     = 400
min_samples = 8
budget_ms   = 300
warmup_ms   = 100
threads     = 1
[[kernel]]
name   = "softmax"
path   = "{root}/examples/kernels/softmax_fused.py"
inputs = {{ x = "B,64,1024" }}
[[kernel]]
name   = "layernorm"
path   = "{root}/examples/kernels/layernorm_fused.py"
inputs = {{ x = "B,64,1024" }}
tolerance = {{ float32 = {{ rtol = 1e-5, atol = 1e-5 }} }}
"""

NOTE = re.compile(r"process (\d+): (\d+) migrations, (\d+) page faults per sample, (\d+) preempted")


def bimodal(samples):
    """The runner's rule for two modes in one process (runner/src/sample_stats.cpp)."""
    v = sorted(samples)
    n = len(v)
    if n < 8:
        return False
    for i in range(1, n):
        low, high = v[:i], v[i:]
        if len(low) < 0.35 * n or len(high) < 0.35 * n:
            continue
        if v[i] > 1.3 * v[i - 1]:
            return True
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=12, help="runs per setting (pinned, not pinned)")
    ap.add_argument("--rnx", default=os.path.join(ROOT, "build/bin/rnx"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/results/bimodal.json"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="rnx-bimodal-")
    manifest = os.path.join(work, "rnx.toml")
    with open(manifest, "w") as f:
        f.write(MANIFEST.format(root=ROOT))
    rows = []
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for i in range(2 * args.runs):
        pin = "1" if i % 2 else "0"
        out = os.path.join(work, f"run-{i}.json")
        p = subprocess.run([args.rnx, "bench", "--config", manifest, "--out", out, "--quiet", "--commit", "x"],
                           env={**os.environ, "RNX_PIN": pin}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        if p.returncode != 0:
            sys.exit(f"bimodal: rnx bench failed:\n{p.stdout[-2000:]}")
        with open(out) as f:
            run = json.load(f)
        for r in run["results"]:
            offset, medians, modes = 0, [], 0
            for g in r["groups"]:
                process = r["samples_ms"][offset:offset + g]
                offset += g
                medians.append(statistics.median(process))
                modes += bimodal(process)
            notes = [tuple(map(int, m.groups()[1:])) for m in NOTE.finditer(r["message"])]
            rows.append({"pinned": pin == "1", "run": i // 2, "config": f'{r["kernel"]}/b{r["batch"]}',
                         "processes": len(r["groups"]), "bimodal_processes": modes, "unstable": r["unstable"],
                         "process_spread": max(medians) / min(medians), "message": r["message"],
                         "notes": notes})
    summary = {}
    for pinned in (False, True):
        sel = [r for r in rows if r["pinned"] == pinned]
        summary["pinned" if pinned else "not pinned"] = {
            "worker processes": sum(r["processes"] for r in sel),
            "bimodal processes": sum(r["bimodal_processes"] for r in sel),
            "configurations flagged unstable": sum(r["unstable"] for r in sel),
            "configurations": len(sel),
            "median process spread (max/min median)": statistics.median(r["process_spread"] for r in sel),
            "worst process spread": max(r["process_spread"] for r in sel),
            "migrations recorded in unstable configurations": sum(n[0] for r in sel for n in r["notes"]),
        }
    for name, s in summary.items():
        print(f"{name:11}: {s['bimodal processes']} bimodal of {s['worker processes']} worker processes; "
              f"{s['configurations flagged unstable']} of {s['configurations']} configurations unstable; process "
              f"medians max/min: median {s['median process spread (max/min median)']:.3f}, worst "
              f"{s['worst process spread']:.3f}")
    for r in rows:
        if r["unstable"]:
            print(f'  {"pinned" if r["pinned"] else "not pinned"} run {r["run"]} {r["config"]}: {r["message"][:300]}')
    doc = {"bench": "bimodal", "started": started, "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "command": "python3 bench/bimodal.py " + " ".join(sys.argv[1:]), "summary": summary, "rows": rows}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
