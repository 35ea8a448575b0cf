#!/usr/bin/env python3
"""Checks rnx's posterior probabilities against an independent numpy implementation of the same model.

The numpy side draws explicit Dirichlet weights and takes weighted medians/means by cumulative sums
(rnx samples the median's rank directly), and draws Student-t scale factors with numpy's generator.
Both sides use 20000 draws so Monte Carlo noise stays far below the 0.02 tolerance.
"""
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

DRAWS = 20000
TOLERANCE = 0.02


def weighted_stat(rng, x, stat, draws):
    w = rng.dirichlet(np.ones(len(x)), size=draws)
    if stat == "mean":
        return w @ x
    order = np.argsort(x)
    cum = np.cumsum(w[:, order], axis=1)
    idx = (cum < 0.5).sum(axis=1)
    return x[order][np.minimum(idx, len(x) - 1)]


def side_draws(rng, samples, groups, stat):
    if len(groups) < 2:
        return weighted_stat(rng, samples, stat, DRAWS)
    bounds = np.cumsum([0] + groups)
    logs = np.stack([np.log(weighted_stat(rng, samples[a:b], stat, DRAWS))
                     for a, b in zip(bounds[:-1], bounds[1:])], axis=1)
    k = len(groups)
    centre = logs.mean(axis=1)
    spread = logs.std(axis=1, ddof=1)
    return np.exp(centre + spread / np.sqrt(k) * rng.standard_t(k - 1, size=DRAWS))


def make_cases(rng):
    cases = []
    specs = [  # (n per group, groups, change, cv, drift)
        (30, 1, 1.00, 0.03, 0), (30, 1, 1.02, 0.03, 0), (30, 1, 1.04, 0.03, 0), (20, 1, 0.97, 0.02, 0),
        (50, 1, 1.01, 0.05, 0), (10, 1, 1.05, 0.04, 0), (100, 1, 0.98, 0.03, 0), (15, 1, 1.03, 0.06, 0),
        (10, 3, 1.00, 0.03, 0.02), (10, 3, 1.05, 0.02, 0.01), (8, 4, 0.96, 0.03, 0.02), (12, 5, 1.02, 0.02, 0.01),
        (10, 3, 1.03, 0.01, 0.005), (20, 2, 1.04, 0.02, 0.01),
    ]
    for i, (n, k, change, cv, drift) in enumerate(specs):
        sides = []
        for centre in (1.0, change):
            samples, groups = [], []
            for _ in range(k):
                offset = np.exp(rng.normal(0, drift)) if drift else 1.0
                samples += list(centre * offset * np.exp(rng.normal(0, cv, size=n)))
                groups.append(n)
            sides.append((np.round(samples, 9), groups if k > 1 else []))
        cases.append((f"k{i}", sides))
    return cases


def run_doc(cases, side):
    results = [{"kernel": name, "runtime": "eager", "dtype": "float32", "batch": 1, "device": "cpu",
                "status": "ok", "samples_ms": list(map(float, sides[side][0])), "groups": sides[side][1],
                "message": ""} for name, sides in cases]
    return {"schema": "rnx.run/v1", "project": "agreement", "environment": {"env_id": "e", "device": "cpu"},
            "results": results}


def main():
    rnx = sys.argv[1]
    rng = np.random.default_rng(20261202)
    cases = make_cases(rng)
    compared, worst, failures = 0, 0.0, []
    with tempfile.TemporaryDirectory() as tmp:
        base, head = pathlib.Path(tmp, "base.json"), pathlib.Path(tmp, "head.json")
        base.write_text(json.dumps(run_doc(cases, 0)))
        head.write_text(json.dumps(run_doc(cases, 1)))
        for stat in ("median", "mean"):
            out = subprocess.run([rnx, "compare", str(base), str(head), "--format", "json", "--statistic", stat,
                                  "--resamples", str(DRAWS)], capture_output=True, text=True, timeout=300)
            if out.returncode not in (0, 1):
                print(out.stderr)
                return 1
            verdict = {c["kernel"]: c for c in json.loads(out.stdout)["configs"]}
            for name, sides in cases:
                b = side_draws(rng, sides[0][0], sides[0][1], stat)
                h = side_draws(rng, sides[1][0], sides[1][1], stat)
                ratio = h / b
                ours = {"p_faster": np.mean(ratio < 0.98), "p_slower": np.mean(ratio > 1.02)}
                ours["p_equivalent"] = 1 - ours["p_faster"] - ours["p_slower"]
                for key, value in ours.items():
                    diff = abs(value - verdict[name][key])
                    worst = max(worst, diff)
                    if diff > TOLERANCE:
                        failures.append(f"{stat} {name} {key}: rnx {verdict[name][key]:.4f} numpy {value:.4f}")
                print(f"{stat:6} {name:4} rnx P(f,e,s)=({verdict[name]['p_faster']:.3f}, "
                      f"{verdict[name]['p_equivalent']:.3f}, {verdict[name]['p_slower']:.3f})  numpy=("
                      f"{ours['p_faster']:.3f}, {ours['p_equivalent']:.3f}, {ours['p_slower']:.3f})")
                compared += 1
    print(f"{compared} cases compared, largest difference {worst:.4f} (tolerance {TOLERANCE})")
    for f in failures:
        print("MISMATCH " + f)
    return 1 if failures or compared < 20 else 0


if __name__ == "__main__":
    sys.exit(main())
