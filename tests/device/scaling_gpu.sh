#!/usr/bin/env bash
# The per-configuration cost on the GPU, before and after (docs/scaling.md): 12 configurations of unchanged code
# (tests/device/scaling.toml, paired with itself: `rnx bench --self-check`), once with every worker started
# when its turn comes (--prestart off: the old behaviour) and once with each worker started while the previous
# one measures (--prestart on); on a machine with two or more GPUs also over two device lanes
# (--devices cuda:0,cuda:1) against one GPU, with the verdicts of both. Prints the wall time
# per configuration, where the time went, and the decisions; writes JSON under build-gpu/out/scaling and $OUT.
#
#   tests/device/scaling_gpu.sh            (builds build-gpu first when it has no rnx; about 4 minutes on the H200)
#   PHASES="prestart devices" tests/device/scaling_gpu.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 2
rnx="$root/build-gpu/bin/rnx"
out="$root/build-gpu/out/scaling"
phases="${PHASES:-prestart devices}"
if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "tests/device/scaling_gpu.sh: skipped: no CUDA GPU visible to torch on this machine"
  exit 77
fi
[ -x "$rnx" ] || "$root/tests/device/run_gpu.sh" build || exit 2
mkdir -p "$out"
gpus="$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)"
nvidia-smi --query-gpu=index,name,clocks.sm --format=csv,noheader

# one NAME ARGS...: a --self-check run of the 12 configurations; its run documents, timings and log under $out.
one() {
  local name="$1"
  shift
  echo "== $name: rnx bench --self-check $* ($(date -u +%T))"
  "$rnx" bench --config "$root/tests/device/scaling.toml" --self-check --out "$out/$name.head.json" \
    --base-out "$out/$name.base.json" --commit scaling --branch scaling --timings "$out/$name.timings.json" "$@" \
    >"$out/$name.log" 2>&1
  echo "   exit $? (1 = identical code judged faster or slower)"
  "$rnx" compare "$out/$name.base.json" "$out/$name.head.json" --format json >"$out/$name.verdict.json" 2>/dev/null
}

for phase in $phases; do
  case "$phase" in
    prestart)
      one before --prestart off
      one after --prestart on
      ;;
    devices)
      if [ "$gpus" -ge 2 ]; then
        one lanes2 --prestart on --devices cuda:0,cuda:1
        [ -f "$out/after.timings.json" ] || one after --prestart on
      else
        echo "== devices: one GPU here; the two-lane run needs a machine with two (the CPU form: bench/devices_cpu.py)"
      fi
      ;;
    *) echo "unknown phase $phase (prestart, devices)"; exit 2 ;;
  esac
done

python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
rows = []
for name in ("before", "after", "lanes2"):
    path = os.path.join(out, name + ".timings.json")
    if not os.path.exists(path):
        continue
    t = json.load(open(path))
    verdict = {}
    vpath = os.path.join(out, name + ".verdict.json")
    try:
        v = json.load(open(vpath))
        for c in v.get("configs", []):
            verdict[f'{c["kernel"]}/{c["runtime"]}/{c["dtype"]}/b{c["batch"]}'] = c["decision"]
    except (OSError, ValueError):
        pass
    n = max(1, len({c["config"] for c in t["configs"]}))
    rows.append((name, t, n, verdict))
print()
print("| run | lanes | configurations | wall s | s per configuration | workers | start waited | start hidden "
      "| exec | python+torch | device | fingerprint | load | inputs | bind+check | warm-up | sampling | other measuring |")
print("|" + "---|" * 18)
for name, t, n, _ in rows:
    print(f'| {name} | {t["lanes"]} | {n} | {t["total_s"]:.1f} | **{t["total_s"] / n:.2f}** | {t["workers"]} '
          f'| {t["worker_start_waited_s"]:.1f} | {t["start_hidden_s"]:.1f} | {t["start_exec_s"]:.1f} '
          f'| {t["start_python_s"]:.1f} | {t["start_device_s"]:.1f} | {t["start_fingerprint_s"]:.1f} '
          f'| {t["load_s"]:.1f} | {t["inputs_s"]:.1f} | {t["bind_s"]:.1f} | {t["warmup_s"]:.1f} '
          f'| {t["sampling_s"]:.1f} | {t["measure_other_s"]:.1f} |')
print()
for name, t, n, verdict in rows:
    counts = {}
    for d in verdict.values():
        counts[d] = counts.get(d, 0) + 1
    lanes = {c["config"]: c["measured_on"] for c in t["configs"]}
    print(f"{name}: decisions {counts}; lanes {sorted(set(lanes.values()))}")
if len(rows) >= 2:
    by = {name: (t, v) for name, t, _, v in rows}
    if "after" in by and "lanes2" in by:
        speed = by["after"][0]["total_s"] / by["lanes2"][0]["total_s"]
        same = by["after"][1] == by["lanes2"][1]
        print(f"two lanes: {speed:.2f}x the throughput of one (target >= 1.6), verdicts identical: {same}")
    if "before" in by and "after" in by:
        print(f'prestart: {by["before"][0]["total_s"]:.1f} s -> {by["after"][0]["total_s"]:.1f} s')
json.dump({name: {"timings": t, "decisions": v} for name, t, _, v in rows},
          open(os.path.join(out, "scaling_gpu.json"), "w"), indent=1)
PY
if [ -n "${OUT:-}" ]; then
  cp "$out/scaling_gpu.json" "$OUT/" 2>/dev/null
  tar -czf "$OUT/scaling.tar.gz" -C "$out" . 2>/dev/null
fi
