#!/usr/bin/env bash
# The GPU suite (issue 8), run on a CUDA machine: builds rnx against that machine's torch, then measures
# runner accuracy against triton's do_bench, A/A stability, an injected 3% slowdown, the runtime matrix,
# the verifier's CUDA cheats and the gate end to end. Without a GPU it says so and exits 77 (skipped).
#
#   tests/device/run_gpu.sh [build|verify|runtimes|main|decisive|yardstick|selfcheck|contained|corpus|all]...
#   (default: all)
# Results go to build-gpu/out, and as one archive to $OUT (the device tool's folder) where that is set.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 2
# Everything is written under build-gpu/out; the device tool returns only 8 files of $OUT, so $OUT gets one
# archive of it all and the short summaries.
out="$root/build-gpu/out"
rm -rf "$out" && mkdir -p "$out"
here="$root/tests/device"
rnx="$root/build-gpu/bin/rnx"
export PYTHONUNBUFFERED=1
failures=0

if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "tests/device: skipped: no CUDA GPU visible to torch on this machine (the GPU suite needs one)"
  exit 77
fi

step() { echo; echo "== $*"; }
check() {  # check NAME EXPECTED_RC ACTUAL_RC
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1 (exit $3, expected $2)"; failures=$((failures + 1)); fi
}

build() {
  step "build $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,compute_cap --format=csv | tee "$out/nvidia-smi.txt"
  local torch_prefix
  torch_prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
  local sqlite_lib
  sqlite_lib="$(ls /usr/lib/x86_64-linux-gnu/libsqlite3.so* 2>/dev/null | head -1)"
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix" \
    -DRNX_EXTRA_INCLUDE_DIR="$root/.devdeps/include" -DSQLite3_INCLUDE_DIR="$root/.devdeps/include" \
    -DSQLite3_LIBRARY="$sqlite_lib" -DRNX_CHART_JS="$root/.devdeps/chart.js/chart.min.js" -DRNX_BUILD_TESTS=ON -DTORCH_CUDA_ARCH_LIST=9.0 >"$out/cmake.log" 2>&1 \
    || { tail -30 "$out/cmake.log"; exit 2; }
  # -k 0: a test binary that fails to build must not keep the suite from measuring the rest. GPU_TARGETS (e.g.
  # "rnx rnx-runner-worker rnx-verify-worker") builds only those, when the phases need no test binary.
  local targets=()
  [ -n "${GPU_TARGETS:-}" ] && read -r -a targets <<<"--target $GPU_TARGETS"
  cmake --build build-gpu -j "$(nproc)" "${targets[@]}" -- -k 0 >"$out/build.log" 2>&1 \
    || grep -E 'error|FAILED' "$out/build.log" | head -20
  [ -x "$rnx" ] || { echo "rnx did not build"; exit 2; }
  echo "built: $(ls build-gpu/bin | tr '\n' ' ')"
}

verify_cuda() {
  step "verifier on real CUDA cheats and honest rewrites"
  RNX_CASE_SHOW=hidden_work ctest --test-dir build-gpu -R 'verify\.(cuda_cheats|honest)\.' -V --timeout 300 -j 4 \
    >"$out/verify.log" 2>&1
  check "verifier CUDA corpus" 0 $?
  grep -E 'Test +#|tests passed|tests failed|FAIL' "$out/verify.log"
  echo "hidden_work as each case's report gives it:"
  grep -E '^[0-9]+: +(ok: .*hidden_work|hidden_work:)' "$out/verify.log" | cut -c1-420
}

runtimes() {
  step "runtime matrix: eager, compile, torchscript x float32, float16, bfloat16"
  "$rnx" bench --config "$here/runtimes.toml" --out "$out/runtimes.json" --commit gpu-runtimes 2>"$out/runtimes.log"
  check "rnx bench runtime matrix" 0 $?
  python3 - "$out/runtimes.json" <<'PY'
import json, statistics, sys
run = json.load(open(sys.argv[1]))
for r in run["results"]:
    med = statistics.median(r["samples_ms"]) if r["samples_ms"] else float("nan")
    print(f'{r["kernel"]:8} {r["runtime"]:12} {r["dtype"]:9} {r["status"]:8} median {med:8.4f} ms  '
          f'max_abs_err {r.get("max_abs_err")}  {r["message"][:80]}')
PY
}

