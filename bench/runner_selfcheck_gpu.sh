#!/usr/bin/env bash
# For the H200 (the lead runs it): the A/A guard and the CUDA sampling of issue 20 in one script.
#  1. `rnx bench --self-check` on an nn.LayerNorm((64,256,256)) module at batch 16 (weights of its own), RUNS
#     times: each run's ratio, interval, MDE and decision, and the median ratio over the runs (target: within
#     +-0.3% of 1.000), in-process; then once with --pairing process for comparison.
#  2. A microsecond kernel in float16 (x * 2 + 1 over 65536 elements, about 5 us): process medians of one
#     unpaired run, which the batched CUDA samples should keep within a few percent of each other (before, one
#     call per sample gave 0.0086 against 0.039 ms for a 9 us Triton kernel).
#
#   RNX=build/bin/rnx RUNS=10 bench/runner_selfcheck_gpu.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rnx="${RNX:-$root/build/bin/rnx}"
runs="${RUNS:-10}"
rope="${ROPE:-0.01}"
tmp="$(mktemp -d /tmp/rnx-selfcheck-XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/layernorm_module.py" <<'PY'
import torch
import torch.nn as nn

batch_size = 16


class Model(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.norm = nn.LayerNorm(shape)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, 64, 256, 256)]


def get_init_inputs():
    return [(64, 256, 256)]
PY
cat > "$tmp/tiny.py" <<'PY'
import torch


def run(x: torch.Tensor) -> torch.Tensor:
    return x * 2 + 1
PY
cat > "$tmp/rnx.toml" <<'TOML'
[project]
name = "selfcheck-gpu"

[defaults]
device = "cuda"

[[kernel]]
name      = "layernorm_module"
path      = "layernorm_module.py"
batch     = [16]
tolerance = { float32 = { rtol = 1e-4, atol = 1e-4 } }

[[kernel]]
name   = "tiny"
path   = "tiny.py"
inputs = { x = "B,65536" }
dtypes = ["float16"]
TOML
echo "== self-check, in-process, rope $rope"
ratios=""
for i in $(seq 1 "$runs"); do
  set +e
  "$rnx" bench --config "$tmp/rnx.toml" --kernel layernorm_module --self-check --rope "$rope" --out "$tmp/h.json" \
    2> "$tmp/log_$i.txt"
  rc=$?
  set -e
  line=$(grep -E '^  layernorm_module/' "$tmp/log_$i.txt" || true)
  echo "run $i (exit $rc): $line"
  grep '^\[pairing\]' "$tmp/log_$i.txt" || true
  ratios="$ratios $(awk '{print $4}' <<< "$line")"
done
python3 -c "import statistics, sys; r = [float(x) for x in sys.argv[1:]]; print(f'median ratio over {len(r)} runs: {statistics.median(r):.4f} (min {min(r):.4f}, max {max(r):.4f})')" $ratios
echo "== self-check, --pairing process, rope $rope"
set +e
"$rnx" bench --config "$tmp/rnx.toml" --kernel layernorm_module --self-check --pairing process --rope "$rope" \
  --out "$tmp/h.json" 2> "$tmp/log_process.txt"
set -e
grep -E '^  layernorm_module/' "$tmp/log_process.txt" || tail -5 "$tmp/log_process.txt"
echo "== a 5 us float16 kernel, unpaired: process medians"
"$rnx" bench --config "$tmp/rnx.toml" --kernel tiny --out "$tmp/tiny.json" 2> "$tmp/tiny.log" || true
python3 - "$tmp/tiny.json" <<'PY'
import json, statistics, sys
doc = json.load(open(sys.argv[1]))
for r in doc["results"]:
    s, g, at, medians = r.get("samples_ms", []), r.get("groups") or [], 0, []
    for n in g:
        medians.append(statistics.median(s[at:at + n])); at += n
    print(f'{r["kernel"]}/{r["dtype"]}/b{r["batch"]}: {r["status"]}, process medians (ms): '
          + ", ".join(f"{m:.5f}" for m in medians)
          + (f", max/min {max(medians) / min(medians):.3f}" if medians else "") + f'  {r.get("message", "")}')
PY
