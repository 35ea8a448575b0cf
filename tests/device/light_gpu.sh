#!/usr/bin/env bash
# How far from the limit, on a GPU, in one device call: the machine's peaks and the speed-of-light table of the
# corpus and the cost suite (rnx bench's SOL and sheet columns, sorted by bench/light.py), `rnx report --proof`
# on that run (it must refuse: nobody locked this machine's clocks, and rnx never does), the memoizing softmax
# against the plain one (flagged beyond the physical limit, never faster), and the cost suite paired unchanged
# on this code (tests/device/cost_gpu.sh aa).
#
#   tests/device/light_gpu.sh [memo] [proof] [corpus] [aa]...   (default: all four)
#
# Builds rnx first unless $RNX names one. JSON and logs go to $OUT (else build-gpu/light-out).
# Exit 0 when every step did what it should, 1 otherwise, 77 without a GPU.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 2
out="${OUT:-$root/build-gpu/light-out}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
started=$(date +%s)
elapsed() { echo $(($(date +%s) - started)); }
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(memo proof corpus aa)
# shellcheck source=tests/device/prepare_gpu.sh
source "$root/tests/device/prepare_gpu.sh"
gpu_prepare light_gpu
echo "light_gpu: clocks event reasons: $(nvidia-smi --query-gpu=clocks_event_reasons.active --format=csv,noheader 2>/dev/null)"
failures=0
fail() { echo "light_gpu: FAIL: $*"; failures=$((failures + 1)); }

# A manifest of one softmax kernel file at 4096 x 4096 float32 on the GPU (64 MiB out a call).
softmax_manifest() {
  cat >"$out/$1.toml" <<EOF
[project]
name = "light-memo"
[defaults]
batch = [1]
device = "cuda"
[[kernel]]
name = "softmax"
path = "$root/tests/runner/data/kernels/$2"
inputs = { x = "B,4096,4096" }
EOF
}

bench_suite() {  # bench_suite NAME MANIFEST LIMIT_S: one rnx bench, its summary sorted by speed of light
  timeout "$3" "$rnx" bench --config "$2" --out "$out/$1.json" >"$out/$1.log" 2>&1 || fail "rnx bench $1 exited $?"
  python3 bench/light.py "$out/$1.log" --json "$out/$1_light.json" || fail "no summary for $1"
}

for step in "${steps[@]}"; do
  echo
  echo "== $step at $(elapsed) s"
  case "$step" in
    memo)
      softmax_manifest memo memo_softmax.py
      softmax_manifest plain plain_softmax.py
      timeout 120 "$rnx" bench --config "$out/plain.toml" --out "$out/plain.json" >"$out/plain.log" 2>&1 || fail "plain bench"
      timeout 120 "$rnx" bench --config "$out/memo.toml" --out "$out/memo.json" >"$out/memo.log" 2>&1 || fail "memo bench"
      grep -E '^softmax/' "$out/plain.log" "$out/memo.log" | cut -c1-260
      "$rnx" compare "$out/plain.json" "$out/memo.json" >"$out/memo_compare.txt" 2>&1
      echo "rnx compare plain memo: exit $?"
      cut -c1-400 "$out/memo_compare.txt" | head -12
      grep -q 'BEYOND THE PHYSICAL LIMIT' "$out/memo.log" || fail "the memoizing softmax was not flagged in rnx bench"
      grep -qiE '\bfaster\b.*softmax|softmax.*\bfaster\b' "$out/memo_compare.txt" && fail "the memoizing softmax was called faster"
      ;;
    proof)
      bench_suite cost bench/corpus/rnx.gpu_cost.toml 150
      "$rnx" report --proof --head "$out/cost.json" --out "$out/proof.html" >"$out/proof.txt" 2>&1
      rc=$?
      echo "rnx report --proof on this machine's run: exit $rc"
      cat "$out/proof.txt"
      python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['environment']; print('clocks', e.get('clocks')); print('peaks', e.get('peaks'))" "$out/cost.json"
      [ "$rc" = 2 ] || fail "rnx report --proof did not refuse on unlocked clocks (exit $rc)"
      ;;
    corpus) bench_suite corpus bench/corpus/rnx.gpu.toml 200 ;;
    aa)
      RNX="$rnx" OUT="$out" COST_AA_S="${COST_AA_S:-120}" tests/device/cost_gpu.sh aa | tail -45
      [ "${PIPESTATUS[0]}" = 0 ] || fail "cost_gpu.sh aa"
      ;;
    *) echo "light_gpu: unknown step $step (memo, proof, corpus, aa)"; exit 2 ;;
  esac
done
echo "light_gpu: $failures failure(s), $(elapsed) s"
[ "$failures" = 0 ]
