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
runs=${RNX_BENCH_RUNS:-2}
out=$root/bench/results/verify_bench.json
mkdir -p "$root/bench/results"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '%-34s %-8s %8s %8s %9s %9s\n' candidate verdict "wall s" "cpu s" "speedup" "load1"
rows=()
for candidate in honest/attention_sdpa.py honest/attention_blocked.py cheats/bf16_downgrade.py; do
  for ((i = 0; i < runs; i++)); do
    load=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s.%N)
    set +e
    # CPU seconds of rnx and the worker it waits for: the figure that does not depend on the machine's load.
    json=$(/usr/bin/time -f '%U %S' -o "$tmp/cpu" "$rnx" verify --config "$manifest" --kernel attention \
           --candidate "$root/tests/verify/$candidate" --format json)
    set -e
    end=$(date +%s.%N)
    # time(1) puts "Command exited with non-zero status N" above the figures when the verdict is a rejection.
    cpu=$(tail -n 1 "$tmp/cpu" | awk '{printf "%.2f", $1 + $2}')
    line=$(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
wall = float(sys.argv[2]) - float(sys.argv[3])
# A rejected candidate has no speedup: "null" keeps the row valid JSON.
s = "%.2f" % d["speedup"] if d["speedup"] is not None else "null"
print("%s %.2f %.2f %s %s" % (d["verdict"], wall, d["seconds"], s, d["device"]))
' "$json" "$end" "$start")
    read -r verdict wall _ speedup device <<<"$line"
    shown="-"; [[ $speedup != null ]] && shown="${speedup}x"
    printf '%-34s %-8s %8s %8s %9s %9s\n' "$candidate" "$verdict" "$wall" "$cpu" "$shown" "$load"
    rows+=("{\"candidate\": \"$candidate\", \"verdict\": \"$verdict\", \"wall_s\": $wall, \"cpu_s\": $cpu, \"speedup\": $speedup, \"load1\": $load, \"device\": \"$device\"}")
  done
done
python3 - "$out" "${rows[@]}" <<'PY'
import json, os, platform, statistics, sys
rows = [json.loads(r) for r in sys.argv[2:]]
by = {}
for r in rows:
    by.setdefault(r["candidate"], []).append(r)
summary = {c: {"median_wall_s": statistics.median(x["wall_s"] for x in v),
               "median_cpu_s": statistics.median(x["cpu_s"] for x in v), "runs": len(v)} for c, v in by.items()}
doc = {"bench": "verify", "kernel": "attention q,k,v = B,4,32,16 (batch 4)", "cpus": os.cpu_count(),
       "machine": platform.machine(), "rows": rows, "summary": summary}
with open(sys.argv[1], "w") as f:
    json.dump(doc, f, indent=2)
print()
for c, s in summary.items():
    print(f"median full verify of {c}: {s['median_wall_s']:.2f} s wall, {s['median_cpu_s']:.2f} s CPU "
          f"over {s['runs']} run(s)")
print(f"wrote {sys.argv[1]}")
PY
