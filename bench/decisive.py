#!/usr/bin/env python3
"""How decisive the gate is on this machine: A/A, calibrated 5% and 2% slowdowns and the demo's naive softmax,
paired (`rnx bench --pair`, in-process) and stored (separate `rnx bench` invocations), each repeated.

    python3 bench/decisive.py [--reps 20] [--modes paired,stored] [--rnx build/bin/rnx] [--out bench/results/decisive.json]
    python3 bench/decisive.py --preset gpu --modes paired    # on a CUDA machine (tests/device/run_gpu.sh decisive)

The kernels are the demo's (softmax, layernorm) and the attention example, at batch 1 and 8, CPU float32, one
thread, in a scratch git repository with one branch per scenario:

  aa      a documentation commit: the kernels are unchanged
  slow5   every kernel followed by a busy wait lasting 5% of its own call (the same kernel doing 5% more work)
  slow2   the same with 2%
  naive   softmax swapped for the hand-written four-pass version (the demo's slowed pull request)

The true ratio of slow5 and slow2 is measured once by a long paired run (8 processes, no early stop) and printed
beside the detection rates. Each paired repetition is one `rnx bench --pair main` on the scenario's branch; each
stored repetition is one `rnx bench` of main and one of the scenario's branch, as a baseline and a pull request
measured by separate jobs would be. Every verdict comes from `rnx compare BASE HEAD --format json`.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MANIFEST = """[project]
name = "rnx-decisive"

[defaults]
runtimes = ["eager"]
dtypes   = ["float32"]
batch    = [1, 8]
device   = "cpu"

[bench]
processes     = 3
max_processes = 6
samples       = 400
min_samples   = 8
budget_ms     = 300
warmup_ms     = 100
threads       = 1

[[kernel]]
name   = "softmax"
path   = "kernels/softmax.py"
inputs = { x = "B,64,1024" }

[[kernel]]
name   = "layernorm"
path   = "kernels/layernorm.py"
inputs = { x = "B,64,1024" }
tolerance = { float32 = { rtol = 1e-5, atol = 1e-5 } }

[[kernel]]
name   = "attention"
path   = "kernels/attention.py"
inputs = { q = "B,8,128,64", k = "B,8,128,64", v = "B,8,128,64" }
tolerance = { float32 = { rtol = 1e-4, atol = 1e-5 } }

[gate]
rope        = 0.02
probability = 0.95
"""

# Appended to a kernel file: the same kernel, then a busy wait as long as FRACTION of the call it just made. The
# extra work scales with the kernel's own time on every machine and in every spell of it.
SLOWDOWN = """

# rnx bench/decisive.py: the kernel above doing {percent}% more work (a busy wait for {percent}% of its own call).
import time as _rnx_time

_rnx_original_run = run


def run(*args):
    start = _rnx_time.perf_counter()
    out = _rnx_original_run(*args)
    end = start + (_rnx_time.perf_counter() - start) * {factor}
    while _rnx_time.perf_counter() < end:
        pass
    return out
"""

# The GPU preset: kernels that fill an H200, a ±1% band (in-process paired GPU ratios are that tight), and a 2%
# slowdown made of real device work: one more matrix product in a chain of 50, or the same operation again on a
# fiftieth of the rows.
GPU_MANIFEST = """[project]
name = "rnx-decisive-gpu"

[defaults]
runtimes = ["eager"]
dtypes   = ["float32"]
batch    = [1]
device   = "cuda"

[bench]
processes     = 3
max_processes = 5
samples       = 200
min_samples   = 8
budget_ms     = 400
warmup_ms     = 100

[[kernel]]
name   = "chain"
path   = "kernels/chain.py"
inputs = { x = "B,1024", w = "1024,1024" }
batch  = [2048]
tolerance = { float32 = { rtol = 1e-3, atol = 1e-3 } }

[[kernel]]
name   = "softmax"
path   = "kernels/softmax.py"
inputs = { x = "B,4096,8192" }

