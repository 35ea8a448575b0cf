#!/usr/bin/env bash
# For the H200 (the lead runs it): the A/A guard of in-process pairing on modules with weights.
#  `rnx bench --self-check` (the working tree paired with itself) on two KernelBench modules with weights of
#  their own, nn.LayerNorm((64, 256, 256)) at batch 16 and a two-layer MLP (4096 -> 8192 -> 4096, GELU) at batch
#  4096: RUNS runs in-process (the default pairing) and PROCESS_RUNS runs with --pairing process; per run each
#  module's ratio, interval, MDE and decision; per pairing the median ratio over the runs (target: within +-0.3%
#  of 1.000, the two pairings agreeing). Default settings otherwise (no [bench] table).
#
#   RNX=build/bin/rnx RUNS=10 PROCESS_RUNS=3 ROPE=0.01 bench/runner_selfcheck_gpu.sh
# Writes selfcheck.json to $OUT (or the current folder).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rnx="${RNX:-$root/build/bin/rnx}"
runs="${RUNS:-10}"
process_runs="${PROCESS_RUNS:-3}"
rope="${ROPE:-0.01}"
out="${OUT:-$PWD}"
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
cat > "$tmp/mlp_module.py" <<'PY'
import torch
import torch.nn as nn

batch_size = 4096


class Model(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)

    def forward(self, x):
        return self.down(torch.nn.functional.gelu(self.up(x)))


def get_inputs():
    return [torch.randn(batch_size, 4096)]


def get_init_inputs():
    return [4096, 8192]
PY
cat > "$tmp/rnx.toml" <<'TOML'
[project]
name = "selfcheck-gpu"

[defaults]
device = "cuda"

[[kernel]]
name  = "layernorm_module"
path  = "layernorm_module.py"
batch = [16]

[[kernel]]
name  = "mlp_module"
path  = "mlp_module.py"
batch = [4096]
TOML
run_one() {  # run_one PAIRING INDEX
  local pairing="$1" i="$2" log="$tmp/log_$1_$2.txt"
  local flags=()
  [ "$pairing" = process ] && flags=(--pairing process)
  "$rnx" bench --config "$tmp/rnx.toml" --self-check "${flags[@]}" --rope "$rope" --out "$tmp/h.json" 2>"$log"
  echo "$pairing run $i (exit $?):"
  grep -E '^  (layernorm|mlp)_module/' "$log" | sed "s/^/  /" || tail -5 "$log"
  grep -E '^  (layernorm|mlp)_module/' "$log" | sed "s/^/$pairing /" >>"$tmp/lines.txt"
}
echo "== self-check at rope $rope: $runs runs in-process, $process_runs with --pairing process ($(date -u +%FT%TZ))"
for i in $(seq 1 "$runs"); do run_one in-process "$i"; done
for i in $(seq 1 "$process_runs"); do run_one process "$i"; done
python3 - "$tmp/lines.txt" "$out/selfcheck.json" <<'PY'
import json, statistics, sys
rows = []
for line in open(sys.argv[1]):
    f = line.split()
    # "<pairing> <config> <decision> ratio <r> [<lo>, <hi>] mde <m>% pairing <p>"
    rows.append({"pairing": f[0], "config": f[1], "decision": f[2], "ratio": float(f[4]),
                 "ci95": [float(f[5].strip("[,")), float(f[6].strip("]"))], "mde": float(f[8].rstrip("%")) / 100})
summary = {}
for pairing in ("in-process", "process"):
    for config in sorted({r["config"] for r in rows}):
        sel = [r for r in rows if r["pairing"] == pairing and r["config"] == config]
        if not sel:
            continue
        ratios = [r["ratio"] for r in sel]
        decisions = {d: sum(r["decision"] == d for r in sel) for d in ("equivalent", "abstain", "faster", "slower")}
        summary[f"{pairing} {config}"] = {"runs": len(sel), "median_ratio": statistics.median(ratios),
                                          "min": min(ratios), "max": max(ratios), "decisions": decisions,
                                          "median_mde": statistics.median(r["mde"] for r in sel)}
        print(f"{pairing:10} {config:36} runs {len(sel):2}  median ratio {statistics.median(ratios):.4f} "
              f"(min {min(ratios):.4f}, max {max(ratios):.4f})  median MDE {100 * statistics.median(r['mde'] for r in sel):.2f}%  {decisions}")
json.dump({"rows": rows, "summary": summary}, open(sys.argv[2], "w"), indent=1)
PY
