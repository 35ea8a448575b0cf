#!/usr/bin/env bash
# rnx optimize end to end on a CUDA machine with a Triton candidate: a scripted `command` rewriter answers with a
# fused @triton.jit row softmax for a kernel that computes softmax in five torch ops. The candidate must pass the
# verifier (JIT-compiled inside the sandbox), be benchmarked contained, and be KEPT as faster.
#
#   RNX=build-gpu/bin/rnx tests/device/optimize_triton_gpu.sh
#
# Prints rnx optimize's table; writes optimize_triton.json to $OUT (or build-gpu/out). Exit 0 when the Triton
# candidate is kept, 1 otherwise, 77 without a GPU.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rnx="${RNX:-$root/build-gpu/bin/rnx}"
out="${OUT:-$root/build-gpu/out}"
mkdir -p "$out"
if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "optimize_triton_gpu: skipped: no CUDA GPU"; exit 77
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
cat >rnx.toml <<'TOML'
[project]
name = "optimize-triton"

[[kernel]]
name    = "softmax"
path    = "softmax.py"
inputs  = { x = "B,4096,4096" }
batch   = [1]
dtypes  = ["float32"]
device  = "cuda"
TOML
cat >softmax.py <<'PY'
# Row softmax in five torch ops (max, subtract, exp, sum, divide): five passes over memory.
import torch


def run(x):
    shifted = x - x.amax(dim=-1, keepdim=True)
    e = torch.exp(shifted)
    return e / e.sum(dim=-1, keepdim=True)
PY
cp "$root/bench/corpus/honest/softmax_rows_triton.py" candidate.py
cat >rewrite.py <<'PY'
#!/usr/bin/env python3
# The scripted rewriter: reads rnx's request on stdin, answers with the Triton candidate beside it.
import json, os, sys
request = json.load(sys.stdin)
assert request["kernel"]["name"] == "softmax", request["kernel"]
sys.stdout.write(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "candidate.py")).read())
PY
chmod +x rewrite.py
git init -q && git add -A && git -c user.name=rnx -c user.email=rnx@localhost commit -qm "softmax in five ops"
echo "optimize_triton_gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader); $(date -u +%FT%TZ)"
"$rnx" optimize --config rnx.toml --kernel softmax --budget 1 --rewriter "command:$work/rewrite.py" --no-commit \
  --no-profile --json-out "$out/optimize_triton.json" 2>&1 | tee "$out/optimize_triton.log"
rc="${PIPESTATUS[0]}"
echo "optimize_triton_gpu: rnx optimize exited $rc"
if grep -q "KEPT" "$out/optimize_triton.log"; then echo "optimize_triton_gpu: the Triton candidate was kept"; exit 0; fi
echo "optimize_triton_gpu: the Triton candidate was not kept"
exit 1
