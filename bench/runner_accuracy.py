#!/usr/bin/env python3
# Runner accuracy on CPU: rnx bench's median per call vs torch.utils.benchmark.Timer.blocked_autorange's median,
# same kernels, shapes, dtype and thread count. The 2-core machine's speed drifts 1.5-2x over seconds (its L3 is
# shared with other tenants), so the two are measured back to back, kernel by kernel, in ROUNDS rounds (their
# order alternating), and the figure is the median over rounds of rnx/Timer. Both sides run in fresh processes
# with the glibc allocator settings the runner's worker applies (mmap threshold 32 MiB, trim threshold 64 MiB),
# so that neither measures page faults the other does not. Prints a table, writes JSON.
#
#   python3 bench/runner_accuracy.py [--rnx build/bin/rnx] [--batch 8] [--rounds 5]
#                                    [--out bench/results/runner_accuracy.json]
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile

import torch
import torch.utils.benchmark as benchmark

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "examples", "rnx.toml")
# kernel name in examples/rnx.toml -> its file and input shapes (B = batch), as declared there.
KERNELS = {
    "add": ("kernels/add.py", ["B,262144", "B,262144"]),
    "matmul": ("kernels/matmul.py", ["B,128,256", "256,256"]),
    "softmax": ("kernels/softmax.py", ["B,64,1024"]),
    "layernorm": ("kernels/layernorm.py", ["B,64,1024"]),
    "attention": ("kernels/attention.py", ["B,8,128,64"] * 3),
}


def load(path):
    spec = importlib.util.spec_from_file_location("k_" + os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run


# The allocator settings of rnx-runner-worker (runner/src/worker_main.cpp, steady_allocator) as environment.
ALLOCATOR_ENV = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(64 << 20)}


def timer_median(fn, inputs, threads, min_run_time):
    t = benchmark.Timer(stmt="fn(*inputs)", globals={"fn": fn, "inputs": inputs}, num_threads=threads)
    return t.blocked_autorange(min_run_time=min_run_time).median * 1e3  # ms


def timer_in_process(name, batch, threads, min_run_time):
    """This script's --timer-only mode: one kernel timed by Timer in this (fresh) process; prints ms."""
    torch.set_num_threads(threads)
    path, shapes = KERNELS[name]
    fn = load(os.path.join(ROOT, "examples", path))
    g = torch.Generator().manual_seed(0)
    inputs = [torch.randn([batch if d == "B" else int(d) for d in s.split(",")], generator=g) for s in shapes]
    with torch.no_grad():
        print(timer_median(fn, inputs, threads, min_run_time))


def timer_fresh(name, args):
    env = dict(os.environ, **ALLOCATOR_ENV)
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--timer-only", name, "--batch", str(args.batch),
                          "--threads", str(args.threads), "--min-run-time", str(args.min_run_time)],
                         env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def rnx_fresh(name, args, tmp):
    run_path = os.path.join(tmp, "run.json")
    subprocess.run([args.rnx, "bench", "--config", MANIFEST, "--out", run_path, "--runtime", "eager", "--dtype",
                    "float32", "--batch", str(args.batch), "--device", "cpu", "--kernel", name, "--processes", "1",
                    "--quiet"], check=True)
    with open(run_path) as f:
        r = json.load(f)["results"][0]
    if r["status"] != "ok":
        raise RuntimeError(f"{name}: {r['status']}: {r['message']}")
    return statistics.median(r["samples_ms"]), len(r["samples_ms"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rnx", default=os.environ.get("RNX", os.path.join(ROOT, "build", "bin", "rnx")))
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-run-time", type=float, default=0.5)
    ap.add_argument("--timer-only", metavar="KERNEL", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "runner_accuracy.json"))
    args = ap.parse_args()
    if args.timer_only:
        timer_in_process(args.timer_only, args.batch, args.threads, args.min_run_time)
        return 0

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in KERNELS:
            rounds = []
            for i in range(args.rounds):
                if i % 2 == 0:
                    ours, n = rnx_fresh(name, args, tmp)
                    ref = timer_fresh(name, args)
                else:
                    ref = timer_fresh(name, args)
                    ours, n = rnx_fresh(name, args, tmp)
                rounds.append({"rnx_ms": ours, "timer_ms": ref, "ratio": ours / ref, "rnx_samples": n})
            ratio = statistics.median(r["ratio"] for r in rounds)
            rows.append({"kernel": name, "batch": args.batch,
                         "rnx_median_ms": statistics.median(r["rnx_ms"] for r in rounds),
                         "timer_median_ms": statistics.median(r["timer_ms"] for r in rounds),
                         "ratio": ratio, "diff_pct": 100 * (ratio - 1), "within_5pct": abs(ratio - 1) <= 0.05,
                         "rounds": rounds})
    print(f"{'kernel':<12}{'rnx ms':>10}{'Timer ms':>10}{'rnx/Timer':>11}  {'per round':<40} within ±5%")
    for row in rows:
        per = " ".join(f"{r['ratio']:.2f}" for r in row["rounds"])
        print(f"{row['kernel']:<12}{row['rnx_median_ms']:>10.4f}{row['timer_median_ms']:>10.4f}{row['ratio']:>11.3f}"
              f"  {per:<40} {'yes' if row['within_5pct'] else 'NO'}")
    ok = sum(row["within_5pct"] for row in rows)
    print(f"{ok} of {len(rows)} kernels within ±5% (median of {args.rounds} back-to-back rounds; batch {args.batch}, "
          f"{args.threads} thread(s), float32, CPU)")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"batch": args.batch, "threads": args.threads, "rounds": args.rounds, "rows": rows}, f, indent=2)
    return 0 if ok >= 4 else 1


if __name__ == "__main__":
    sys.exit(main())
