#!/usr/bin/env python3
"""Writes a synthetic rnx.run/v1 document (default: 16 configurations x 50 samples) for the service benches."""
import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "support"))
from rnx_env import env_id_of  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--project", default="bench")
    p.add_argument("--branch", default="main")
    p.add_argument("--base-branch", default="main")
    p.add_argument("--pull-request", type=int, default=None)
    p.add_argument("--commit", default="0000000")
    p.add_argument("--cpu", default="bench cpu", help="the machine's CPU name (another name: another env_id)")
    p.add_argument("--kernels", type=int, default=4)
    p.add_argument("--batches", type=int, default=4)
    p.add_argument("--samples", type=int, default=50)
    p.add_argument("--scale", type=float, default=1.0, help="multiplies every time (1.2 = 20%% slower)")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    results = []
    for k in range(a.kernels):
        for b in range(a.batches):
            base = (1.0 + k) * (1 + b * 0.5)
            results.append({
                "kernel": f"kernel{k}", "runtime": "eager", "dtype": "float32", "batch": 2 ** b,
                "device": "cuda:0", "status": "ok",
                "samples_ms": [round(base * a.scale * rng.gauss(1.0, 0.01), 6) for _ in range(a.samples)],
                "groups": [a.samples // 5] * 5 if a.samples % 5 == 0 else [], "unstable": False, "message": "",
            })
    # rnx-server refuses an env_id other than the one rnx computes from the environment's fields.
    environment = {"device": "NVIDIA H200", "cpu": a.cpu, "threads": 2}
    environment["env_id"] = env_id_of(environment)
    doc = {
        "schema": "rnx.run/v1", "project": a.project, "commit": a.commit, "branch": a.branch,
        "base_branch": a.base_branch, "created_at": "2026-12-02T10:00:00Z",
        "environment": environment,
        "results": results,
    }
    if a.pull_request is not None:
        doc["pull_request"] = a.pull_request
    print(json.dumps(doc, separators=(",", ":")))


if __name__ == "__main__":
    main()
