#!/usr/bin/env bash
# The shared yardstick and the verifier's fresh-input timing on a CUDA machine (issue 20 deliver 1 and 4, issue 21
# point 6), with an rnx already built (tests/device/run_gpu.sh build, or any build folder):
#
#   tests/device/yardstick_gpu.sh [BUILD_DIR]        (default: build-gpu)
#
# Prints one line per expectation and exits 1 when one fails, 77 without a GPU. Writes bench JSON and the verify
# reports to BUILD_DIR/out-yardstick.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build-gpu}"
rnx="$build/bin/rnx"
export RNX_VERIFY_WORKER="$build/bin/rnx-verify-worker"
out="$build/out-yardstick"
mkdir -p "$out"
if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "yardstick_gpu: skipped: no CUDA GPU visible to torch"
  exit 77
fi
failures=0
expect() {  # expect WHAT WANTED GOT
  if [ "$2" = "$3" ]; then echo "ok: $1 ($3)"; else echo "FAIL: $1: $3, expected $2"; failures=$((failures + 1)); fi
}

"$rnx" bench --config "$root/tests/device/yardstick.toml" --out "$out/bench.json" --commit yardstick 2>"$out/bench.log"
for label in gemm_4096/eager/float32/b4096 gemm_4096/eager/bfloat16/b4096 gemm_4096/eager/float16/b4096 \
             cumsum_32768/eager/float32/b16 one_element_off/eager/float32/b2 nan_in_dtype/eager/float32/b2; do
  status=$(python3 - "$out/bench.json" "$label" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["results"]:
    if f"{r['kernel']}/{r['runtime']}/{r['dtype']}/b{r['batch']}" == sys.argv[2]:
        print(r["status"], "max_abs_err", r.get("max_abs_err"), "tolerance", r.get("tolerance"), file=sys.stderr)
        print(r["status"])
        break
else:
    print("missing")
PY
)
  case "$label" in one_element_off*|nan_in_dtype*) want=diverged ;; *) want=ok ;; esac
  expect "rnx bench $label" "$want" "$status"
done

verify() {  # verify NAME WANTED_EXIT ARGS...
  local name=$1 want=$2
  shift 2
  "$rnx" verify --device cuda --format json "$@" >"$out/$name.json" 2>"$out/$name.log"
  local rc=$?
  expect "rnx verify $name" "$want" "$rc"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); [print('   ', c['name'], c['result'], c['detail'][:300]) for c in r['checks'] if c['name'] in ('ignored_inputs', 'implausible_speedup')]" "$out/$name.json"
}
verify kb_matmul_large_k_mm 0 --reference "$root/tests/verify/refs/kb_matmul_large_k.py" \
  --candidate "$root/tests/verify/honest/kb_matmul_large_k_mm.py" --dtype float32,bfloat16
verify address_cache 1 --config "$root/tests/verify/rnx.toml" --kernel softmax \
  --candidate "$root/tests/verify/cheats/address_cache.py"
verify softmax_fused 0 --config "$root/tests/verify/rnx.toml" --kernel softmax \
  --candidate "$root/tests/verify/honest/softmax_fused.py"
[ "$failures" = 0 ] || exit 1
