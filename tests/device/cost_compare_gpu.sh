#!/usr/bin/env bash
# The cost of a GPU pull request's suite in one device call: the cost suite (bench/corpus/rnx.gpu_cost.toml) paired
# with itself by this code, one rnx bench as a pull request's job runs it; then a subset of it (COST_SUBSET, kernel
# names) paired by this code and by an earlier revision, one rnx bench each, for the before/after of the same
# configurations; then, where asked, this code's calibrated 2% slowdown and the rewrites still to verify on the GPU
# (tests/device/cost_gpu.sh runs each step, each with its own time limit so the whole fits one call).
#
#   BEFORE=.before tests/device/cost_compare_gpu.sh
#
# BEFORE is a copy of the earlier revision's tree inside this one (git archive REV | tar -x -C .before; ignored,
# carried to the device); both are built at once. Limits: COST_AFTER_S (180), COST_SUBSET_S (150 a side),
# COST_SLOW_S (0: skipped; in chunks of COST_SLOW_CHUNK kernels, default 12, so a cut keeps the rest),
# COST_REWRITES_S (0: skipped). Results under $OUT/after, $OUT/subset-after and
# $OUT/subset-before.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 2
out="${OUT:-$root/build-gpu/cost-compare-out}"
before="${BEFORE:-.before}"
mkdir -p "$out/after" "$out/before" "$out/subset-after" "$out/subset-before"
started=$(date +%s)
[ -d "$before" ] || { echo "cost_compare_gpu: $before is missing (git archive REV | tar -x -C $before)"; exit 2; }
[ -d "$before/.devdeps" ] || cp -r .devdeps "$before/"
(cd "$before" && GPU_TARGETS="rnx rnx-runner-worker rnx-verify-worker" OUT="" tests/device/run_gpu.sh build \
  >"$out/before/build.txt" 2>&1) &
GPU_TARGETS="rnx rnx-runner-worker rnx-verify-worker" OUT="" tests/device/run_gpu.sh build >"$out/after/build.txt" 2>&1
wait
echo "cost_compare_gpu: built both in $(($(date +%s) - started)) s"
[ -x build-gpu/bin/rnx ] || { tail -20 "$out/after/build.txt"; exit 2; }
RNX="$root/build-gpu/bin/rnx" OUT="$out/after" COST_AA_S="${COST_AFTER_S:-180}" tests/device/cost_gpu.sh aa
subset="${COST_SUBSET:-gemm_bf16 mlp_block layernorm_module softmax_rows triton_softmax pkg_softmax kb_literal_gelu}"
for side in after before; do
  bin="$root/build-gpu/bin/rnx"
  [ "$side" = before ] && bin="$root/$before/build-gpu/bin/rnx"
  [ -x "$bin" ] || { tail -20 "$out/$side/build.txt"; continue; }
  RNX="$bin" OUT="$out/subset-$side" COST_AA_S="${COST_SUBSET_S:-150}" COST_KERNELS="$subset" \
    tests/device/cost_gpu.sh aa
done
[ "${COST_SLOW_S:-0}" -gt 0 ] &&
  RNX="$root/build-gpu/bin/rnx" OUT="$out/after" COST_SLOW_S="$COST_SLOW_S" COST_CHUNK="${COST_SLOW_CHUNK:-12}" \
    tests/device/cost_gpu.sh slowdown
[ "${COST_REWRITES_S:-0}" -gt 0 ] &&
  RNX="$root/build-gpu/bin/rnx" OUT="$out/after" COST_REWRITES_S="$COST_REWRITES_S" tests/device/cost_gpu.sh rewrites
echo "cost_compare_gpu: $(($(date +%s) - started)) s"
