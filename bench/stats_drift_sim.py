#!/usr/bin/env python3
"""Design study behind docs/statistics.md: false 'slower' rates on identical code under run-to-run drift
for three posteriors of a side's median: flat Bayesian bootstrap, Dirichlet over processes, and rnx's
Student-t over processes. Drift: log-normal offset (sigma 5%) per process on top of 3% within-process
noise, 10 samples per process. Prints a Markdown table. Usage: bench/stats_drift_sim.py [PAIRS]"""
import sys

import numpy as np

DRAWS = 2000


def medians(rng, groups):
    # Dirichlet-weighted median of sorted samples = sample at rank Binomial(n-1, 1/2).
    return np.stack([np.sort(g)[rng.binomial(len(g) - 1, 0.5, size=DRAWS)] for g in groups], axis=1)


def flat(rng, groups):
    x = np.sort(np.concatenate(groups))
    return np.log(x[rng.binomial(len(x) - 1, 0.5, size=DRAWS)])


def dirichlet_over_processes(rng, groups):
    w = rng.dirichlet(np.ones(len(groups)), size=DRAWS)
    return np.log((w * medians(rng, groups)).sum(axis=1))


def student_t_over_processes(rng, groups):
    logs = np.log(medians(rng, groups))
    k = len(groups)
    return logs.mean(axis=1) + logs.std(axis=1, ddof=1) / np.sqrt(k) * rng.standard_t(k - 1, size=DRAWS)


def false_slower(rng, k, posterior, pairs):
    hits = 0
    for _ in range(pairs):
        sides = [[np.exp(rng.normal(0, 0.05)) * np.exp(rng.normal(0, 0.03, size=10)) for _ in range(k)]
                 for _ in range(2)]
        log_ratio = posterior(rng, sides[1]) - posterior(rng, sides[0])
        hits += np.mean(log_ratio > np.log(1.02)) >= 0.95
    return hits / pairs


def main():
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rng = np.random.default_rng(20261202)
    print(f"false 'slower' rate on identical code, {pairs} pairs per cell\n")
    print("| processes a side | flat bootstrap | Dirichlet over processes | Student-t over processes (rnx) |")
    print("|---:|---:|---:|---:|")
    for k in (3, 4, 5):
        row = [false_slower(rng, k, p, pairs) for p in (flat, dirichlet_over_processes, student_t_over_processes)]
        print(f"| {k} | " + " | ".join(f"{r:.3f}" for r in row) + " |")


if __name__ == "__main__":
    main()
