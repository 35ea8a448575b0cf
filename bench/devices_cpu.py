#!/usr/bin/env python3
"""Several devices on one machine, shown with CPU core sets: one lane against two, the same suite, same verdicts.

    python3 bench/devices_cpu.py [--rnx build/bin/rnx] [--reps 2] [--lanes cpu:0-0,cpu:1-1]
                                 [--out bench/results/devices_cpu.json]

Where no machine with several GPUs is at hand, two CPU "devices" (disjoint core sets: the worker is bound to
its set and its threads capped at its size) stand in for two GPUs. The suite: eight configurations of four
examples/kernels files (float32, batch 1 and 4, one thread), paired with itself (`rnx bench --self-check`, so
every decision should be equivalent). Each repetition runs it on the first lane alone (`--devices cpu:0-0`)
and on all lanes (`--devices cpu:0-0,cpu:1-1`), alternating which goes first, and the script prints each
run's wall time, throughput (configurations per minute), the speed-up of the lanes (target: >= 0.8 x the number
of lanes) and whether every configuration's decision is the same in both. Caveat: on a 2-core machine the
two lanes are the whole machine, so everything else running there (the orchestrator, other jobs) takes time
from one of them; the load average before and after each run is recorded.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MANIFEST = """[project]
name = "devices-cpu"

[defaults]
runtimes = ["eager"]
dtypes   = ["float32"]
batch    = [1, 4]
device   = "cpu"

[bench]
threads = 1

[[kernel]]
name   = "softmax"
path   = "{k}/softmax.py"
inputs = {{ x = "B,128,1024" }}

[[kernel]]
name   = "layernorm"
path   = "{k}/layernorm.py"
inputs = {{ x = "B,128,1024" }}

[[kernel]]
name   = "matmul"
path   = "{k}/matmul.py"
inputs = {{ a = "B,128,256", b = "256,256" }}

[[kernel]]
name   = "attention"
path   = "{k}/attention_batched.py"
inputs = {{ q = "B,4,64,64", k = "B,4,64,64", v = "B,4,64,64" }}
"""


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def bench(rnx, manifest, work, name, devices):
    head = os.path.join(work, name + ".head.json")
    base = os.path.join(work, name + ".base.json")
    timings = os.path.join(work, name + ".timings.json")
    cmd = [rnx, "bench", "--config", manifest, "--self-check", "--out", head, "--base-out", base, "--commit",
           "devices", "--branch", "devices", "--devices", devices, "--timings", timings, "--quiet"]
    load_before = load_average()
    began = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - began
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    verdict = subprocess.run([rnx, "compare", base, head, "--format", "json"], capture_output=True, text=True)
    decisions = {}
    for c in json.loads(verdict.stdout)["configs"]:
        decisions[f'{c["kernel"]}/{c["runtime"]}/{c["dtype"]}/b{c["batch"]}'] = c["decision"]
    with open(head) as f:
        lanes = {f'{r["kernel"]}/{r["runtime"]}/{r["dtype"]}/b{r["batch"]}': r.get("measured_on", "")
                 for r in json.load(f)["results"]}
    with open(timings) as f:
        split = json.load(f)
    return {"devices": devices, "wall_s": wall, "configurations": len(decisions), "decisions": decisions,
            "measured_on": lanes, "timings": split, "load_before": load_before, "load_after": load_average()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rnx", default=os.path.join(ROOT, "build", "bin", "rnx"))
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--lanes", default="cpu:0-0,cpu:1-1")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "devices_cpu.json"))
    a = ap.parse_args()
    lanes = a.lanes.split(",")
    one = lanes[0]
    work = tempfile.mkdtemp(prefix="rnx-devices-")
    manifest = os.path.join(work, "rnx.toml")
    with open(manifest, "w") as f:
        f.write(MANIFEST.format(k=os.path.join(ROOT, "examples", "kernels")))
    runs = []
    for rep in range(a.reps):
        order = [(one, "one"), (a.lanes, "all")]
        if rep % 2:
            order.reverse()
        for devices, label in order:
            r = bench(a.rnx, manifest, work, f"rep{rep}-{label}", devices)
            r["rep"] = rep
            r["lanes"] = len(devices.split(","))
            runs.append(r)
            per_min = 60 * r["configurations"] / r["wall_s"]
            print(f'rep {rep} {devices:20} {r["wall_s"]:6.1f} s  {per_min:5.1f} configurations/min  '
                  f'load {r["load_before"]:.1f}->{r["load_after"]:.1f}  '
                  f'decisions {sorted(set(r["decisions"].values()))}', flush=True)
    print()
    print("| rep | one lane s | all lanes s | speed-up | target | verdicts identical |")
    print("|---|---:|---:|---:|---:|---|")
    summary = []
    for rep in range(a.reps):
        single = next(r for r in runs if r["rep"] == rep and r["lanes"] == 1)
        multi = next(r for r in runs if r["rep"] == rep and r["lanes"] == len(lanes))
        speedup = single["wall_s"] / multi["wall_s"]
        same = single["decisions"] == multi["decisions"]
        summary.append({"rep": rep, "speedup": speedup, "identical_verdicts": same})
        print(f'| {rep} | {single["wall_s"]:.1f} | {multi["wall_s"]:.1f} | {speedup:.2f} | {0.8 * len(lanes):.1f} '
              f'| {"yes" if same else "no"} |')
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"lanes": a.lanes, "cores": os.cpu_count(), "runs": runs, "summary": summary}, f, indent=1)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
