#!/usr/bin/env python3
"""The between-run noise of one configuration on this machine: N separate `rnx bench` invocations at default
settings (no [bench] table), each summarised as the change-point detector sees a stored run.

    python3 bench/gpu_probe/between_runs.py [--rnx build-gpu/bin/rnx] [--runs 16] [--device cuda]
                                            [--kernel matmul|chain] [--out bench/results/between_runs_gpu.json]

The configuration, eager float32, with no other setting than its inputs:
  matmul  examples/kernels/matmul.py, 4096 x 4096 at batch 1 (the h200-matmul noise profiles of
          bench/changepoint_sim.py)
  chain   tests/device/kernels/chain.py, 33 dependent 2048^3 matrix products at batch 2048 (the h200-chain ones;
          the GPU suite's manifest runs it with 8 processes, this one with the default) Each run's statistic is what stats::summarize_run computes: the geometric mean
of the per-process medians, with the standard error of the mean of their logs. Printed and written: each run's
statistic, standard error, processes and wall time, then the standard deviation of the runs' log statistics (the
between-run noise; also from successive differences, which a slow drift does not inflate) and the median
standard error. Back-to-back runs in one session see neither another host nor another day, so they bound the
noise of a real history from below.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MANIFEST = """[project]
name = "between-runs"

[defaults]
runtimes = ["eager"]
dtypes   = ["float32"]
batch    = [1]
device   = "{device}"

[[kernel]]
{kernel}
"""

KERNELS = {
    "matmul": 'name   = "matmul"\npath   = "{root}/examples/kernels/matmul.py"\n'
              'inputs = {{ a = "B,4096,4096", b = "4096,4096" }}',
    "chain": 'name   = "chain"\npath   = "{root}/tests/device/kernels/chain.py"\n'
             'inputs = {{ x = "B,2048", w = "2048,2048" }}\nbatch  = [2048]',
}


def summarize(result):
    """(log statistic, its standard error, processes) of one result, as stats::summarize_run computes them."""
    samples, groups = result["samples_ms"], result.get("groups") or [len(result["samples_ms"])]
    medians, start = [], 0
    for g in groups:
        medians.append(statistics.median(samples[start:start + g]))
        start += g
    logs = [math.log(m) for m in medians]
    se = statistics.stdev(logs) / math.sqrt(len(logs)) if len(logs) > 1 else 0.0
    return statistics.fmean(logs), se, len(logs)


def one_run(rnx, manifest, out):
    started = time.monotonic()
    proc = subprocess.run([rnx, "bench", "--config", manifest, "--out", out], capture_output=True, text=True)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"between_runs: rnx bench failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    with open(out) as f:
        result = json.load(f)["results"][0]
    if result["status"] != "ok":
        sys.exit(f"between_runs: the configuration came back {result['status']}: {result.get('error', '')}")
    log_stat, log_se, processes = summarize(result)
    return {"statistic_ms": math.exp(log_stat), "log_se": log_se, "processes": processes, "wall_s": wall}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rnx", default=os.path.join(ROOT, "build-gpu/bin/rnx"))
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--kernel", choices=sorted(KERNELS), default="matmul")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/results/between_runs_gpu.json"))
    args = ap.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        manifest = os.path.join(tmp, "rnx.toml")
        with open(manifest, "w") as f:
            f.write(MANIFEST.format(device=args.device, kernel=KERNELS[args.kernel].format(root=ROOT)))
        for i in range(args.runs):
            r = one_run(args.rnx, manifest, os.path.join(tmp, f"run{i}.json"))
            runs.append(r)
            print(f"run {i + 1:2d}: {r['statistic_ms']:.4f} ms  se {100 * r['log_se']:.3f}%  "
                  f"{r['processes']} processes  {r['wall_s']:.1f} s", flush=True)
    logs = [math.log(r["statistic_ms"]) for r in runs]
    diffs = [b - a for a, b in zip(logs, logs[1:])]
    summary = {"kernel": args.kernel, "runs": len(runs), "sd": statistics.stdev(logs),
               "sd_successive": math.sqrt(statistics.fmean(d * d for d in diffs) / 2),
               "se_median": statistics.median(r["log_se"] for r in runs),
               "processes_median": statistics.median(r["processes"] for r in runs)}
    print(f"between-run sd of the log statistic {100 * summary['sd']:.3f}% (successive differences "
          f"{100 * summary['sd_successive']:.3f}%), median standard error {100 * summary['se_median']:.3f}%, "
          f"{summary['processes_median']:g} processes (median)")
    with open(args.out, "w") as f:
        json.dump({"command": " ".join(sys.argv), "summary": summary, "runs": runs}, f, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
