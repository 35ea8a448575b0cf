#!/usr/bin/env bash
# Real speedups seen by the runner: each slow example kernel (base) against its rewrite (head) under the same
# kernel name, benchmarked by `rnx bench` and judged by `rnx compare`; the attention rewrite must be `faster`.
# Prints decision and speedup per configuration, writes JSON. The attention runs on many small heads
# (B,16,64,32): the rewrite's gain is the per-(batch, head) Python and dispatch cost it removes, and on the 2-core
# machine, whose speed drifts 1.5-2x over seconds, a gain of a few percent could not be told from drift.
#
#   RNX=build/bin/rnx bench/runner_speedup.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rnx="${RNX:-$root/build/bin/rnx}"
out_json="${OUT:-$root/bench/results/runner_speedup.json}"
tmp="$(mktemp -d /tmp/rnx-speedup-XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
k="$root/examples/kernels"

manifest() {  # $1 = attention file, $2 = softmax file, $3 = layernorm file
  cat <<TOML
[project]
name = "rnx-examples"
[defaults]
batch = [1, 8]
device = "cpu"
[bench]
processes = 5
samples = 16
budget_ms = 400
warmup_ms = 150
threads = 1
[[kernel]]
name = "attention"
path = "$k/$1"
inputs = { q = "B,16,64,32", k = "B,16,64,32", v = "B,16,64,32" }
tolerance = { float32 = { rtol = 1e-4, atol = 1e-5 } }
[[kernel]]
name = "softmax"
path = "$k/$2"
inputs = { x = "B,64,1024" }
[[kernel]]
name = "layernorm"
path = "$k/$3"
inputs = { x = "B,64,1024" }
tolerance = { float32 = { rtol = 1e-5, atol = 1e-5 } }
TOML
}
manifest attention.py softmax.py layernorm.py > "$tmp/base.toml"
manifest attention_batched.py softmax_fused.py layernorm_fused.py > "$tmp/head.toml"
"$rnx" bench --config "$tmp/base.toml" --out "$tmp/base.json" --quiet
"$rnx" bench --config "$tmp/head.toml" --out "$tmp/head.json" --quiet
set +e
"$rnx" compare "$tmp/base.json" "$tmp/head.json" --format json > "$tmp/verdict.json"
set -e
python3 - "$tmp/verdict.json" "$out_json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
rows = []
print(f"{'configuration':<34}{'decision':>10}{'base ms':>10}{'head ms':>10}{'speedup':>9}  95% CI of head/base")
for c in v["configs"]:
    base, head = c.get("base_ms"), c.get("head_ms")
    speedup = base / head if base and head else None
    ci = c.get("ci95") or [None, None]
    label = f"{c['kernel']}/{c['runtime']}/{c['dtype']}/b{c['batch']}"
    rows.append({"configuration": label, "decision": c["decision"], "base_ms": base, "head_ms": head,
                 "speedup": speedup, "ci95": ci})
    ci_text = f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci[0] is not None else "-"
    print(f"{label:<34}{c['decision']:>10}{base or 0:>10.3f}{head or 0:>10.3f}{(speedup or 0):>8.2f}x  {ci_text}"
          + (f"  ({c['reason'][:110]})" if c.get("reason") else ""))
json.dump({"overall": v.get("verdict"), "rows": rows}, open(sys.argv[2], "w"), indent=2)
attention = [r for r in rows if r["configuration"].startswith("attention/")]
ok = attention and all(r["decision"] == "faster" for r in attention)
print("attention rewrite reported faster:", "yes" if ok else "NO")
sys.exit(0 if ok else 1)
PY
echo "wrote $out_json"
