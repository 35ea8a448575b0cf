#!/usr/bin/env python3
"""Slow creep from early in a history: how far main has slowed when the change-point detector first speaks.

    python3 bench/changepoint_creep.py [--sim build/bin/changepoint_sim] [--histories 300] [--seed 5]
                                       [--out bench/results/changepoint_creep.json]

Each history is 60 runs under one noise profile of bench/changepoint_sim.py, every run from the 11th on slower than
the one before by a fixed rate (a ramp, no single step). A creep counts as found when a slower change point at or
after the ramp's start is stored; printed: the share found by the 60th run, the median run at which the first was
stored, and the median cumulative slowdown by then; each row for the shipped detector and, on the same histories,
for its first pass alone (`--second-pass 0`: the detector before the second noise estimate).
"""
import argparse
import json
import math
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import changepoint_sim as cs  # noqa: E402

RUNS, START = 60, 10
CASES = [("h200-chain-24", 0.0005), ("h200-matmul-20", 0.001), ("h200-matmul-20", 0.002), ("cpu", 0.003),
         ("cpu", 0.005)]


def creep(sim, options, profile, rate, histories, seed):
    rng = np.random.default_rng(seed)
    steps = np.arange(RUNS) - START + 1
    level = np.where(steps > 0, steps * math.log(1 + rate), 0.0)
    y, se = cs.simulate(rng, profile, level, histories)
    stored = cs.run_detector(sim, y, se, {name: options.get(name) for name in cs.DETECTOR_OPTIONS})
    first = [min((c["look"] for c in s if c["ratio"] > 1 and c["index"] >= START - 2), default=None) for s in stored]
    found = [look for look in first if look is not None]
    return {"profile": profile["name"], "rate": rate, "found": len(found) / histories,
            "median_look": statistics.median(found) + 1 if found else None,
            "median_slowdown_at_detection": statistics.median((1 + rate) ** (f - START + 1) - 1 for f in found)
            if found else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sim", default=os.path.join(cs.ROOT, "build/bin/changepoint_sim"))
    ap.add_argument("--histories", type=int, default=300)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(cs.ROOT, "bench/results/changepoint_creep.json"))
    args = ap.parse_args()
    if not os.access(args.sim, os.X_OK):
        sys.exit(f"changepoint_creep: {args.sim} is not built; run: ninja -C build changepoint_sim")
    detectors = [("shipped", {}), ("first pass alone", {"second_pass": 0})]
    profiles = {p["name"]: p for p in [cs.cpu_profile()] + cs.h200_profiles()}
    rows = []
    print(f"{args.histories} histories of {RUNS} runs per row, slower by the rate every run from run {START + 1}; "
          f"seed {args.seed}\n")
    print("| detector | profile | creep per run | found by run 60 | first stored at run (median) | "
          "slowdown by then (median) |")
    print("|---|---|---:|---:|---:|---:|")
    for name, rate in CASES:
        for label, options in detectors:
            r = creep(args.sim, options, profiles[name], rate, args.histories, args.seed)
            r["detector"] = label
            rows.append(r)
            look = "-" if r["median_look"] is None else f"{r['median_look']:g}"
            slow = "-" if r["median_slowdown_at_detection"] is None else f"{100 * r['median_slowdown_at_detection']:.1f}%"
            print(f"| {r['detector']} | {name} | {100 * rate:g}% | {100 * r['found']:.0f}% | {look} | {slow} |")
    with open(args.out, "w") as f:
        json.dump({"command": " ".join(["python3", "bench/changepoint_creep.py"] + sys.argv[1:]), "runs": RUNS,
                   "ramp_from_run": START + 1, "histories": args.histories, "seed": args.seed, "rows": rows}, f,
                  indent=1)


if __name__ == "__main__":
    main()
