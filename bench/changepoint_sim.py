#!/usr/bin/env python3
"""Change points on simulated histories: the shipped detector (build/bin/changepoint_sim, rnx::stats) against the
consecutive-runs check the service runs after each baseline today (the new baseline against the one before,
'slower' when P(ratio > 1 + rope) >= probability, rope 0.02 and probability 0.95: the default gate policy).

    python3 bench/changepoint_sim.py [--histories 500] [--runs 60] [--sim build/bin/changepoint_sim]
                                     [--steps 1,2,3,5] [--profiles cpu,h200-chain,...] [--penalty X]
                                     [--widening W] [--residual-widening W] [--second-pass 0|1]
                                     [--probability P] [--min-effect E] [--hazard H] [--step-sd S] [--min-segment N]
                                     [--out bench/results/changepoint_sim.json]

Each history is `runs` per-run statistics (log scale) with one noise profile: every run's statistic is off by a
normal error of the profile's per-run standard deviation (between-run drift and the run's own noise together),
and the run reports an uncertainty (standard error) drawn as its process spread would give it: the profile's
reported standard error times sqrt(chi2(k - 1) / (k - 1)) for k processes. Scenarios: flat; a single step of 1,
2, 3 or 5% (--steps) at run 40 (the 41st run is the first slower one); a ramp of 0.5% a commit from run 40 on.
With other --steps or --profiles than the defaults the random histories differ from the default run's.

The detector sees the history as the store does: after each run, the history so far is scanned and the change
points not yet stored are stored (and would be announced). A step counts as found when a 'slower' change point
within 2 runs of it is stored; its delay is the number of slower runs measured when it was stored (1 = found on
the first slower run). Every other stored change point is a false one. The consecutive-runs check's posterior is
the normal approximation of the verdict's: the log ratio of two consecutive runs with the two reported standard
errors; it flags 'slower' only (what it notifies), so its false alarms are its 'slower' flags on flat histories.

Noise profiles (per-run standard deviation of the log statistic; reported standard error; processes):
  cpu    this 2-core machine, stored runs of separate `rnx bench` invocations: bench/results/decisive.json, the
         stored A/A rows (20 repetitions x 6 configurations): the median over configurations of sd(log ratio)/sqrt 2,
         and of the ratio interval's log half-width / t(k - 1) / sqrt 2; 3 to 6 processes a run (k = 4 here)
  h200-chain  NVIDIA H200, device-bound chain of matmuls, 8 processes: docs/gpu-results.md, the stored A/A of runs
         5, 7 and 8 (ratios 1.004 [0.998, 1.011], 0.998 [0.990, 1.008], 0.996 [0.991, 1.001])
  h200-matmul NVIDIA H200, 4096^3 float32 matmul, 3 processes: docs/gpu-results.md, its medians in runs 2, 5 and 7
         (2.6768, 2.7160, 2.7170 ms) and the A/A intervals of runs 4 and 5 ([0.939, 1.020], [0.946, 1.027])
  h200-matmul-20  the same matmul at default settings, 20 back-to-back `rnx bench` runs in one session
         (bench/results/between_runs_gpu.json, bench/gpu_probe/between_runs.py; docs/gpu-results.md run 32): the
         larger of the runs' sd and the successive-difference estimate, the median standard error; one host and
         one hour, so a lower bound on a real history's noise
  h200-chain-24   the chain at default settings (3 processes), 24 runs in one session (docs/gpu-results.md run 33,
         bench/results/between_runs_gpu_chain.json)
  h200-matmul-50  the matmul's 20 runs of run 32 and 30 runs of a later session (two hours on, the machine started afresh)
         (run 34, bench/results/between_runs_gpu_matmul30.json) together: the sd of all 50, the shift between
         the sessions included
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEP_AT = 40
ROPE = 0.02
Z95 = 1.6448536269514722  # one-sided 95%


def sd_of_logs(values):
    return statistics.stdev([math.log(v) for v in values])


# 97.5% quantiles of Student's t: a verdict's interval over k processes is a t posterior with k - 1 degrees of freedom.
T975 = {2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365}


def half_width_sd(intervals, processes):
    return statistics.median([(math.log(hi) - math.log(lo)) / 2 / T975[processes - 1] for lo, hi in intervals])


def cpu_profile():
    rows = json.load(open(os.path.join(ROOT, "bench/results/decisive.json")))["rows"]
    by_config = {}
    for r in rows:
        if r.get("mode") == "stored" and r.get("scenario") == "aa" and "config" in r:
            by_config.setdefault(r["config"], []).append(r)
    total = statistics.median(sd_of_logs([r["ratio"] for r in rs]) / math.sqrt(2) for rs in by_config.values())
    se = statistics.median(half_width_sd([r["ci95"] for r in rs], 4) / math.sqrt(2) for rs in by_config.values())
    return {"name": "cpu", "sd": total, "se": se, "processes": 4,
            "source": "bench/results/decisive.json stored A/A, median of 6 configurations"}


def h200_profiles():
    chain_ratios = [1.004, 0.998, 0.996]
    chain_intervals = [(0.998, 1.011), (0.990, 1.008), (0.991, 1.001)]
    matmul_medians = [2.6768, 2.7160, 2.7170]
    matmul_intervals = [(0.939, 1.020), (0.946, 1.027)]
    return [
        {"name": "h200-chain", "sd": sd_of_logs(chain_ratios) / math.sqrt(2),
         "se": half_width_sd(chain_intervals, 8) / math.sqrt(2), "processes": 8,
         "source": "docs/gpu-results.md runs 5, 7, 8: chain A/A ratios and intervals"},
        {"name": "h200-matmul", "sd": sd_of_logs(matmul_medians),
         "se": half_width_sd(matmul_intervals, 3) / math.sqrt(2),
         "processes": 3, "source": "docs/gpu-results.md runs 2, 5, 7 medians; runs 4, 5 A/A intervals"},
        measured_profile("h200-chain-24", ["bench/results/between_runs_gpu_chain.json"]),
        measured_profile("h200-matmul-20", ["bench/results/between_runs_gpu.json"]),
        measured_profile("h200-matmul-50", ["bench/results/between_runs_gpu.json",
                                            "bench/results/between_runs_gpu_matmul30.json"]),
    ]


def measured_profile(name, paths):
    """A profile from bench/gpu_probe/between_runs.py's outputs (one session each): the standard deviation of all
    their runs' log statistics together (a shift between sessions counts as noise) or, if larger, the one from
    successive differences inside each session; the median standard error; the median number of processes."""
    sessions = [json.load(open(os.path.join(ROOT, p)))["runs"] for p in paths]
    logs = [[math.log(r["statistic_ms"]) for r in runs] for runs in sessions]
    diffs = [b - a for one in logs for a, b in zip(one, one[1:])]
    every = [r for runs in sessions for r in runs]
    sd = max(statistics.stdev([x for one in logs for x in one]), math.sqrt(statistics.fmean(d * d for d in diffs) / 2))
    return {"name": name, "sd": sd, "se": statistics.median(r["log_se"] for r in every),
            "processes": int(statistics.median(r["processes"] for r in every)),
            "source": f"{' + '.join(paths)}: {len(every)} back-to-back runs at default settings in {len(paths)} "
                      f"session{'s' if len(paths) > 1 else ''}"}


def scenarios(steps):
    out = [("flat", np.zeros)]
    for pct in steps:
        out.append((f"step {pct:g}%", lambda n, p=pct: np.where(np.arange(n) >= STEP_AT, math.log(1 + p / 100), 0.0)))
    out.append(("ramp 0.5%/commit",
                lambda n: np.where(np.arange(n) >= STEP_AT, (np.arange(n) - STEP_AT + 1) * math.log(1.005), 0.0)))
    return out


def simulate(rng, profile, level, histories):
    n = len(level)
    y = level + rng.normal(0, profile["sd"], size=(histories, n))
    k = profile["processes"]
    se = profile["se"] * np.sqrt(rng.chisquare(k - 1, size=(histories, n)) / (k - 1))
    return y, se


# The detector's options the command line may set (changepoint_sim's flags); unset ones keep the shipped defaults.
DETECTOR_OPTIONS = {"penalty": "the penalty", "widening": "the short-history widening",
                    "residual_widening": "the short-history widening of the second pass",
                    "second_pass": "second noise estimate (1: on, 0: the first pass alone)",
                    "probability": "the probability a change point needs", "min_effect": "the smallest step kept",
                    "hazard": "the prior chance of a step per run", "step_sd": "the prior spread of a step's log size",
                    "min_segment": "the runs on each side of a step"}


def run_detector(sim, y, se, options):
    lines = "\n".join(" ".join(f"{a:.9g},{b:.9g}" for a, b in zip(yr, sr)) for yr, sr in zip(y, se)) + "\n"
    argv = [sim]
    for name, value in options.items():
        argv += [] if value is None else ["--" + name.replace("_", "-"), f"{value:g}"]
    out = subprocess.run(argv, input=lines, capture_output=True, text=True, check=True).stdout.splitlines()
    stored = []
    for line in out:
        changes = []
        for item in filter(None, line.split(";")):
            look, index, ratio, lo, hi, p = item.split()
            changes.append({"look": int(look), "index": int(index), "ratio": float(ratio), "ci": [float(lo), float(hi)],
                            "probability": float(p)})
        stored.append(changes)
    return stored


def consecutive_flags(y, se):
    """The looks (run indexes) at which the consecutive-runs check calls the newest run slower than the one before."""
    d = y[:, 1:] - y[:, :-1]
    sd = np.sqrt(se[:, 1:] ** 2 + se[:, :-1] ** 2)
    slower = (d - Z95 * sd) > math.log(1 + ROPE)
    return [[int(t) for t in np.nonzero(row)[0] + 1] for row in slower]


def score(name, found_lists, is_step, runs, histories):
    """found_lists: per history, (look, index, slower) triples. Returns detection, delay and false-alarm figures."""
    detected, delays, false = 0, [], 0
    for found in found_lists:
        hit = None
        for look, index, slower in found:
            genuine = is_step and slower and index >= STEP_AT - 2 and (index <= STEP_AT + 2 or name.startswith("ramp"))
            if genuine and hit is None:
                hit = int(look) - STEP_AT + 1
            elif not genuine:
                false += 1
        if hit is not None:
            detected += 1
            delays.append(hit)
    return {
        "detected": detected / histories if is_step else None,
        "within_3": sum(d <= 3 for d in delays) / histories if is_step else None,
        "median_delay": statistics.median(delays) if delays else None,
        "false_per_1000_runs": 1000 * false / (histories * runs),
    }


def scan_cost(sim, rng, profile, runs=200, histories=20):
    """Seconds per scan of a history of up to `runs` runs: the CLI scans after every run, `runs` scans a history."""
    y, se = simulate(rng, profile, np.zeros(runs), histories)
    lines = "\n".join(" ".join(f"{a:.9g},{b:.9g}" for a, b in zip(yr, sr)) for yr, sr in zip(y, se)) + "\n"
    start = time.perf_counter()
    subprocess.run([sim], input=lines, capture_output=True, text=True, check=True)
    return (time.perf_counter() - start) / (runs * histories)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--histories", type=int, default=500)
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=20261203)
    ap.add_argument("--sim", default=os.path.join(ROOT, "build/bin/changepoint_sim"))
    for name, what in DETECTOR_OPTIONS.items():
        ap.add_argument("--" + name.replace("_", "-"), type=float, help=f"the detector's {what[4:]} (default: shipped)")
    ap.add_argument("--steps", default="1,2,3,5", help="step sizes in percent, comma-separated")
    ap.add_argument("--profiles", default="cpu,h200-chain,h200-matmul,h200-matmul-20,h200-chain-24,h200-matmul-50", help="noise profiles, comma-separated")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/results/changepoint_sim.json"))
    args = ap.parse_args()
    if not os.access(args.sim, os.X_OK):
        sys.exit(f"changepoint_sim: {args.sim} is not built; run: ninja -C build changepoint_sim")
    rng = np.random.default_rng(args.seed)
    wanted = args.profiles.split(",")
    profiles = [p for p in [cpu_profile()] + h200_profiles() if p["name"] in wanted]
    if len(profiles) != len(wanted):
        known = ", ".join(p["name"] for p in [cpu_profile()] + h200_profiles())
        sys.exit(f"changepoint_sim: --profiles {args.profiles}: the profiles are {known}")
    steps = [float(x) for x in args.steps.split(",")]
    rows = []
    for profile in profiles:
        for name, shape in scenarios(steps):
            level = shape(args.runs)
            y, se = simulate(rng, profile, level, args.histories)
            stored = run_detector(args.sim, y, se, {n: getattr(args, n) for n in DETECTOR_OPTIONS})
            detector = score(name, [[(c["look"], c["index"], c["ratio"] > 1) for c in s] for s in stored],
                             name != "flat", args.runs, args.histories)
            threshold = score(name, [[(t, t, True) for t in flags] for flags in consecutive_flags(y, se)],
                              name != "flat", args.runs, args.histories)
            rows.append({"profile": profile["name"], "scenario": name, "detector": detector, "consecutive": threshold})
    print(f"{args.histories} histories of {args.runs} runs per row; step at run {STEP_AT + 1}; "
          f"seed {args.seed}\n")
    for p in profiles:
        print(f"  {p['name']}: per-run sd {100 * p['sd']:.2f}%, reported se {100 * p['se']:.2f}%, "
              f"{p['processes']} processes ({p['source']})")
    print("\n| profile | scenario | change points: found | within 3 runs | median delay | false / 1000 runs "
          "| consecutive check: found | within 3 runs | false / 1000 runs |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")

    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}%"

    for r in rows:
        d, c = r["detector"], r["consecutive"]
        delay = "-" if d["median_delay"] is None else f"{d['median_delay']:g}"
        print(f"| {r['profile']} | {r['scenario']} | {pct(d['detected'])} | {pct(d['within_3'])} | {delay} | "
              f"{d['false_per_1000_runs']:.2f} | {pct(c['detected'])} | {pct(c['within_3'])} | "
              f"{c['false_per_1000_runs']:.2f} |")
    cost = scan_cost(args.sim, rng, profiles[0])
    print(f"\nscan cost: {1e3 * cost:.3f} ms per scan, averaged over the scans after each run of 20 histories of "
          f"200 runs (histories of 1 to 200 runs; the store reads at most 200)")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        command = " ".join(["python3", "bench/changepoint_sim.py"] + sys.argv[1:])
        json.dump({"bench": "changepoint_sim", "command": command,
                   "histories": args.histories, "runs": args.runs, "step_at": STEP_AT, "seed": args.seed,
                   "steps": steps,
                   "profiles": profiles, "rows": rows, "scan_cost_s": cost}, f, indent=1)


if __name__ == "__main__":
    main()
