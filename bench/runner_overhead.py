#!/usr/bin/env python3
# Harness overhead per call on CPU: rnx bench on an empty kernel (returns its input), eager Python and
# TorchScript, next to the bare cost of the same Python call measured with timeit. Prints a table, writes JSON.
#
#   python3 bench/runner_overhead.py [--rnx build/bin/rnx] [--out bench/results/runner_overhead.json]
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rnx", default=os.environ.get("RNX", os.path.join(ROOT, "build", "bin", "rnx")))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "runner_overhead.json"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        manifest = os.path.join(tmp, "rnx.toml")
        with open(manifest, "w") as f:
            f.write(f"""[project]
name = "overhead"
[defaults]
runtimes = ["eager", "torchscript"]
batch = [1]
device = "cpu"
[bench]
processes = 3
samples = 30
budget_ms = 1000
threads = 1
[[kernel]]
name = "empty"
path = "{os.path.join(ROOT, 'examples', 'kernels', 'empty.py')}"
inputs = {{ x = "B,16" }}
""")
        out = os.path.join(tmp, "run.json")
        subprocess.run([args.rnx, "bench", "--config", manifest, "--out", out, "--quiet"], check=True)
        with open(out) as f:
            run = json.load(f)

    sys.path.insert(0, os.path.join(ROOT, "examples", "kernels"))
    import torch
    from empty import run as empty_run  # noqa: E402
    x = torch.randn(1, 16)
    n = 200000
    bare_us = min(timeit.repeat(lambda: empty_run(x), number=n, repeat=5)) / n * 1e6

    rows = []
    for r in run["results"]:
        if r["status"] != "ok":
            print(f"{r['runtime']}: {r['status']}: {r['message']}", file=sys.stderr)
            continue
        rows.append({"runtime": r["runtime"], "median_us": 1e3 * statistics.median(r["samples_ms"]),
                     "min_us": 1e3 * min(r["samples_ms"]), "samples": len(r["samples_ms"])})
    print(f"{'empty kernel':<28}{'median µs/call':>16}{'min µs/call':>14}")
    for row in rows:
        print(f"{'rnx bench, ' + row['runtime']:<28}{row['median_us']:>16.3f}{row['min_us']:>14.3f}")
    print(f"{'python timeit, bare call':<28}{bare_us:>16.3f}")
    with open(args.out, "w") as f:
        json.dump({"environment": run["environment"], "rows": rows, "python_bare_call_us": bare_us}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
