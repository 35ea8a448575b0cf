#!/usr/bin/env python3
"""rnx import end to end, on real harness output: a Google Benchmark program and a pytest-benchmark suite are run
three times a side, alternating sides (base, identical head, slowed head), imported, validated with check-jsonschema
against docs/schema/run.schema.json, and compared: identical code must never be called faster or slower, the slowed
code (RNX_TEST_SLOWDOWN=4: four times the work, more than this 2-core machine drifts
between processes, up to 2x) must be called slower.

  e2e.py gbench RNX SCHEMA GBENCH_PROGRAM
  e2e.py pytest-benchmark RNX SCHEMA
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
PROCESSES = 3  # a side: each file is one process group, so run-to-run drift widens the posterior


def run(cmd, env=None, ok=(0,), **kw):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, **kw)
    if out.returncode not in ok:
        sys.exit(f"FAIL: {' '.join(map(str, cmd))} exited {out.returncode}\n{out.stdout}\n{out.stderr}")
    return out


def process_medians(result):
    medians, start = [], 0
    for count in result["groups"]:
        xs = sorted(result["samples_ms"][start:start + count])
        start += count
        medians.append(round(xs[len(xs) // 2] * 1e3, 2))
    return medians


def harness_command(fmt, program, out_file):
    if fmt == "gbench":
        return [program, "--benchmark_repetitions=10", "--benchmark_enable_random_interleaving=true",
                "--benchmark_min_time=0.005", f"--benchmark_out={out_file}", "--benchmark_out_format=json"]
    # Plugins of other installed packages are not loaded: only pytest-benchmark, so each run starts in a second.
    return [sys.executable, "-m", "pytest", "-q", "-p", "pytest_benchmark.plugin", "-p", "no:cacheprovider",
            str(HERE / "pytest_suite"), f"--benchmark-json={out_file}",
            "--benchmark-min-rounds=15", "--benchmark-max-time=0.05", "--benchmark-warmup=on",
            "--benchmark-timer=time.process_time"]


def main():
    fmt, rnx, schema = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    program = str(pathlib.Path(sys.argv[4]).resolve()) if fmt == "gbench" else None
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        files = {"base": [], "same": [], "slow": []}
        # Alternate the sides so that every side shares every spell of a busy machine.
        for p in range(PROCESSES):
            for side in files:
                env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
                env["RNX_TEST_SLOWDOWN"] = "4" if side == "slow" else "1"
                out_file = tmp / f"{side}-{p}.json"
                run(harness_command(fmt, program, out_file), env=env, cwd=tmp)
                files[side].append(str(out_file))
        docs = {}
        for side, paths in files.items():
            docs[side] = tmp / f"{side}.run.json"
            # CPU time: the wall clock of a CPU-bound benchmark on a shared 2-core machine includes waiting for a core.
            extra = ["--gbench-time", "cpu"] if fmt == "gbench" else []
            out = run([rnx, "import", "--format", fmt, *paths, "--out", str(docs[side]), "--project", "import-e2e",
                       "--commit", side, *extra])
            print(out.stdout.strip())
        run(["check-jsonschema", "--schemafile", str(schema / "run.schema.json"), *map(str, docs.values())])
        base = json.loads(docs["base"].read_text())
        for r in base["results"]:
            if len(r["groups"]) != PROCESSES or min(r["groups"]) < 8 or sum(r["groups"]) != len(r["samples_ms"]):
                failures.append(f"{r['kernel']}: samples {len(r['samples_ms'])} in groups {r['groups']}")
        kernels = sorted(r["kernel"] for r in base["results"])
        print("configurations:", ", ".join(f"{r['kernel']}/{r['dtype']}/b{r['batch']}" for r in base["results"]))
        expected = {"gbench": ["saxpy_kernel[n=1024]", "sum_kernel[arg0=4096]"],
                    "pytest-benchmark": ["test_kernels.py::test_dot[n=2000]", "test_kernels.py::test_sort"]}[fmt]
        if [k.split("/")[-1] for k in kernels] != expected:
            failures.append(f"configurations {kernels}, expected {expected}")
        for head, allowed in (("same", {"equivalent", "abstain"}), ("slow", {"slower"})):
            out = run([rnx, "compare", str(docs["base"]), str(docs[head]), "--format", "json"], ok=(0, 1))
            verdict = json.loads(out.stdout)
            for c in verdict["configs"]:
                line = (f"{head}: {c['kernel']}/{c['dtype']}/b{c['batch']} {c['decision']} ratio {c['ratio']:.3f} "
                        f"[{c['ci95'][0]:.3f}, {c['ci95'][1]:.3f}]")
                print(line)
                if c["decision"] not in allowed:
                    failures.append(line)
        for side, doc in docs.items():
            for r in json.loads(doc.read_text())["results"]:
                print(f"{side}: {r['kernel']} process medians (µs):", process_medians(r))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
