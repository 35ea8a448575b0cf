#!/usr/bin/env python3
# Runner accuracy on CPU: rnx bench's median per call vs torch.utils.benchmark.Timer.blocked_autorange's median,
# same kernels, shapes, dtype and thread count, measured in this script. Prints a table, writes JSON.
#
#   python3 bench/runner_accuracy.py [--rnx build/bin/rnx] [--batch 8] [--out bench/results/runner_accuracy.json]
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


def timer_median(fn, inputs, threads, min_run_time):
    t = benchmark.Timer(stmt="fn(*inputs)", globals={"fn": fn, "inputs": inputs}, num_threads=threads)
    return t.blocked_autorange(min_run_time=min_run_time).median * 1e3  # ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rnx", default=os.environ.get("RNX", os.path.join(ROOT, "build", "bin", "rnx")))
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--min-run-time", type=float, default=1.0)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "runner_accuracy.json"))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    def timer_all():
        out = {}
        for name, (path, shapes) in KERNELS.items():
            fn = load(os.path.join(ROOT, "examples", path))
            g = torch.Generator().manual_seed(0)
            inputs = [torch.randn([args.batch if d == "B" else int(d) for d in s.split(",")], generator=g)
                      for s in shapes]
            with torch.no_grad():
                out[name] = timer_median(fn, inputs, args.threads, args.min_run_time)
        return out

    # Timer before and after rnx: the machine's drift over the run shows up in both references.
    before = timer_all()
    with tempfile.TemporaryDirectory() as tmp:
        run_path = os.path.join(tmp, "run.json")
        cmd = [args.rnx, "bench", "--config", MANIFEST, "--out", run_path, "--runtime", "eager", "--dtype", "float32",
               "--batch", str(args.batch), "--device", "cpu", "--quiet"]
        for name in KERNELS:
            cmd += ["--kernel", name]
        subprocess.run(cmd, check=True)
        with open(run_path) as f:
            run = json.load(f)
    after = timer_all()

    rows = []
    for r in run["results"]:
        if r["status"] != "ok":
            print(f"{r['kernel']}: {r['status']}: {r['message']}", file=sys.stderr)
            continue
        ours = statistics.median(r["samples_ms"])
        ref = statistics.median([before[r["kernel"]], after[r["kernel"]]])
        rows.append({"kernel": r["kernel"], "batch": r["batch"], "rnx_median_ms": ours, "timer_median_ms": ref,
                     "timer_before_ms": before[r["kernel"]], "timer_after_ms": after[r["kernel"]],
                     "diff_pct": 100 * (ours / ref - 1), "within_5pct": abs(ours / ref - 1) <= 0.05,
                     "samples": len(r["samples_ms"]), "groups": r["groups"]})
    print(f"{'kernel':<12}{'rnx median ms':>15}{'Timer median ms':>17}{'diff':>9}  within ±5%")
    for row in rows:
        print(f"{row['kernel']:<12}{row['rnx_median_ms']:>15.4f}{row['timer_median_ms']:>17.4f}"
              f"{row['diff_pct']:>8.1f}%  {'yes' if row['within_5pct'] else 'NO'}")
    ok = sum(row["within_5pct"] for row in rows)
    print(f"{ok} of {len(rows)} kernels within ±5% (batch {args.batch}, {args.threads} thread(s), float32, CPU)")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"batch": args.batch, "threads": args.threads, "environment": run["environment"], "rows": rows}, f,
                  indent=2)
    return 0 if ok >= 4 else 1


if __name__ == "__main__":
    sys.exit(main())
