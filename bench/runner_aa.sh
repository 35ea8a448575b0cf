#!/usr/bin/env bash
# A/A stability of the runner on this machine: the same code benchmarked by separate `rnx bench` invocations,
# consecutive pairs compared with `rnx compare`, must give no `slower` and no `faster`; then `rnx bench --pair`
# on two identical revisions (HEAD against HEAD) likewise. Prints the counts, writes JSON.
#
#   RNX=build/bin/rnx REPS=10 PAIR_REPS=10 bench/runner_aa.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rnx="${RNX:-$root/build/bin/rnx}"
reps="${REPS:-10}"
pair_reps="${PAIR_REPS:-10}"
out_json="${OUT:-$root/bench/results/runner_aa.json}"
tmp="$(mktemp -d /tmp/rnx-aa-XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
filters=(--config "$root/examples/rnx.toml" --runtime eager --dtype float32 --batch 8 --device cpu
         --kernel add --kernel matmul --kernel softmax --kernel layernorm --quiet)

count() {  # decisions of one verdict (JSON on stdin) as "faster slower equivalent abstain other"
  python3 -c '
import json, sys
v = json.load(sys.stdin)
d = [c["decision"] for c in v["configs"]]
print(d.count("faster"), d.count("slower"), d.count("equivalent"), d.count("abstain"),
      len(d) - sum(d.count(k) for k in ("faster", "slower", "equivalent", "abstain")))'
}

echo "== A/A: $((reps + 1)) separate rnx bench invocations, $reps comparisons of consecutive runs"
for i in $(seq 0 "$reps"); do
  "$rnx" bench "${filters[@]}" --out "$tmp/run_$i.json"
done
total_f=0; total_s=0; total_e=0; total_a=0; rows=""
for i in $(seq 1 "$reps"); do
  set +e
  "$rnx" compare "$tmp/run_$((i - 1)).json" "$tmp/run_$i.json" --format json > "$tmp/verdict_$i.json"
  set -e
  read -r f s e a o < <(count < "$tmp/verdict_$i.json")
  printf "  run %2d vs %2d: faster %d  slower %d  equivalent %d  abstain %d\n" $((i - 1)) "$i" "$f" "$s" "$e" "$a"
  total_f=$((total_f + f)); total_s=$((total_s + s)); total_e=$((total_e + e)); total_a=$((total_a + a))
  rows="$rows{\"pair\":[$((i - 1)),$i],\"faster\":$f,\"slower\":$s,\"equivalent\":$e,\"abstain\":$a},"
done
echo "separate invocations: faster $total_f, slower $total_s, equivalent $total_e, abstain $total_a"

echo "== --pair HEAD on HEAD: $pair_reps paired runs (base and head interleaved per process)"
pf=0; ps=0; pe=0; pa=0; prow=""
for i in $(seq 1 "$pair_reps"); do
  "$rnx" bench "${filters[@]}" --pair HEAD --out "$tmp/head_$i.json" --base-out "$tmp/base_$i.json"
  set +e
  "$rnx" compare "$tmp/base_$i.json" "$tmp/head_$i.json" --format json > "$tmp/pverdict_$i.json"
  set -e
  read -r f s e a o < <(count < "$tmp/pverdict_$i.json")
  printf "  pair %2d: faster %d  slower %d  equivalent %d  abstain %d\n" "$i" "$f" "$s" "$e" "$a"
  pf=$((pf + f)); ps=$((ps + s)); pe=$((pe + e)); pa=$((pa + a))
  prow="$prow{\"faster\":$f,\"slower\":$s,\"equivalent\":$e,\"abstain\":$a},"
done
echo "paired runs: faster $pf, slower $ps, equivalent $pe, abstain $pa"
mkdir -p "$(dirname "$out_json")"
cat > "$out_json" <<JSON
{"separate": {"comparisons": $reps, "faster": $total_f, "slower": $total_s, "equivalent": $total_e,
  "abstain": $total_a, "rows": [${rows%,}]},
 "paired": {"runs": $pair_reps, "faster": $pf, "slower": $ps, "equivalent": $pe, "abstain": $pa,
  "rows": [${prow%,}]},
 "configurations_per_run": 4}
JSON
echo "wrote $out_json"
[ $((total_f + total_s + pf + ps)) -eq 0 ]
