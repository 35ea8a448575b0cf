#!/usr/bin/env python3
"""Fills a running rnx-server with a realistic history for the pages (used by tests/service/browser_pages.py and
bench/pages_load.py): pushes to main in several environments (each a baseline), pull requests judged against them,
one intended slowdown that is accepted as the new baseline, and one unstable configuration that is judged abstain.

  python3 tests/service/pages_seed.py --url http://127.0.0.1:PORT --token TOKEN --runs 60 --kernels 3
"""
import argparse
import http.client
import json
import os
import random
import sys
import urllib.parse
from datetime import datetime, timedelta, timezone

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "support"))
from rnx_env import env_id_of  # noqa: E402

# Environments as rnx bench fingerprints them; speed is the time factor against the first.
ENVIRONMENTS = [
    {"device": "NVIDIA H200", "cpu": "Intel Xeon Platinum 8480+", "speed": 1.0},
    {"device": "NVIDIA A100-SXM4-80GB", "cpu": "AMD EPYC 7763", "speed": 1.85},
    {"device": "NVIDIA L4", "cpu": "Intel Xeon Gold 6338", "speed": 3.4},
]


def environment_of(env):
    """The run document's environment: device, cpu, threads 2, torch 2.11.0 and cuda 13.0, and the env_id rnx
    computes from them (rnx-server refuses any other)."""
    out = {"device": env["device"], "cpu": env["cpu"], "threads": 2, "torch": "2.11.0", "cuda": "13.0"}
    out["env_id"] = env_id_of(out)
    return out


for _env in ENVIRONMENTS:
    _env["env_id"] = environment_of(_env)["env_id"]
KERNELS = ["softmax", "layernorm", "attention", "gelu", "matmul", "rmsnorm"]
RUNTIMES = ["eager", "compile"]


class Client:
    def __init__(self, url, token):
        parsed = urllib.parse.urlparse(url)
        self.conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
        self.token = token

    def post(self, path, body):
        data = json.dumps(body, separators=(",", ":")).encode()
        self.conn.request("POST", path, body=data, headers={"Authorization": "Bearer " + self.token,
                                                            "Content-Type": "application/json"})
        res = self.conn.getresponse()
        payload = res.read()
        if res.status >= 300:
            sys.exit(f"pages_seed: POST {path} answered {res.status}: {payload[:300]!r}")
        return json.loads(payload)


def configs(n_kernels, batches):
    out = []
    for k in KERNELS[:n_kernels]:
        for runtime in RUNTIMES:
            for b in batches:
                out.append((k, runtime, b))
    return out


def document(project, env, when, commit, branch, pull_request, cfgs, level, rng, samples, processes, unstable=None):
    results = []
    for (kernel, runtime, batch) in cfgs:
        centre = (0.08 + 0.05 * KERNELS.index(kernel)) * (1 + 0.6 * batch) * (0.7 if runtime == "compile" else 1.0)
        centre *= env["speed"] * level.get(kernel, 1.0)
        values = []
        per = samples // processes
        for _ in range(processes):
            drift = rng.gauss(1.0, 0.003)  # each worker process sits a little apart
            values += [round(centre * drift * rng.lognormvariate(0, 0.012), 6) for _ in range(per)]
        r = {"kernel": kernel, "runtime": runtime, "dtype": "float32", "batch": batch, "device": "cuda:0",
             "status": "ok", "samples_ms": values, "groups": [per] * processes, "unstable": False, "message": ""}
        if unstable == (kernel, runtime, batch):
            r["unstable"] = True
            r["message"] = "samples are bimodal (two clusters 9% apart): re-run on a quieter machine"
        results.append(r)
    doc = {"schema": "rnx.run/v1", "project": project, "commit": commit, "branch": branch, "base_branch": "main",
           "created_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
           "environment": environment_of(env),
           "results": results}
    if pull_request is not None:
        doc["pull_request"] = pull_request
    return doc


def seed(url, token, project="demo", runs=60, n_kernels=3, batches=(1, 8), envs=3, samples=40, processes=5,
         pr_every=6, seed_value=7, start="2026-09-01T08:00:00Z"):
    """Uploads `runs` runs; returns what the tests need to know (ids of the accepted, abstain and PR runs)."""
    rng = random.Random(seed_value)
    client = Client(url, token)
    cfgs = configs(n_kernels, list(batches))
    when = datetime.strptime(start, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    level = {}
    facts = {"runs": [], "pr_runs": [], "accepted_run": None, "abstain_run": None, "newest_by_env": {},
             "configs": ["%s/%s/float32/b%d" % c for c in cfgs], "envs": [e["env_id"] for e in ENVIRONMENTS[:envs]]}
    accepted_at = runs // 2
    abstain_at = (runs * 3) // 4
    for i in range(runs):
        env = ENVIRONMENTS[i % envs]
        when += timedelta(hours=3)
        commit = "%040x" % rng.getrandbits(160)
        is_pr = i % pr_every == pr_every - 1 or i in (accepted_at, abstain_at)
        pr = 100 + i if is_pr else None
        branch = "feature-%d" % i if is_pr else "main"
        run_level = dict(level)
        unstable = None
        if i == accepted_at:
            run_level[KERNELS[0]] = level.get(KERNELS[0], 1.0) * 1.15  # an intended 15% slowdown
        if i == abstain_at:
            unstable = cfgs[-1]
        doc = document(project, env, when, commit, branch, pr, cfgs, run_level, rng, samples, processes, unstable)
        stored = client.post("/api/v1/runs", doc)
        run_id = stored["id"]
        facts["runs"].append(run_id)
        facts["newest_by_env"][env["env_id"]] = run_id
        if is_pr:
            verdict = client.post("/api/v1/runs/%s/verdict" % run_id, {})
            facts["pr_runs"].append({"id": run_id, "verdict": verdict["verdict"]})
            if i == accepted_at:
                client.post("/api/v1/baselines", {"run_id": run_id, "accepted_by": "maintainer <on-call & perf>",
                                                  "reason": "softmax <b>15%</b> slower: exact max for stability"})
                facts["accepted_run"] = run_id
                # The change lands on main: every environment measures the slower softmax from here on.
                level[KERNELS[0]] = run_level[KERNELS[0]]
            if i == abstain_at:
                facts["abstain_run"] = run_id
    return facts


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--project", default="demo")
    p.add_argument("--runs", type=int, default=60)
    p.add_argument("--kernels", type=int, default=3)
    p.add_argument("--batches", default="1,8")
    p.add_argument("--envs", type=int, default=3)
    p.add_argument("--samples", type=int, default=40)
    p.add_argument("--pr-every", type=int, default=6)
    a = p.parse_args()
    facts = seed(a.url, a.token, a.project, a.runs, a.kernels, [int(b) for b in a.batches.split(",")], a.envs,
                 a.samples, pr_every=a.pr_every)
    print(json.dumps(facts))


if __name__ == "__main__":
    main()
