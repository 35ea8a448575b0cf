#!/usr/bin/env bash
# The real-rewrites and containment points on a CUDA machine, in one call of about nine minutes (issues 33, 35):
#   1. build rnx and its two workers (tests/device/run_gpu.sh build, GPU_TARGETS narrowed);
#   2. in the background: the verifier's CUDA cases and red-team cases as ctest runs them (root on the device
#      machine: the sandbox drops to nobody), and the Triton row softmax;
#   3. rnx optimize keeping a Triton rewrite (tests/device/optimize_triton_gpu.sh);
#   4. every corpus rewrite and cheat through rnx verify on the GPU (bench/corpus.py verify --device cuda), with
#      the wall time per candidate and its compile share, until REWRITES_DEADLINE_S (default 560) after the start.
#
#   tests/device/rewrites_gpu.sh
#
# Logs and JSON go to $OUT (else build-gpu/rewrites-out): build.txt, ctest_verify.log, optimize_triton.log,
# optimize_triton.json, verify_cuda.log, verify_cuda.json. Exit 0 when every step ran clean, 77 without a GPU.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 2
out="${OUT:-$root/build-gpu/rewrites-out}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
started=$(date +%s)
elapsed() { echo $(($(date +%s) - started)); }
deadline="${REWRITES_DEADLINE_S:-560}"
if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "rewrites_gpu: skipped: no CUDA GPU visible to torch on this machine"
  exit 77
fi
failures=0
echo "rewrites_gpu: $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(nproc) cores, uid $(id -u)"

GPU_TARGETS="rnx rnx-runner-worker rnx-verify-worker" OUT="" tests/device/run_gpu.sh build >"$out/build.txt" 2>&1
rnx="$root/build-gpu/bin/rnx"
[ -x "$rnx" ] || { tail -20 "$out/build.txt"; echo "rewrites_gpu: rnx did not build"; exit 2; }
echo "rewrites_gpu: built in $(elapsed) s"

ctest --test-dir build-gpu -R 'verify\.(redteam|cuda_cheats)\.|verify\.honest\.triton' -j 4 --timeout 240 \
  --output-on-failure >"$out/ctest_verify.log" 2>&1 &
ctest_pid=$!

RNX="$rnx" OUT="$out" timeout 150 tests/device/optimize_triton_gpu.sh >"$out/optimize_triton.log" 2>&1 ||
  failures=$((failures + 1))
echo "rewrites_gpu: optimize (Triton rewrite) done at $(elapsed) s: $(grep -E 'candidate 1 ' "$out/optimize_triton.log" | head -1 | cut -c1-160)"

left=$((deadline - $(elapsed)))
python3 bench/corpus.py verify --device cuda --jobs 8 --timeout-s $((left > 160 ? left - 150 : 10)) \
  --case-timeout-s 150 --rnx "$rnx" --out "$out/verify_cuda.json" >"$out/verify_cuda.log" 2>&1 ||
  failures=$((failures + 1))
echo "rewrites_gpu: corpus verify done at $(elapsed) s"
wait "$ctest_pid" || failures=$((failures + 1))

echo "== rnx optimize with a Triton rewrite"
tail -25 "$out/optimize_triton.log" | cut -c1-300
echo "== ctest: the verifier's CUDA and red-team cases (as uid $(id -u))"
grep -E 'Test +#|tests passed|tests failed' "$out/ctest_verify.log" | cut -c1-160
echo "== bench/corpus.py verify --device cuda"
grep -vE '^ok ' "$out/verify_cuda.log" | cut -c1-400 | tail -30
echo "rewrites_gpu: $failures step(s) failed, $(elapsed) s"
[ "$failures" = 0 ]
