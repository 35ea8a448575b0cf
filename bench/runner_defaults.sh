#!/usr/bin/env bash
# Decisive by default: the attention example (batched matmuls, examples/kernels/attention_batched.py) in a
# manifest with no [bench] table, as `rnx init` leaves it, paired with itself (`rnx bench --pair HEAD` in a fresh
# git repository: the base is a separate checkout of the same commit), at batch 1 and 4 on the CPU, RUNS times.
# Prints each configuration's decision, ratio, MDE and processes, each run's wall time and the load average, and
# writes JSON. Target (issue 20): equivalent in >= 5 of 6 configurations over three runs, <= 60 s per run.
#
#   RNX=build/bin/rnx RUNS=3 nice -n 5 bench/runner_defaults.sh
#   THREADS=1 ... bench/runner_defaults.sh    # adds `[bench] threads = 1`, what `rnx init` writes for a CPU project
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rnx="$(cd "$(dirname "${RNX:-$root/build/bin/rnx}")" && pwd)/$(basename "${RNX:-$root/build/bin/rnx}")"
runs="${RUNS:-3}"
kernel="${KERNEL:-$root/examples/kernels/attention_batched.py}"
out_json="${OUT:-$root/bench/results/runner_defaults.json}"
tmp="$(mktemp -d /tmp/rnx-defaults-XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

repo="$tmp/repo"
mkdir -p "$repo/kernels"
cp "$kernel" "$repo/kernels/attention.py"
cat > "$repo/rnx.toml" <<'TOML'
[project]
name = "defaults-check"

[defaults]
runtimes = ["eager"]
dtypes   = ["float32"]
batch    = [1, 4]
device   = "cpu"

[[kernel]]
name      = "attention"
path      = "kernels/attention.py"
inputs    = { q = "B,8,128,64", k = "B,8,128,64", v = "B,8,128,64" }
tolerance = { float32 = { rtol = 1e-4, atol = 1e-5 } }
TOML
if [ -n "${THREADS:-}" ]; then printf '\n[bench]\nthreads = %d\n' "$THREADS" >> "$repo/rnx.toml"; fi
echo "manifest: $( [ -n "${THREADS:-}" ] && echo "[bench] threads = $THREADS only" || echo "no [bench] table")"
git -C "$repo" init -q
git -C "$repo" -c user.email=bench@rnx -c user.name=bench add -A
git -C "$repo" -c user.email=bench@rnx -c user.name=bench commit -qm "attention, no [bench] table"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)  ($(nproc) cores)"
printf "%-4s %-32s %-11s %8s %16s %7s %9s %7s\n" run configuration decision ratio "95% interval" mde processes wall_s
rows=""
equivalent=0
total=0
max_wall=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s.%N)
  "$rnx" bench --config "$repo/rnx.toml" --pair HEAD --out "$tmp/head_$i.json" --base-out "$tmp/base_$i.json" \
    --quiet 2> "$tmp/bench_$i.log"
  wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
  set +e
  "$rnx" compare "$tmp/base_$i.json" "$tmp/head_$i.json" --format json > "$tmp/verdict_$i.json"
  set -e
  lines=$(python3 - "$tmp/verdict_$i.json" "$tmp/head_$i.json" "$i" "$wall" "$tmp/base_$i.json" <<'PY'
import json, statistics, sys
verdict = json.load(open(sys.argv[1]))
head = json.load(open(sys.argv[2]))
base = {(r["kernel"], r["runtime"], r["dtype"], r["batch"]): r for r in json.load(open(sys.argv[5]))["results"]}


def orders(h):
    """Each process's median block ratio (head / base, blocks of 4), by the side loaded first in it."""
    b = base.get((h["kernel"], h["runtime"], h["dtype"], h["batch"]))
    if not b or not h.get("first_sides") or len(h["first_sides"]) != len(h.get("groups") or []):
        return None
    by, at = {"base": [], "head": []}, 0
    for n, first in zip(h["groups"], h["first_sides"]):
        blocks = [sum(h["samples_ms"][j:j + 4]) / sum(b["samples_ms"][j:j + 4]) for j in range(at, at + n, 4)]
        by[first].append(round(statistics.median(blocks), 4))
        at += n
    return by


groups = {f'{r["kernel"]}/{r["runtime"]}/{r["dtype"]}/b{r["batch"]}': len(r.get("groups") or [1])
          for r in head["results"]}
for c in verdict["configs"]:
    label = f'{c["kernel"]}/{c["runtime"]}/{c["dtype"]}/b{c["batch"]}'
    ratio = c.get("ratio")
    lo, hi = c.get("ci95", [None, None]) if isinstance(c.get("ci95"), list) else (c.get("ci_lo"), c.get("ci_hi"))
    mde = c.get("mde")
    h = next((r for r in head["results"] if f'{r["kernel"]}/{r["runtime"]}/{r["dtype"]}/b{r["batch"]}' == label), None)
    by_order = orders(h) if h else None
    row = {"run": int(sys.argv[3]), "config": label, "decision": c["decision"], "ratio": ratio,
           "ci": [lo, hi], "mde": mde, "processes": groups.get(label), "wall_s": float(sys.argv[4]),
           "process_ratios_by_first_side": by_order}
    interval = f"[{lo:.4f}, {hi:.4f}]" if lo is not None and hi is not None else "-"
    print("ROW " + json.dumps(row))
    print(f'{sys.argv[3]:<4} {label:<32} {c["decision"]:<11} {ratio if ratio is None else format(ratio, ".4f"):>8} '
          f'{interval:>16} {"-" if mde is None else format(100 * mde, ".2f") + "%":>7} {groups.get(label, "-"):>9} '
          f'{sys.argv[4]:>7}')
    if by_order:
        print(f'     processes\' ratios, base loaded first: {" ".join(map(str, by_order["base"]))}; head first: '
              f'{" ".join(map(str, by_order["head"]))}')
PY
)
  grep -v '^ROW ' <<< "$lines"
  while read -r json_row; do
    rows="$rows${json_row#ROW },"
    total=$((total + 1))
    if grep -q '"decision": "equivalent"' <<< "$json_row"; then equivalent=$((equivalent + 1)); fi
  done < <(grep '^ROW ' <<< "$lines")
  max_wall=$(python3 -c "import sys; print(max(float(sys.argv[1]), float(sys.argv[2])))" "$max_wall" "$wall")
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "load average after: $load_after"
echo "equivalent: $equivalent of $total configurations over $runs runs; slowest run ${max_wall} s (target: >= 5 of 6, <= 60 s)"
mkdir -p "$(dirname "$out_json")"
cat > "$out_json" <<JSON
{"kernel": "$(basename "$kernel")", "threads": "${THREADS:-default}", "runs": $runs, "equivalent": $equivalent, "configurations": $total,
 "max_wall_s": $max_wall, "load_after": "$load_after", "cores": $(nproc), "rows": [${rows%,}]}
JSON
echo "wrote $out_json"
