#!/usr/bin/env python3
"""The speed of light after a busy machine: the peak cache filled under load, then a quiet run.

    python3 bench/light_busy.py [--rnx build/bin/rnx] [--out bench/results/light_busy.json]

In a scratch cache (RNX_CACHE_DIR), so the machine's own cache is left alone:

  1. busy   one busy loop per core, then `rnx bench` of a plain matrix product (bench/corpus/kernels/gemm_fp32.py):
            its first worker measures the peaks on the loaded machine and keeps them.
  2. quiet  the loops stopped, and the machine quiet (other processes keeping under 0.25 of a core busy over a
            second; waited for, up to two minutes), `rnx bench` of the same product: the kept peaks were timed on a
            busy machine, so its first worker measures them again and the higher stands. Goal: the product at or
            under 100% of the measured peak.
  3. memo   `rnx bench --same-inputs` of the memoizing product (bench/corpus/cheats/gemm_fp32_memo_hash.py: its
            calls on the same inputs hash them and return a kept answer). Goal: still noted BEYOND THE MEASURED PEAK.
  4. quiet  the plain product once more (a peak the memo beat is measured again by this run's first worker; the
            higher stands, so the plain product stays at or under 100%).

Each step's SOL cell and note are read from the summary rnx bench prints (bench/light.py reads its columns), the
peaks from the run document's environment. The figures depend on the machine: nothing here asserts a timing.
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GEMM = "gemm_float32_flops_per_s"


def light_module():
    spec = importlib.util.spec_from_file_location("light", ROOT / "bench" / "light.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def busy_ticks():
    """(busy jiffies of all cores, time): /proc/stat's user, nice, system, irq, softirq and steal."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return v[0] + v[1] + v[2] + v[5] + v[6] + v[7], time.monotonic()


def others_cores(seconds=1.0):
    a, t0 = busy_ticks()
    time.sleep(seconds)
    b, t1 = busy_ticks()
    return (b - a) / os.sysconf("SC_CLK_TCK") / (t1 - t0)


def wait_quiet(limit_s=120):
    start = time.monotonic()
    while True:
        busy = others_cores()
        if busy < 0.25 or time.monotonic() - start > limit_s:
            return busy, time.monotonic() - start


def manifest(path):
    kernels = ROOT / "bench" / "corpus"
    path.write_text(f"""[project]
name = "light-busy"
[defaults]
batch = [4]
device = "cpu"
dtypes = ["float32"]
[bench]
processes = 2
max_processes = 4
warmup_ms = 100
budget_ms = 300
total_budget_s = 6
[[kernel]]
name = "gemm_fp32"
path = "{kernels / 'kernels' / 'gemm_fp32.py'}"
inputs = {{ a = "B,256,512", b = "512,512" }}
[[kernel]]
name = "gemm_fp32_memo"
path = "{kernels / 'cheats' / 'gemm_fp32_memo_hash.py'}"
inputs = {{ a = "B,256,512", b = "512,512" }}
""")


def bench(rnx, config, kernel, out, env, extra=()):
    cmd = [rnx, "bench", "--config", str(config), "--kernel", kernel, "--out", str(out), "--commit", "0" * 40,
           "--branch", "light-busy", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise SystemExit(f"light_busy: {' '.join(cmd)} exited {r.returncode}")
    lines = r.stderr.splitlines()
    rows = light_module().rows_of(lines)
    notes = {}
    for line in lines:
        if line.startswith(kernel + "/"):
            notes[line[:44].strip()] = line[139:].strip()
    doc = json.loads(Path(out).read_text())
    envd = doc["environment"]
    row = rows[0] if rows else {}
    return {"command": " ".join(cmd[1:]), "sol": row.get("sol"), "sol_cell": row.get("sol") is not None and f"{100 * row['sol']:.0f}%" or None,
            "median_ms": row.get("median_ms"), "gflop_per_s": row.get("gflop_per_s"),
            "note": notes.get(row.get("config", ""), ""), "peak_gflop_per_s": envd.get("peaks", {}).get(GEMM, 0) / 1e9,
            "peak_measurement": envd.get("peak_measurements", {}).get(GEMM)}


def kept(cache):
    files = list((cache / "peaks").glob("*.json"))
    if not files:
        return None
    p = json.loads(files[0].read_text())["peaks"][GEMM]
    return {"gflop_per_s": p["value"] / 1e9, "error": p["error"], "others_cores": p["others_cores"],
            "beaten_by": p.get("beaten_by", "")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rnx", default=str(ROOT / "build" / "bin" / "rnx"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "light_busy.json"))
    a = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="rnx-light-busy-"))
    cache = scratch / "cache"
    config = scratch / "rnx.toml"
    manifest(config)
    env = dict(os.environ, RNX_CACHE_DIR=str(cache))
    steps = []

    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        time.sleep(1)
        load = others_cores()
        step = bench(a.rnx, config, "gemm_fp32", scratch / "busy.json", env)
    finally:
        for p in loops:
            p.kill()
            p.wait()
    steps.append({"step": "busy", "others_cores_before": load, **step, "kept": kept(cache)})

    for name, kernel, extra in (("quiet", "gemm_fp32", ()), ("memo", "gemm_fp32_memo", ("--same-inputs",)),
                                ("quiet again", "gemm_fp32", ())):
        busy, waited = wait_quiet()
        step = bench(a.rnx, config, kernel, scratch / f"{name.replace(' ', '_')}.json", env, extra)
        steps.append({"step": name, "others_cores_before": busy, "waited_s": waited, **step, "kept": kept(cache)})

    print(f"{'step':<12}{'others':>8}{'kernel SOL':>12}{'median ms':>11}{'peak GFLOP/s':>14}{'its error':>10}  note")
    for s in steps:
        m = s["peak_measurement"] or {}
        print(f"{s['step']:<12}{s['others_cores_before']:>8.2f}{s['sol_cell'] or '-':>12}{s['median_ms'] or '-':>11}"
              f"{s['peak_gflop_per_s']:>14.1f}{100 * m.get('error', 0):>9.1f}%  {s['note']}")
    plain = [s for s in steps if s["step"].startswith("quiet")]
    memo = next(s for s in steps if s["step"] == "memo")
    over = [s["step"] for s in plain if s["sol"] is not None and s["sol"] > 1]
    flagged = "BEYOND THE MEASURED PEAK" in memo["note"]
    print(f"light_busy: plain product over 100% after the busy fill: {over or 'never'}; memo flagged: {flagged}")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps({"steps": steps, "plain_over_100": over, "memo_flagged": flagged,
                                       "cores": os.cpu_count(), "at": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                    time.gmtime())}, indent=1))
    shutil.rmtree(scratch, ignore_errors=True)
    return 0 if not over and flagged else 1


if __name__ == "__main__":
    sys.exit(main())
