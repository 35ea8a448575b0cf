#!/usr/bin/env python3
"""Is paired timing unbiased for kernels with weights? Identical nn.Module kernels, paired, repeated.

    python3 bench/pairing_bias.py [--rnx build/bin/rnx] [--device cpu|cuda] [--reps 10] [--process-reps 3]
                                  [--out bench/results/pairing_bias.json]

A scratch git repository holds KernelBench-style modules with parameters of their own (nn.LayerNorm over a
whole (64, 256, 256) sample, a Linear + GELU block) and a GELU function without weights; its second commit
changes only a README. Each repetition is one `rnx bench --pair HEAD~1` with the default settings (in-process
pairing), and `--process-reps` more with `--pairing process`. For every configuration the script prints the
verdict's ratio (head / base) of each repetition, their median and the decisions; identical code should give
a median ratio of 1.000 and no faster/slower.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LAYERNORM = """import torch
from torch import nn

SHAPE = {shape}
batch_size = {batch}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(SHAPE)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, *SHAPE)]


def get_init_inputs():
    return []
"""

MLP = """import torch
from torch import nn

batch_size = {rows}


class Model(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return torch.nn.functional.gelu(self.fc(x))


def get_inputs():
    return [torch.randn(batch_size, {width})]


def get_init_inputs():
    return [{width}]
"""

GELU = """import torch


def run(x):
    return torch.nn.functional.gelu(x)
"""

MANIFEST = """[project]
name = "rnx-pairing-bias"

[defaults]
runtimes = ["eager"]
dtypes   = ["float32"]
device   = "{device}"

[[kernel]]
name  = "layernorm_module"
path  = "kernels/layernorm_module.py"
batch = [{batch}]

[[kernel]]
name  = "linear_gelu_module"
path  = "kernels/linear_gelu_module.py"
batch = [{rows}]

[[kernel]]
name   = "gelu_function"
path   = "kernels/gelu_function.py"
inputs = {{ x = "{gelu_shape}" }}
batch  = [1]
"""

SIZES = {
    # CPU: a few milliseconds a call on a 2-core machine; CUDA: the shapes of the H200 report (8 ms LayerNorm).
    "cpu": {"shape": "(16, 64, 64)", "batch": 4, "rows": 512, "width": 512, "gelu_shape": "B,256,1024"},
    "cuda": {"shape": "(64, 256, 256)", "batch": 16, "rows": 8192, "width": 8192, "gelu_shape": "B,64,256,256"},
}


def git(repo, *args):
    subprocess.run(["git", "-C", repo, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_repo(work, device):
    size = SIZES["cuda" if device.startswith("cuda") else "cpu"]
    repo = os.path.join(work, "repo")
    os.makedirs(os.path.join(repo, "kernels"))
    files = {"kernels/layernorm_module.py": LAYERNORM.format(**size),
             "kernels/linear_gelu_module.py": MLP.format(**size),
             "kernels/gelu_function.py": GELU,
             "rnx.toml": MANIFEST.format(device=device, **size)}
    for path, text in files.items():
        with open(os.path.join(repo, path), "w") as f:
            f.write(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "user.email", "bench@example.invalid")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "kernels")
    with open(os.path.join(repo, "README.md"), "w") as f:
        f.write("documentation only\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "docs only")
    return repo


def one_run(rnx, repo, out, pairing, timeout_s):
    cmd = [rnx, "bench", "--config", os.path.join(repo, "rnx.toml"), "--pair", "HEAD~1", "--out", out,
           "--base-out", out.replace(".json", "-base.json"), "--quiet"]
    if pairing == "process":
        cmd += ["--pairing", "process"]
    started = time.monotonic()
    p = subprocess.run(cmd, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout_s)
    wall = time.monotonic() - started
    if p.returncode != 0:
        sys.exit(f"pairing_bias: {' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-3000:]}")
    c = subprocess.run([rnx, "compare", out.replace(".json", "-base.json"), out, "--format", "json"],
                       stdout=subprocess.PIPE, text=True)
    if c.returncode not in (0, 1):
        sys.exit(f"pairing_bias: rnx compare failed ({c.returncode})")
    verdict = json.loads(c.stdout)
    return wall, [{"config": f'{r["kernel"]}/b{r["batch"]}', "decision": r["decision"], "ratio": r.get("ratio"),
                   "ci95": r.get("ci95"), "mde": r.get("mde")} for r in verdict["configs"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rnx", default=os.path.join(ROOT, "build", "bin", "rnx"))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--process-reps", type=int, default=3)
    ap.add_argument("--timeout-s", type=float, default=600)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "pairing_bias.json"))
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="rnx-pairing-bias-") as work:
        repo = make_repo(work, a.device)
        for pairing, reps in (("in-process", a.reps), ("process", a.process_reps)):
            for rep in range(reps):
                wall, configs = one_run(a.rnx, repo, os.path.join(work, f"{pairing}-{rep}.json"), pairing,
                                        a.timeout_s)
                for c in configs:
                    rows.append({"pairing": pairing, "rep": rep, "wall_s": wall, **c})
                print(f"{pairing:10} rep {rep}: {wall:6.1f} s  " +
                      "  ".join(f'{c["config"]} {c["ratio"] or float("nan"):.4f} {c["decision"]}' for c in configs),
                      flush=True)
    summary = {}
    for row in rows:
        s = summary.setdefault((row["config"], row["pairing"]), {"ratios": [], "decisions": {}})
        if row["ratio"]:
            s["ratios"].append(row["ratio"])
        s["decisions"][row["decision"]] = s["decisions"].get(row["decision"], 0) + 1
    print(f'\n{"configuration":32} {"pairing":10} {"runs":>4} {"median ratio":>12} {"min":>7} {"max":>7}  decisions')
    table = []
    for (config, pairing), s in sorted(summary.items()):
        r = s["ratios"]
        med = statistics.median(r) if r else float("nan")
        print(f'{config:32} {pairing:10} {len(r):4d} {med:12.4f} {min(r, default=float("nan")):7.4f} '
              f'{max(r, default=float("nan")):7.4f}  {s["decisions"]}')
        table.append({"config": config, "pairing": pairing, "median_ratio": med, "ratios": r,
                      "decisions": s["decisions"]})
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"device": a.device, "rows": rows, "summary": table}, f, indent=1)


if __name__ == "__main__":
    main()
