#!/usr/bin/env python3
"""Runner accuracy on CUDA: rnx's per-kernel median (from a run document) against triton.testing.do_bench's
median for the same kernel, shapes and dtype, measured in this script (do_bench clears L2 before each call,
as the runner flushes it before each sample). Prints a table and writes JSON.

Usage: gpu_accuracy.py RUN.json MANIFEST_DIR OUT.json
"""
import importlib.util
import json
import math
import pathlib
import statistics
import sys

import torch
import triton.testing

# kernel -> (file, shapes with B resolved to 1): must match tests/device/rnx.toml
KERNELS = {
    "add": ("kernels/add.py", [(1, 134217728), (1, 134217728)]),
    "matmul": ("../../examples/kernels/matmul.py", [(1, 4096, 4096), (4096, 4096)]),
    "softmax": ("../../examples/kernels/softmax.py", [(1, 4096, 8192)]),
    "layernorm": ("../../examples/kernels/layernorm.py", [(1, 4096, 8192)]),
    "attention": ("../../examples/kernels/attention.py", [(1, 16, 1024, 64)] * 3),
    "chain": ("kernels/chain.py", [(2048, 2048), (2048, 2048)]),
    "empty": ("../../examples/kernels/empty.py", [(1, 1024)]),
}


def load(root, rel):
    spec = importlib.util.spec_from_file_location(pathlib.Path(rel).stem, root / rel)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run


def main():
    run_path, root, out_path = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    run = json.loads(run_path.read_text())
    rows = []
    torch.manual_seed(0)
    for r in run["results"]:
        if r["kernel"] not in KERNELS or r["dtype"] != "float32" or r["runtime"] != "eager" or r["status"] != "ok":
            continue
        rel, shapes = KERNELS[r["kernel"]]
        fn = load(root, rel)
        inputs = [torch.randn(s, device="cuda", dtype=torch.float32) for s in shapes]
        ref_ms = triton.testing.do_bench(lambda: fn(*inputs), warmup=200, rep=1000, return_mode="median")
        samples = r["samples_ms"]
        groups = r.get("groups") or [len(samples)]
        bounds = [sum(groups[:i]) for i in range(len(groups) + 1)]
        process_medians = [statistics.median(samples[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
        rnx_ms = statistics.median(samples)
        rows.append({"kernel": r["kernel"], "rnx_median_ms": rnx_ms, "do_bench_median_ms": ref_ms,
                     "ratio": rnx_ms / ref_ms, "process_medians_ms": process_medians,
                     "unstable": r.get("unstable", False), "n": len(samples)})
    print(f"{'kernel':10} {'rnx median ms':>14} {'do_bench ms':>12} {'rnx/do_bench':>13}  process medians (ms)")
    for row in rows:
        pm = ", ".join(f"{m:.4f}" for m in row["process_medians_ms"])
        print(f"{row['kernel']:10} {row['rnx_median_ms']:14.4f} {row['do_bench_median_ms']:12.4f} "
              f"{row['ratio']:13.3f}  {pm}")
    timed = [row for row in rows if row["kernel"] != "empty"]
    within = [row for row in timed if abs(row["ratio"] - 1) <= 0.03]
    print(f"{len(within)}/{len(timed)} kernels within ±3% of do_bench")
    out_path.write_text(json.dumps({"device": torch.cuda.get_device_name(0), "rows": rows}, indent=1))
    return 0 if len(within) >= 5 and not math.isnan(sum(r["ratio"] for r in rows)) else 1


if __name__ == "__main__":
    sys.exit(main())
