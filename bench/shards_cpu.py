#!/usr/bin/env python3
# Wall time of a sharded run on CPU: the same paired suite (rnx bench --self-check: the working tree paired with
# itself, as a pull request's paired gate measures it) run unsharded, then as N shards one after another (as N
# matrix jobs would run side by side). Prints each run's wall time and fixed cost (worker start, from rnx bench's
# own time line), compares the slowest shard with unsharded/N + the fixed cost, and checks that the shards merged
# with `rnx gate --merge` cover every configuration. Prints a table, writes JSON.
#
#   nice -n 5 python3 bench/shards_cpu.py [--rnx build/bin/rnx] [--shards 4] [--kernel K ...]
#                                          [--out FILE]   (default: shards_cpu.json in bench/results/)
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_KERNELS = ["gemm_fp32", "linear_bias", "sum_rows", "softmax_rows", "rmsnorm_module", "gelu"]
TIME_LINE = re.compile(r"time: ([0-9.]+) s in all: (\d+) worker processes started in ([0-9.]+) s, "
                       r"warm-up ([0-9.]+) s, sampling ([0-9.]+) s")


def bench(rnx, config, kernels, out, extra):
    cmd = [rnx, "bench", "--config", config, "--self-check", "--base-out", out.replace(".json", "-base.json"),
           "--out", out, "--commit", "shards-bench", "--branch", "shards-bench"] + extra
    for k in kernels:
        cmd += ["--kernel", k]
    began = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - began
    # --self-check exits 1 when identical code came out faster or slower: a measurement result, not a failure here.
    if proc.returncode not in (0, 1):
        sys.exit(f"shards_cpu: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    m = TIME_LINE.search(proc.stderr)
    if not m:
        sys.exit(f"shards_cpu: no time line in rnx bench's output:\n{proc.stderr[-2000:]}")
    with open(out) as f:
        configs = len(json.load(f)["results"])
    return {"wall_s": wall, "bench_s": float(m.group(1)), "workers": int(m.group(2)),
            "worker_start_s": float(m.group(3)), "warmup_s": float(m.group(4)), "sampling_s": float(m.group(5)),
            "configs": configs}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rnx", default=os.environ.get("RNX", os.path.join(ROOT, "build", "bin", "rnx")))
    ap.add_argument("--config", default=os.path.join(ROOT, "bench", "corpus", "rnx.toml"))
    ap.add_argument("--kernel", action="append", help="corpus kernels of the suite (default: six CPU kernels)")
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "shards_cpu.json"))
    args = ap.parse_args()
    kernels = args.kernel or DEFAULT_KERNELS
    tmp = tempfile.mkdtemp(prefix="rnx-shards-bench-")
    whole = bench(args.rnx, args.config, kernels, os.path.join(tmp, "whole.json"), [])
    shards = []
    documents = []
    for k in range(1, args.shards + 1):
        out = os.path.join(tmp, f"shard{k}.json")
        shards.append(bench(args.rnx, args.config, kernels, out,
                            ["--shard", f"{k}/{args.shards}", "--run-group", "shards-bench-1-1"]))
        documents += [out, out.replace(".json", "-base.json")]

    fixed = sum(s["worker_start_s"] for s in shards) / len(shards)
    slowest = max(s["wall_s"] for s in shards)
    predicted = whole["wall_s"] / args.shards + fixed
    print(f"suite: {whole['configs']} configurations ({', '.join(kernels)}), paired (--self-check), "
          f"{args.shards} shards run one after another")
    print(f"{'run':<10} {'configs':>7} {'wall s':>8} {'workers':>7} {'start s':>8} {'warm-up s':>9} {'sampling s':>10}")
    for name, r in [("unsharded", whole)] + [(f"shard {i + 1}/{args.shards}", s) for i, s in enumerate(shards)]:
        print(f"{name:<10} {r['configs']:>7} {r['wall_s']:>8.1f} {r['workers']:>7} {r['worker_start_s']:>8.1f} "
              f"{r['warmup_s']:>9.1f} {r['sampling_s']:>10.1f}")
    print(f"slowest shard {slowest:.1f} s; unsharded/{args.shards} + fixed cost (a shard's worker start, "
          f"mean {fixed:.1f} s) = {whole['wall_s'] / args.shards:.1f} + {fixed:.1f} = {predicted:.1f} s; "
          f"ratio slowest/unsharded {slowest / whole['wall_s']:.2f}")
    result = {"kernels": kernels, "shards": args.shards, "unsharded": whole, "shard_runs": shards,
              "slowest_shard_s": slowest, "fixed_cost_s": fixed, "predicted_s": predicted}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    # The shards put together: one paired verdict over every configuration of the suite.
    merged = subprocess.run([args.rnx, "gate", "--merge", *documents, "--no-github", "--mode", "paired",
                             "--out-dir", os.path.join(tmp, "gate"), "--store", os.path.join(tmp, "store.db")],
                            capture_output=True, text=True, cwd=tmp)
    if merged.returncode not in (0, 1):
        sys.exit(f"shards_cpu: rnx gate --merge failed ({merged.returncode}); documents in {tmp}:\n"
                 f"{merged.stderr}\n{merged.stdout}")
    with open(os.path.join(tmp, "gate", "verdict.json")) as f:
        verdict = json.load(f)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"merged: {len(verdict['configs'])} configurations judged, verdict {verdict['verdict']}")
    result.update(merged_configs=len(verdict["configs"]), merged_verdict=verdict["verdict"])
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
