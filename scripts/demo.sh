#!/usr/bin/env bash
# The main job, end to end on the embedded store (no server): build rnx, baseline the example kernels on
# a base commit, gate an unchanged pull request and one that swaps a fused kernel for a naive one. The pull
# requests are gated paired (the default where the base commit is checked out): base and head alternated in
# the same worker processes, processes added until every configuration is decided.
#
#   scripts/demo.sh            # prints both verdict tables and the gate's exit codes
#
# Settings: RNX_BUILD_DIR (default build), RNX_DEMO_DIR (default a temp folder, removed afterwards).
# Exits 0 when the gate behaved as promised (the unchanged PR is not blocked, the slowed one is).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RNX_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"

if [ ! -x "$build/bin/rnx" ] || [ ! -x "$build/bin/rnx-runner-worker" ]; then
  torch_prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
  [ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -G Ninja -DCMAKE_PREFIX_PATH="$torch_prefix"
  cmake --build "$build" -j "$(nproc)" --target rnx rnx-runner-worker
fi
rnx="$build/bin/rnx"

work="${RNX_DEMO_DIR:-}"
if [ -z "$work" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/kernels"
cd "$work"
git init -q -b main
git config user.name demo
git config user.email demo@example.invalid

# main has the fused kernels; the manifest keeps the demo to a minute or two on two cores: at most 400
# samples a side per process, stopped early once the block ratios' median is known to 0.5%.
cp "$root/examples/kernels/softmax_fused.py" kernels/softmax.py
cp "$root/examples/kernels/layernorm_fused.py" kernels/layernorm.py
cat > rnx.toml <<'EOF'
[project]
name = "rnx-demo"

[defaults]
runtimes = ["eager"]
dtypes   = ["float32"]
batch    = [1, 8]
device   = "cpu"

[bench]
processes     = 3     # the first look; a paired run adds processes while a configuration is undecided
max_processes = 6
samples       = 400
min_samples   = 8
budget_ms     = 300
warmup_ms     = 100
threads       = 1

[[kernel]]
name   = "softmax"
path   = "kernels/softmax.py"
inputs = { x = "B,64,1024" }

[[kernel]]
name   = "layernorm"
path   = "kernels/layernorm.py"
inputs = { x = "B,64,1024" }
tolerance = { float32 = { rtol = 1e-5, atol = 1e-5 } }

[gate]
rope        = 0.02      # the product default: decide changes beyond ±2%
probability = 0.95
on_abstain  = "warn"
EOF
printf '.rnx/\n' > .gitignore
git add -A && git commit -q -m "fused kernels"
base="$(git rev-parse HEAD)"

gate() {
  # Outside GitHub Actions the event comes from flags; the store is .rnx/baselines.db (the default).
  set +e
  env -u GITHUB_EVENT_NAME -u RNX_SERVICE_URL "$rnx" gate --no-github "$@"
  local code=$?
  set -e
  return "$code"
}

echo "== 1. push to main: the baseline ($base)"
gate --commit "$base" --branch main || true

echo
echo "== 2. pull request #1: a documentation change, kernels untouched"
git checkout -q -b docs
echo "# rnx demo" > README.md && git add README.md && git commit -q -m "docs"
code_same=0
gate --commit "$(git rev-parse HEAD)" --branch docs --base-branch main --pull-request 1 || code_same=$?
echo "exit code: $code_same"

echo
echo "== 3. pull request #2: softmax swapped for the hand-written four-pass version"
git checkout -q main && git checkout -q -b naive-softmax
cp "$root/examples/kernels/softmax.py" kernels/softmax.py && git commit -q -am "hand-written softmax"
code_slow=0
gate --commit "$(git rev-parse HEAD)" --branch naive-softmax --base-branch main --pull-request 2 || code_slow=$?
echo "exit code: $code_slow"

echo
if [ "$code_same" = 0 ] && [ "$code_slow" = 1 ]; then
  echo "demo: as promised: the unchanged PR was not blocked (exit 0), the slowdown was (exit 1)"
else
  echo "demo: unexpected exit codes: unchanged PR $code_same (want 0), slowed PR $code_slow (want 1)" >&2
  exit 1
fi
