#!/usr/bin/env bash
# What a GPU pull request's suite costs, in one device call: the cost suite bench/corpus/rnx.gpu_cost.toml
# (36 configurations, GEMMs to 10 us Triton kernels, three kernels of an installed Triton package of our own) paired
# with itself and with a calibrated slowdown, default settings, each row with its wall time and the phase table.
#
#   tests/device/cost_gpu.sh [sizes] [aa] [slowdown] [rewrites]...   (default: sizes aa)
#
#   sizes     each configuration's time per call (bench/corpus.py sizes --suite cost): which are 10-50 us
#   aa        unchanged code paired, +-1% (bench/corpus.py aa --suite cost), until COST_AA_S (default 300): the
#             suite in one rnx bench, as a pull request's job runs it, or in chunks of COST_CHUNK kernels (a chunk cut
#             by the limit loses only itself); COST_KERNELS (names, space-separated) narrows it
#   slowdown  a calibrated 2% slowdown of every configuration (one calibration run, one that counts), COST_SLOW_S
#   rewrites  the rewrites still to verify on the GPU: softmax_rows's honest rewrites (torch.compile among them) and every cheat
#             through rnx verify on the GPU, COST_REWRITES_S (default 200)
#
# Builds rnx first (tests/device/run_gpu.sh build, GPU_TARGETS narrowed) unless $RNX names one, and installs the
# corpus's kernel package (bench/corpus/packages/install.py). JSON and logs go to $OUT (else build-gpu/cost-out).
# Exit 0 when every step ran, 1 otherwise, 77 without a GPU.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 2
out="${OUT:-$root/build-gpu/cost-out}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
started=$(date +%s)
elapsed() { echo $(($(date +%s) - started)); }
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(sizes aa)
# shellcheck source=tests/device/prepare_gpu.sh
source "$root/tests/device/prepare_gpu.sh"
gpu_prepare cost_gpu
failures=0
for step in "${steps[@]}"; do
  echo
  echo "== $step at $(elapsed) s"
  case "$step" in
    sizes)
      timeout 120 python3 bench/corpus.py sizes --suite cost --device cuda --out "$out/cost_sizes.json" 2>&1 |
        tee "$out/cost_sizes.log" | tail -40
      rc="${PIPESTATUS[0]}" ;;
    aa)
      only=()
      for k in ${COST_KERNELS:-}; do only+=(--kernel "$k"); done
      timeout $((${COST_AA_S:-300} + 60)) python3 bench/corpus.py aa --suite cost --device cuda --rnx "$rnx" \
        --chunk "${COST_CHUNK:-0}" --timeout-s "${COST_AA_S:-300}" "${only[@]}" --out "$out/cost_aa.json" \
        >"$out/cost_aa.log" 2>&1
      rc=$?
      grep -v '^\[' "$out/cost_aa.log" | tail -52 ;;
    slowdown)
      timeout $((${COST_SLOW_S:-300} + 60)) python3 bench/corpus.py slowdown --suite cost --fraction 0.02 \
        --chunk "${COST_CHUNK:-0}" --calibrate 1 --device cuda --rnx "$rnx" --timeout-s "${COST_SLOW_S:-300}" --out "$out/cost_slowdown.json" \
        >"$out/cost_slowdown.log" 2>&1
      rc=$?
      grep -v '^\[' "$out/cost_slowdown.log" | tail -52 ;;
    rewrites)
      lim="${COST_REWRITES_S:-200}"
      timeout $((lim / 3 + 60)) python3 bench/corpus.py verify --device cuda --kernel softmax_rows --only honest \
        --jobs 4 --timeout-s $((lim / 3)) --rnx "$rnx" --out "$out/verify_softmax_rows.json" \
        >"$out/verify_softmax_rows.log" 2>&1
      rc=$?
      tail -8 "$out/verify_softmax_rows.log"
      timeout $((lim * 2 / 3 + 60)) python3 bench/corpus.py verify --device cuda --only cheats --jobs 8 \
        --timeout-s $((lim * 2 / 3)) --case-timeout-s 150 --rnx "$rnx" --out "$out/verify_cheats.json" \
        >"$out/verify_cheats.log" 2>&1
      cheats_rc=$?
      [ "$rc" = 0 ] && rc=$cheats_rc
      grep -vE '^ok ' "$out/verify_cheats.log" | tail -20 ;;
    *) echo "cost_gpu: unknown step $step (sizes, aa, slowdown, rewrites)"; exit 2 ;;
  esac
  [ "$rc" = 0 ] || { echo "cost_gpu: step $step exited $rc"; failures=$((failures + 1)); }
done
echo "cost_gpu: $failures step(s) failed, $(elapsed) s"
[ "$failures" = 0 ]
