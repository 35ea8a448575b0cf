# Sourced by the GPU scripts that measure with a built rnx (cost_gpu.sh, light_gpu.sh), after they set $root (the
# checkout, the current folder), $out (their output folder) and elapsed (seconds since they started).
#
#   gpu_prepare NAME   skips with exit 77 without a CUDA GPU, prints the machine and the code, builds rnx
#                      (tests/device/run_gpu.sh build, GPU_TARGETS narrowed) unless $RNX names one, sets $rnx, and
#                      installs the corpus's kernel package (bench/corpus/packages/install.py)
gpu_prepare() {
  local name="$1"
  if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "$name: skipped: no CUDA GPU visible to torch on this machine"
    exit 77
  fi
  echo "$name: $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem \
    --format=csv,noheader), $(nproc) cores, code $(git rev-parse --short HEAD 2>/dev/null)"
  rnx="${RNX:-}"
  if [ -z "$rnx" ]; then
    GPU_TARGETS="rnx rnx-runner-worker rnx-verify-worker" OUT="" tests/device/run_gpu.sh build >"$out/build.txt" 2>&1
    rnx="$root/build-gpu/bin/rnx"
    [ -x "$rnx" ] || { tail -20 "$out/build.txt"; echo "$name: rnx did not build"; exit 2; }
    echo "$name: built in $(elapsed) s"
  fi
  python3 bench/corpus/packages/install.py >"$out/install.txt" 2>&1 || { cat "$out/install.txt"; exit 2; }
}
