#!/usr/bin/env bash
# The kernel corpus on a CUDA machine (issue 20): bench/corpus.py on bench/corpus/rnx.gpu.toml with default
# settings. Three steps, each with its own time limit so the whole fits in about 12 minutes on an H200:
#
#   aa        unchanged code, paired (rnx bench --pair HEAD~1), judged at +-1%, in
#             chunks of 12 kernels so a chunk cut by the limit loses only itself      (CORPUS_AA_S, default 280 s)
#   slowdown  a calibrated 2% slowdown on six kernels that are not one-op chains: one calibration run against the
#             runner's own measurement, then CORPUS_SLOW_REPS (default 2) that count     (CORPUS_SLOW_S, default 300 s)
#   verify    every honest rewrite (torch and Triton) and cheat through rnx verify    (CORPUS_VERIFY_S, default 100 s;
#             CORPUS_VERIFY_JOBS candidates at once, default 4)
#   kb        the KernelBench-style suite nobody tuned (bench/corpus/rnx.gpu_kb.toml), paired A/A; run it first on a
#             fresh machine to include a first run's cost                              (CORPUS_KB_S, default 150 s)
#   kb_slowdown  a calibrated 2% step on four of its problems, one calibration run and one that counts
#                                                                                     (CORPUS_KB_SLOW_S, default 300 s)
#
#   tests/device/corpus_gpu.sh [aa|slowdown|verify|kb|kb_slowdown]...   (default: aa slowdown verify)
#
# rnx is $RNX, else build-gpu/bin/rnx (built by tests/device/run_gpu.sh build when missing). Results (one JSON per
# step, the logs) go to $OUT when it is set, else build-gpu/corpus-out; a short table ends the output. Exit 0 when
# every step ran and verify found nothing wrong, 1 otherwise, 77 (skipped) without a GPU.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 2
out="${OUT:-$root/build-gpu/corpus-out}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(aa slowdown verify)
failures=0

if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "corpus_gpu: skipped: no CUDA GPU visible to torch on this machine"
  exit 77
fi

rnx="${RNX:-$root/build-gpu/bin/rnx}"
if [ ! -x "$rnx" ]; then
  echo "corpus_gpu: $rnx is missing; building it with tests/device/run_gpu.sh build"
  "$root/tests/device/run_gpu.sh" build || { echo "corpus_gpu: the build failed"; exit 2; }
fi
for tool in rnx-runner-worker rnx-verify-worker; do
  [ -x "$(dirname "$rnx")/$tool" ] || { echo "corpus_gpu: $tool is missing beside $rnx"; exit 2; }
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader >"$out/gpu.txt" 2>&1
echo "corpus_gpu: $(cat "$out/gpu.txt"); rnx $rnx; results in $out"

# run_step NAME LIMIT_S corpus.py-arguments...: the step's own limit is passed to corpus.py (which stops rnx and
# still writes what finished); `timeout` 60 s later is the backstop.
run_step() {
  local name="$1" limit="$2"
  shift 2
  echo
  echo "== $name $(date -u +%FT%TZ) (limit ${limit} s)"
  timeout --kill-after=10 "$((limit + 60))" python3 "$root/bench/corpus.py" "$@" --device cuda --rnx "$rnx" \
    --timeout-s "$limit" --out "$out/corpus_${name}_cuda.json" 2>&1 | tee "$out/corpus_${name}.log" | tail -60
  local rc="${PIPESTATUS[0]}"
  if [ "$rc" != 0 ]; then
    echo "corpus_gpu: step $name exited $rc"
    failures=$((failures + 1))
  fi
}

for step in "${steps[@]}"; do
  case "$step" in
    aa) run_step aa "${CORPUS_AA_S:-280}" aa --chunk 12 ;;
    slowdown)
      run_step slowdown "${CORPUS_SLOW_S:-300}" slowdown --fraction 0.02 --calibrate 1 --reps "${CORPUS_SLOW_REPS:-2}" \
        --kernel gemm_bf16 --kernel layernorm_module \
        --kernel softmax_rows --kernel conv2d_module --kernel mlp_block --kernel attention_causal ;;
    verify) run_step verify "${CORPUS_VERIFY_S:-100}" verify --jobs "${CORPUS_VERIFY_JOBS:-4}" --case-timeout-s 50 ;;
    kb) run_step kb "${CORPUS_KB_S:-150}" aa --suite kb ;;
    kb_slowdown)
      run_step kb_slowdown "${CORPUS_KB_SLOW_S:-300}" slowdown --suite kb --fraction 0.02 --calibrate 1 --reps 1 \
        --kernel l1_layernorm --kernel l1_conv2d --kernel l2_linear_gelu_residual --kernel l2_conv_groupnorm_tanh ;;
    *) echo "corpus_gpu: unknown step '$step' (use aa, slowdown, verify, kb, kb_slowdown)"; exit 2 ;;
  esac
done

echo
echo "== corpus on $(cut -d, -f1 "$out/gpu.txt")"
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
for step in ("aa", "slowdown", "verify", "kb", "kb_slowdown"):
    path = os.path.join(out, f"corpus_{step}_cuda.json")
    if not os.path.exists(path):
        continue
    doc = json.load(open(path))
    s = doc.get("summary", {})
    if step == "verify":
        print(f"verify    honest accepted {s['honest_accepted']}, rejected {s['honest_rejected']}; cheats rejected "
              f"{s['cheats_rejected']}, missed {s['cheats_missed']}; skipped {s['honest_skipped'] + s['cheats_skipped']}"
              f" ({doc['wall_s']:.0f} s)")
        for c in doc["cases"]:
            if c["ok"] is False:
                print(f"          WRONG {c['case']}: want {c['expect']}, got {c['outcome']}: {c.get('detail', '')[:200]}")
        continue
    c = s.get("counts", {})
    m = s.get("mde") or {}
    line = (f"{step:9} {s.get('configurations', 0)} configs: broken {c.get('broken', 0)}, faster {c.get('faster', 0)}, "
            f"slower {c.get('slower', 0)}, equivalent {c.get('equivalent', 0)}, abstain {c.get('abstain', 0)}; "
            f"MDE median {100 * m['median']:.2f}% p90 {100 * m['p90']:.2f}%" if m else
            f"{step:9} {s.get('configurations', 0)} configs, counts {c}")
    if step in ("slowdown", "kb_slowdown") and s.get("ratios"):
        line += f"; ratio median {s['ratios']['median']:.4f} (target {s['target_ratio']:.4f})"
    print(line + f" ({doc['wall_s']:.0f} s)")
    for r in doc.get("runs", []):
        if "error" in r:
            print(f"          run {r['rep']}: {r['error'][:200]}")
    for r in doc.get("configs", []):
        if r["decision"] in ("broken", "faster", "slower" if step in ("aa", "kb") else "-", "error"):
            print(f"          {r['kernel']}/{r['dtype']}/b{r['batch']}: {r['decision']} {r.get('ratio')}: "
                  f"{(r.get('reason') or '')[:160]}")
PY
exit $((failures > 0))