[[kernel]]
name   = "matmul"
path   = "kernels/matmul.py"
inputs = { a = "B,4096,4096", b = "4096,4096" }
dtypes = ["bfloat16"]
tolerance = { bfloat16 = { rtol = 3e-2, atol = 3e-1 } }

[gate]
rope        = 0.01
probability = 0.95
"""

GPU_KERNELS = {
    "chain": ("# A chain of REPS dependent matrix products.\nimport torch\n\nREPS = 50\n\n\n"
              "def run(x, w):\n    w = w * (1.0 / w.shape[0] ** 0.5)\n    for _ in range(REPS):\n        x = x @ w\n"
              "    return x\n"),
    "softmax": "import torch\n\n\ndef run(x):\n    return torch.softmax(x, dim=-1)\n",
    "matmul": "import torch\n\n\ndef run(a, b):\n    return a @ b\n",
}
GPU_SLOW2 = {
    "chain": lambda text: text.replace("REPS = 50", "REPS = 51"),
    "softmax": lambda text: text.replace("    return torch.softmax(x, dim=-1)",
                                         "    out = torch.softmax(x, dim=-1)\n"
                                         "    torch.softmax(x.narrow(-2, 0, x.shape[-2] // 50), dim=-1)  # 2% more rows\n"
                                         "    return out"),
    "matmul": lambda text: text.replace("    return a @ b",
                                        "    out = a @ b\n    a.narrow(-2, 0, a.shape[-2] // 50) @ b  # 2% more rows\n"
                                        "    return out"),
}

SCENARIOS = ["aa", "slow5", "slow2", "naive"]
GPU_SCENARIOS = ["aa", "slow2"]
TIME_LINE = re.compile(r"time: ([\d.]+) s in all: (\d+) worker processes started in ([\d.]+) s, warm-up ([\d.]+) s, "
                       r"sampling ([\d.]+) s, other ([\d.]+) s")


def git(repo, *args):
    subprocess.run(["git", "-C", repo, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def new_repo(work, files):
    """A scratch repository whose main branch holds `files` (path: text) and the manifest (as rnx.toml)."""
    repo = os.path.join(work, "repo")
    os.makedirs(os.path.join(repo, "kernels"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "user.email", "bench@example.invalid")
    for path, text in files.items():
        with open(os.path.join(repo, path), "w") as f:
            f.write(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return repo


def add_branch(repo, name, change):
    """A branch off main where `change(repo)` edited the files; "aa" branches only add a README."""
    git(repo, "checkout", "-q", "-b", name, "main")
    if name == "aa":
        with open(os.path.join(repo, "README.md"), "w") as f:
            f.write("docs only\n")
    else:
        change(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", name)
    git(repo, "checkout", "-q", "main")


def edit(path, change):
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(change(text))


def make_gpu_repo(work):
    files = {os.path.join("kernels", name + ".py"): text for name, text in GPU_KERNELS.items()}
    repo = new_repo(work, {**files, "rnx.toml": GPU_MANIFEST})
    for scenario in GPU_SCENARIOS:
        add_branch(repo, scenario, lambda r: [edit(os.path.join(r, "kernels", name + ".py"), change)
                                              for name, change in GPU_SLOW2.items()])
    return repo


def make_repo(work):
    def read(name):
        with open(os.path.join(ROOT, "examples/kernels", name)) as f:
            return f.read()
    repo = new_repo(work, {"kernels/softmax.py": read("softmax_fused.py"),
                           "kernels/layernorm.py": read("layernorm_fused.py"),
                           "kernels/attention.py": read("attention.py"), "rnx.toml": MANIFEST})
    naive = read("softmax.py")

    def slow(percent):
        def change(r):
            for kernel in ("softmax", "layernorm", "attention"):
                edit(os.path.join(r, "kernels", kernel + ".py"),
                     lambda text: text + SLOWDOWN.format(percent=percent, factor=1 + percent / 100))
        return change

    for name in SCENARIOS:
        if name == "naive":
            add_branch(repo, name, lambda r: edit(os.path.join(r, "kernels/softmax.py"), lambda _: naive))
        else:
            add_branch(repo, name, slow(int(name[len("slow"):])) if name.startswith("slow") else None)
    return repo


def bench(rnx, repo, out, pair=None, extra=()):
    cmd = [rnx, "bench", "--config", os.path.join(repo, "rnx.toml"), "--out", out, *extra]
    if pair:
        cmd += ["--pair", pair, "--base-out", out.replace(".json", "-base.json")]
    started = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - started
    if p.returncode != 0:
        sys.exit(f"decisive: {' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-3000:]}")
    m = TIME_LINE.search(p.stdout)
    split = dict(zip(["total", "workers", "start", "warmup", "sampling", "other"], map(float, m.groups()))) if m else {}
    split["wall"] = wall
    return split


def compare(rnx, base, head, rope):
    p = subprocess.run([rnx, "compare", base, head, "--format", "json", "--rope", str(rope)], stdout=subprocess.PIPE,
                       text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"decisive: rnx compare {base} {head} failed ({p.returncode})")
    return json.loads(p.stdout)


def unstable_sides(*paths):
    count = 0
    for path in paths:
        with open(path) as f:
            count += sum(1 for r in json.load(f)["results"] if r.get("unstable"))
    return count


def record(rows, mode, scenario, rep, verdict, split, unstable):
    for c in verdict["configs"]:
        rows.append({"mode": mode, "scenario": scenario, "rep": rep,
                     "config": f'{c["kernel"]}/b{c["batch"]}', "decision": c["decision"], "ratio": c["ratio"],
                     "mde": c.get("mde"), "ci95": c["ci95"]})
    rows.append({"mode": mode, "scenario": scenario, "rep": rep, "timing": split, "unstable_sides": unstable})


def summary(rows, truth):
    out = []
    for mode in ("paired", "stored"):
        for scenario in SCENARIOS:
            decided = [r for r in rows if r["mode"] == mode and r["scenario"] == scenario and "decision" in r]
            if not decided:
                continue
            n = len(decided)
            counts = {d: sum(1 for r in decided if r["decision"] == d) for d in ("faster", "slower", "equivalent",
                                                                                   "abstain")}
            timings = [r["timing"] for r in rows if r["mode"] == mode and r["scenario"] == scenario and "timing" in r]
            unstable = sum(r["unstable_sides"] for r in rows
                           if r["mode"] == mode and r["scenario"] == scenario and "timing" in r)
            mdes = [r["mde"] for r in decided if r["mde"] is not None]
            per_config = {}
            for r in decided:
                per_config.setdefault(r["config"], []).append(r["decision"])
            out.append({
                "mode": mode, "scenario": scenario, "decisions": n, **counts,
                "median_mde": statistics.median(mdes) if mdes else None,
                "median_wall_s": statistics.median(t["wall"] for t in timings),
                "median_split_s": {k: statistics.median(t.get(k, 0) for t in timings)
                                   for k in ("start", "warmup", "sampling", "other", "workers")},
                "unstable_sides": unstable,
                "per_config": {k: {d: v.count(d) for d in sorted(set(v))} for k, v in per_config.items()},
                "true_ratio": truth.get(scenario),
            })
    return out


def print_table(results):
    print(f'{"mode":7} {"scenario":8} {"n":>4} {"faster":>6} {"slower":>6} {"equiv":>6} {"abstain":>7} '
          f'{"MDE":>6} {"wall s":>7}  split (start / warm-up / sampling / other)  unstable sides')
    for s in results:
        split = s["median_split_s"]
        mde = f'{100 * s["median_mde"]:.1f}%' if s["median_mde"] is not None else "-"
        print(f'{s["mode"]:7} {s["scenario"]:8} {s["decisions"]:4} {s["faster"]:6} {s["slower"]:6} '
              f'{s["equivalent"]:6} {s["abstain"]:7} {mde:>6} {s["median_wall_s"]:7.1f}  '
              f'{split["start"]:.1f} / {split["warmup"]:.1f} / {split["sampling"]:.1f} / {split["other"]:.1f}'
              f'   {s["unstable_sides"]}')
        for config, counts in s["per_config"].items():
            print(f'          {config:14} {counts}')
        if s["true_ratio"]:
            print("          true ratios: " + ", ".join(f'{k} {v["ratio"]:.4f} [{v["ci95"][0]:.4f}, {v["ci95"][1]:.4f}]'
                                                     for k, v in s["true_ratio"].items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--modes", default="paired,stored")
    ap.add_argument("--scenarios", default=None, help="default: every scenario of the preset")
    ap.add_argument("--preset", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--rnx", default=os.path.join(ROOT, "build/bin/rnx"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/results/decisive.json"))
    ap.add_argument("--no-truth", action="store_true", help="skip the long runs that measure the true ratios")
    ap.add_argument("--time-limit-s", type=float, default=None,
                    help="start no repetition after this many seconds (the summary says how many ran)")
    args = ap.parse_args()
    modes = args.modes.split(",")
    all_scenarios = GPU_SCENARIOS if args.preset == "gpu" else SCENARIOS
    rope = 0.01 if args.preset == "gpu" else 0.02  # the manifest's [gate] rope
    scenarios = args.scenarios.split(",") if args.scenarios else all_scenarios
    work = tempfile.mkdtemp(prefix="rnx-decisive-")
    repo = make_gpu_repo(work) if args.preset == "gpu" else make_repo(work)
    runs = os.path.join(work, "runs")
    os.makedirs(runs)
    rows, truth = [], {}
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        if not args.no_truth:
            for scenario in [s for s in scenarios if s.startswith("slow")]:
                git(repo, "checkout", "-q", scenario)
                head = os.path.join(runs, f"truth-{scenario}.json")
                bench(args.rnx, repo, head, pair="main",
                      extra=["--processes", "8", "--max-processes", "8", "--quiet"])
                v = compare(args.rnx, head.replace(".json", "-base.json"), head, rope)
                truth[scenario] = {f'{c["kernel"]}/b{c["batch"]}': {"ratio": c["ratio"], "ci95": c["ci95"]}
                                   for c in v["configs"]}
                print(f"true ratio of {scenario}: " + ", ".join(f'{k} {t["ratio"]:.4f}' for k, t in truth[scenario].items()),
                      flush=True)
        began = time.monotonic()
        for rep in range(args.reps):
            if args.time_limit_s is not None and time.monotonic() - began > args.time_limit_s:
                print(f"time limit reached: {rep} of {args.reps} repetitions ran", flush=True)
                break
            if "paired" in modes:
                for scenario in scenarios:
                    git(repo, "checkout", "-q", scenario)
                    head = os.path.join(runs, f"paired-{scenario}-{rep}.json")
                    split = bench(args.rnx, repo, head, pair="main")
                    base = head.replace(".json", "-base.json")
                    v = compare(args.rnx, base, head, rope)
                    record(rows, "paired", scenario, rep, v, split, unstable_sides(base, head))
            if "stored" in modes:
                git(repo, "checkout", "-q", "main")
                base = os.path.join(runs, f"stored-main-{rep}.json")
                bench(args.rnx, repo, base)
                for scenario in scenarios:
                    git(repo, "checkout", "-q", scenario)
                    head = os.path.join(runs, f"stored-{scenario}-{rep}.json")
                    split = bench(args.rnx, repo, head)
                    v = compare(args.rnx, base, head, rope)
                    record(rows, "stored", scenario, rep, v, split, unstable_sides(base, head))
            print(f"rep {rep + 1}/{args.reps} done", flush=True)
    finally:
        git(repo, "checkout", "-q", "main")
    results = summary(rows, truth)
    print_table(results)
    doc = {"bench": "decisive", "preset": args.preset, "started": started, "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "machine": os.uname().nodename, "cpus": os.cpu_count(), "reps": args.reps,
           "command": "python3 bench/decisive.py " + " ".join(sys.argv[1:]), "summary": results, "rows": rows}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {args.out}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