main_suite() {
  step "run A and run B of the same code (A/A), fingerprint, accuracy against do_bench"
  "$rnx" bench --config "$here/rnx.toml" --out "$out/run_a.json" --commit aaaa --branch main --base-branch main 2>"$out/run_a.log"
  check "rnx bench run A" 0 $?
  "$rnx" bench --config "$here/rnx.toml" --out "$out/run_b.json" --commit bbbb --branch main --base-branch main 2>"$out/run_b.log"
  check "rnx bench run B" 0 $?
  python3 -c "import json; e=json.load(open('$out/run_a.json'))['environment']; print(json.dumps(e, indent=1))"
  python3 -c "
import json
for r in json.load(open('$out/run_a.json'))['results']:
    print(r['kernel'], r['runtime'], r['dtype'], r['status'], 'unstable' if r['unstable'] else '', r['message'][:100])"
  python3 "$here/gpu_accuracy.py" "$out/run_a.json" "$here" "$out/accuracy.json"
  check "runner within 3% of do_bench on at least 5 kernels" 0 $?
  "$rnx" compare "$out/run_a.json" "$out/run_b.json" | tee "$out/aa.txt"
  local faster slower
  faster=$(grep -cE ' faster( |$)' "$out/aa.txt"); slower=$(grep -cE ' slower( |$)' "$out/aa.txt")
  echo "A/A: $faster faster, $slower slower"
  check "A/A has no faster/slower" "0 0" "$faster $slower"

  step "injected slowdown: chain of 34 matrix products instead of 33 (3% more work)"
  # Two folders below the root, like tests/device, so the manifest's ../../examples paths still resolve.
  local slow="$root/build-gpu/slow"
  rm -rf "$slow" && cp -r "$here" "$slow"
  sed -i 's/^REPS = 33$/REPS = 34/' "$slow/kernels/chain.py"
  grep -n '^REPS' "$slow/kernels/chain.py"
  "$rnx" bench --config "$slow/rnx.toml" --out "$out/run_c.json" --commit cccc --branch slow --base-branch main \
    --pull-request 1 2>"$out/run_c.log"
  check "rnx bench run C (slowed)" 0 $?
  "$rnx" compare "$out/run_a.json" "$out/run_c.json" | tee "$out/slowdown.txt"
  grep -qE '^chain/eager/float32/b2048 .* slower' "$out/slowdown.txt"
  check "3% slowdown called slower" 0 $?

  step "gate end to end on the embedded store: baseline A, identical B -> PASS, slowed C -> BLOCK"
  rm -f "$out/gate.db"
  "$rnx" gate --config "$here/rnx.toml" --results "$out/run_a.json" --store "$out/gate.db" --branch main \
    --base-branch main --commit aaaa --no-github --out-dir "$out/gate_base" >"$out/gate_base.txt" 2>&1
  check "gate stores the baseline" 0 $?
  GITHUB_STEP_SUMMARY="$out/summary_pass.md" "$rnx" gate --config "$here/rnx.toml" --results "$out/run_b.json" \
    --store "$out/gate.db" --branch same --base-branch main --pull-request 2 --commit bbbb --no-github \
    --out-dir "$out/gate_pass" >"$out/gate_pass.txt" 2>&1
  check "gate PASS on identical code" 0 $?
  GITHUB_STEP_SUMMARY="$out/summary_block.md" "$rnx" gate --config "$here/rnx.toml" --results "$out/run_c.json" \
    --store "$out/gate.db" --branch slow --base-branch main --pull-request 1 --commit cccc --no-github \
    --out-dir "$out/gate_block" >"$out/gate_block.txt" 2>&1
  check "gate BLOCK on the slowed run" 1 $?
  cat "$out/summary_block.md"
}

decisive_gpu() {
  step "decisive verdicts: paired A/A and a 2% slowdown, ±1% band (bench/decisive.py --preset gpu)"
  python3 "$root/bench/decisive.py" --preset gpu --modes paired --reps "${DECISIVE_REPS:-20}" \
    --time-limit-s "${DECISIVE_LIMIT_S:-420}" --rnx "$rnx" --out "$out/decisive_gpu.json" | tee "$out/decisive_gpu.txt"
  check "decisive bench ran" 0 "${PIPESTATUS[0]}"
}

yardstick() {
  step "one floating-point yardstick: untouched GEMMs and scans ok, wrong kernels diverged, fresh-input timing"
  "$root/tests/device/yardstick_gpu.sh" "$root/build-gpu" 2>&1 | tee "$out/yardstick.txt"
  check "yardstick expectations" 0 "${PIPESTATUS[0]}"
}

selfcheck() {
  step "A/A self-check of a module with weights (LayerNorm), in-process and process pairing; microsecond kernel"
  RNX="$rnx" RUNS="${SELFCHECK_RUNS:-10}" timeout "${SELFCHECK_LIMIT_S:-300}" "$root/bench/runner_selfcheck_gpu.sh" 2>&1 \
    | tee "$out/selfcheck.txt"
  check "self-check script" 0 "${PIPESTATUS[0]}"
}

contained() {
  step "the sandbox on CUDA: a Triton candidate, the red-team cases, the CUDA cheats"
  ctest --test-dir build-gpu -R 'verify\.(honest\.|redteam\.|cuda_cheats\.)' --timeout 200 -j 8 >"$out/contained.log" 2>&1
  check "verifier on CUDA (honest incl. Triton, red team, CUDA cheats)" 0 $?
  grep -E 'Test +#|tests passed|tests failed' "$out/contained.log"
}

corpus() {
  step "the corpus: A/A at 1%, a 2% slowdown, verify of honest rewrites and cheats"
  RNX="$rnx" OUT="$out/corpus" "$root/tests/device/corpus_gpu.sh" "$@" 2>&1 | tail -40 | tee "$out/corpus.txt"
  check "corpus steps" 0 "${PIPESTATUS[0]}"
}

phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(all)
for p in "${phases[@]}"; do
  case "$p" in
    build) build ;;
    verify) verify_cuda ;;
    runtimes) runtimes ;;
    main) main_suite ;;
    decisive) decisive_gpu ;;
    yardstick) yardstick ;;
    selfcheck) selfcheck ;;
    contained) contained ;;
    corpus) corpus ;;
    all) build; main_suite; runtimes; verify_cuda ;;
    *) echo "unknown phase $p (build, verify, runtimes, main, decisive, yardstick, selfcheck, contained, corpus, all)"; exit 2 ;;
  esac
done
if [ -n "${OUT:-}" ]; then
  tar -czf "$OUT/gpu-results.tar.gz" -C "$out" .
  for f in yardstick.txt selfcheck.txt contained.log corpus.txt aa.txt slowdown.txt decisive_gpu.txt; do [ -f "$out/$f" ] && cp "$out/$f" "$OUT/"; done
fi
echo
echo "tests/device: $failures failure(s)"
[ "$failures" = 0 ]
