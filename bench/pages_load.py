#!/usr/bin/env python3
"""Page load of rnx-server's pages for a big project: 5,000 runs of 48 configurations in three environments
(pull requests judged, an accepted slowdown, an abstain; tests/service/pages_seed.py), then each page and the JSON
behind it asked for again and again over one keep-alive connection. A load is the time from sending the request to
having read the whole body (server time + transfer). Server CPU ms is the server
process's own CPU time (utime + stime) per load, which other work on the machine does not change. Prints a table
and writes bench/results/pages_load.json.

  python3 bench/pages_load.py --server build-lite/bin/rnx-server [--runs 5000] [--requests 200]
"""
import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests", "service"))
import pages_seed  # noqa: E402


def percentile(values, q):
    values = sorted(values)
    k = (len(values) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", required=True)
    ap.add_argument("--runs", type=int, default=5000)
    ap.add_argument("--requests", type=int, default=200, help="loads per page kind")
    ap.add_argument("--db", help="reuse (or keep) this database instead of a temporary one")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="rnx-pages-load-")
    db = a.db or os.path.join(work, "rnx.sqlite")
    fresh = not os.path.exists(db)
    server = None
    try:
        def admin(*args):
            return subprocess.run([a.server, "admin", *args, "--db", db], check=True, capture_output=True,
                                  text=True).stdout.strip()
        if fresh:
            admin("project", "create", "bench")
            admin("project", "visibility", "bench", "public")
        token = admin("token", "create", "--project", "bench", "--scope", "admin")
        server = subprocess.Popen([a.server, "serve", "--db", db, "--listen", "127.0.0.1:0", "--threads", "2",
                                   "--synchronous", "normal"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True)
        line = server.stdout.readline()
        base = line.split("listening on ")[1].split(" ")[0]
        facts_path = db + ".facts.json"
        if fresh:
            t0 = time.time()
            facts = pages_seed.seed(base, token, "bench", runs=a.runs, n_kernels=6, batches=(1, 2, 4, 8), envs=3,
                                    samples=40, pr_every=10)
            print("seeded %d runs x %d configurations in %.0f s" % (len(facts["runs"]), len(facts["configs"]),
                                                                    time.time() - t0))
            json.dump(facts, open(facts_path, "w"))
        facts = json.load(open(facts_path))
        parsed = urllib.parse.urlparse(base)
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
        envs = facts["envs"]
        newest = ",".join(facts["newest_by_env"][e] for e in envs)
        prices = urllib.parse.quote("%s:3.72,%s:1.29,%s:0.71" % tuple(envs))
        configs = [urllib.parse.quote(c, safe="") for c in facts["configs"]]
        runs = [r["id"] for r in facts["pr_runs"]]
        kinds = {
            "overview page": lambda i: "/projects/bench",
            "history page (log, 3 envs)": lambda i: "/projects/bench/configs/%s?scale=log" % configs[i % len(configs)],
            "run page": lambda i: "/runs/%s" % runs[i % len(runs)],
            "compare page (3 runs, prices)": lambda i: "/compare?runs=%s&prices=%s" % (newest, prices),
            "overview JSON": lambda i: "/api/v1/projects/bench/overview",
            "history JSON": lambda i: "/api/v1/projects/bench/configs/%s/history" % configs[i % len(configs)],
            "run evidence JSON": lambda i: "/api/v1/runs/%s/evidence" % runs[i % len(runs)],
            "chart.min.js (cached by browsers)": lambda i: "/assets/chart.min.js",
        }
        def server_cpu_s():
            # utime + stime of the server process: its own work, whatever else runs on the machine.
            fields = open("/proc/%d/stat" % server.pid).read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        rows = []
        for name, path_of in kinds.items():
            times = []
            sizes = []
            cpu_before = None
            for i in range(a.requests + 5):
                path = path_of(i)
                t0 = time.perf_counter()
                conn.request("GET", path)
                res = conn.getresponse()
                body = res.read()
                elapsed = (time.perf_counter() - t0) * 1000
                if res.status != 200:
                    sys.exit("pages_load: %s answered %d: %s" % (path, res.status, body[:200]))
                if i == 4:
                    cpu_before = server_cpu_s()
                if i >= 5:  # the first few warm the page cache of SQLite and the OS
                    times.append(elapsed)
                    sizes.append(len(body))
            cpu_ms = (server_cpu_s() - cpu_before) * 1000 / len(times)
            rows.append({"page": name, "requests": len(times), "server_cpu_ms": cpu_ms, "p50_ms": percentile(times, 0.5),
                         "p95_ms": percentile(times, 0.95), "p99_ms": percentile(times, 0.99), "max_ms": max(times),
                         "mean_kb": statistics.mean(sizes) / 1024})
        print("\n%d runs, %d configurations, %d environments; %d loads per page, one keep-alive connection"
              % (len(facts["runs"]), len(facts["configs"]), len(envs), a.requests))
        print("load average at the end: %.1f" % os.getloadavg()[0])
        print("| page | p50 ms | p95 ms | p99 ms | max ms | server CPU ms | size kB |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            print("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f |" % (r["page"], r["p50_ms"], r["p95_ms"], r["p99_ms"],
                                                                       r["max_ms"], r["server_cpu_ms"], r["mean_kb"]))
        os.makedirs(os.path.join(root, "bench", "results"), exist_ok=True)
        with open(os.path.join(root, "bench", "results", "pages_load.json"), "w") as f:
            json.dump({"runs": len(facts["runs"]), "configs": len(facts["configs"]), "environments": len(envs),
                       "rows": rows}, f, indent=1)
        worst = max(r["p99_ms"] for r in rows if not r["page"].startswith("chart"))
        print("\nworst page p99: %.1f ms (target < 200 ms): %s" % (worst, "met" if worst < 200 else "NOT met"))
        return 0 if worst < 200 else 1
    finally:
        if server:
            server.terminate()
            server.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
