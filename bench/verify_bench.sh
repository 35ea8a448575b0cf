#!/usr/bin/env bash
# Times a full `rnx verify` (all stages, audit and sandbox) of an honest attention rewrite on this machine,
# prints a table and writes bench/results/verify_bench.json. Target: under 30 s on a CPU.
#   bench/verify_bench.sh [BUILD_DIR]      (default build-verify; needs the rnx and rnx-verify-worker targets)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-verify}
rnx=$build/bin/rnx
worker=$build/bin/rnx-verify-worker
for f in "$rnx" "$worker"; do
  if [[ ! -x $f ]]; then
    echo "verify_bench: $f is missing; build it: cmake --build $build --target rnx rnx-verify-worker" >&2
    exit 2
  fi
done
export RNX_VERIFY_WORKER=$worker
manifest=$root/tests/verify/rnx.toml
runs=${RNX_BENCH_RUNS:-3}
out=$root/bench/results/verify_bench.json
mkdir -p "$root/bench/results"

printf '%-34s %-8s %10s %10s %9s\n' candidate verdict "wall s" "worker s" "speedup"
rows=()
for candidate in honest/attention_sdpa.py honest/attention_blocked.py cheats/bf16_downgrade.py; do
  for ((i = 0; i < runs; i++)); do
    start=$(date +%s.%N)
    set +e
    json=$("$rnx" verify --config "$manifest" --kernel attention --candidate "$root/tests/verify/$candidate" --format json)
    set -e
    end=$(date +%s.%N)
    line=$(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
wall = float(sys.argv[2]) - float(sys.argv[3])
s = d["speedup"]
print(f"{d[\"verdict\"]} {wall:.2f} {d[\"seconds\"]:.2f} {s if s is not None else float(\"nan\"):.2f} {d[\"device\"]}")
' "$json" "$end" "$start")
    read -r verdict wall worker_s speedup device <<<"$line"
    printf '%-34s %-8s %10s %10s %9s\n' "$candidate" "$verdict" "$wall" "$worker_s" "${speedup}x"
    rows+=("{\"candidate\": \"$candidate\", \"verdict\": \"$verdict\", \"wall_s\": $wall, \"speedup\": $speedup, \"device\": \"$device\"}")
  done
done
python3 - "$out" "${rows[@]}" <<'PY'
import json, os, platform, statistics, sys
rows = [json.loads(r) for r in sys.argv[2:]]
by = {}
for r in rows:
    by.setdefault(r["candidate"], []).append(r["wall_s"])
summary = {c: {"median_wall_s": statistics.median(v), "runs": len(v)} for c, v in by.items()}
doc = {"bench": "verify", "kernel": "attention q,k,v = B,4,32,16 (batch 4)", "cpus": os.cpu_count(),
       "machine": platform.machine(), "rows": rows, "summary": summary}
with open(sys.argv[1], "w") as f:
    json.dump(doc, f, indent=2)
print()
for c, s in summary.items():
    print(f"median full verify of {c}: {s['median_wall_s']:.2f} s over {s['runs']} run(s)")
print(f"wrote {sys.argv[1]}")
PY
