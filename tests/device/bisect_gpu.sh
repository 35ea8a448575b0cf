#!/usr/bin/env bash
# rnx bisect on the H200: a single culprit among 16 commits (bench/bisect_cpu.py culprit --device cuda).
# Commit 11 makes the corpus's gemm_fp32 (4096 x 4096, rnx.gpu.toml sizes) 8% slower with slowdown.py's calibrated
# CUDA sleep; the other commits touch docs. rnx bisect from commit 1 to commit 16 must name commit 11, alone, in at
# most 5 paired runs. Prints the true ratio of the slowed variant, the bisect's comparisons and culprits; writes
# $OUT/bisect_culprit_gpu.json (default build-gpu/bisect-out). Limit: BISECT_GPU_S seconds (default 220).
#
#   tests/device/bisect_gpu.sh
#
# rnx is $RNX, else build-gpu/bin/rnx (built by tests/device/run_gpu.sh build when missing). Exit 0 when commit 11
# alone was named in at most 5 paired runs, 1 otherwise, 77 (skipped) without a GPU.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 2
out="${OUT:-$root/build-gpu/bisect-out}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "bisect_gpu: skipped: no CUDA GPU visible to torch on this machine"
  exit 77
fi
rnx="${RNX:-$root/build-gpu/bin/rnx}"
if [ ! -x "$rnx" ]; then
  echo "bisect_gpu: $rnx is missing; building it with tests/device/run_gpu.sh build"
  "$root/tests/device/run_gpu.sh" build || { echo "bisect_gpu: the build failed"; exit 2; }
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>&1 | tee "$out/gpu.txt"
limit="${BISECT_GPU_S:-220}"
timeout --kill-after=10 "$limit" python3 "$root/bench/bisect_cpu.py" culprit --device cuda --rnx "$rnx" \
  --threshold 0.01 --out "$out/bisect_culprit_gpu.json" 2>&1 | tee "$out/bisect_gpu.log"
rc="${PIPESTATUS[0]}"
[ "$rc" = 0 ] || { echo "bisect_gpu: bench/bisect_cpu.py exited $rc"; exit 1; }
python3 - "$out/bisect_culprit_gpu.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["named_positions"] == [11] and r["paired_runs"] <= 5
print("bisect_gpu: named commits %s in %d paired runs (%s s): %s" % (
    r["named_positions"], r["paired_runs"], r["bisect_seconds"], "ok" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
