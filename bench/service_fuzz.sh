#!/usr/bin/env bash
# Fuzzes rnx-server's request path (Beast HTTP parser -> routing -> auth -> JSON -> run documents -> SQLite)
# with libFuzzer + ASan + UBSan for a fixed time, from a seed corpus of real requests.
#   bench/service_fuzz.sh [SECONDS]     (default 300)
# Builds build-service-fuzz/ with clang-14; prints the libFuzzer summary and writes bench/results/service_fuzz.json.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-300}"
build="$root/build-service-fuzz"
out="$root/bench/results"
mkdir -p "$out"
cc="${CC_FUZZ:-clang-14}"
cxx="${CXX_FUZZ:-clang++-14}"
if ! command -v "$cxx" >/dev/null; then
  echo "$cxx not found: install clang-14 and libclang-rt-14-dev (scripts/setup.sh does)" >&2
  exit 2
fi
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRNX_WITH_TORCH=OFF -DRNX_BUILD_TESTS=OFF \
  -DRNX_BUILD_FUZZERS=ON -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$build" -j "${JOBS:-2}" --target rnx_fuzz_request

corpus="$build/corpus"
mkdir -p "$corpus"
run_doc="$(python3 "$root/bench/service_make_run.py" --project demo --kernels 2 --batches 2 --samples 10)"
pr_doc="$(python3 "$root/bench/service_make_run.py" --project demo --kernels 2 --batches 2 --samples 10 \
  --branch feature --pull-request 3 --seed 2)"
seed() {  # seed NAME AUTH_BYTE REQUEST
  printf '%s%s' "$2" "$3" >"$corpus/seed-$1"
}
req() {  # req METHOD TARGET BODY
  printf '%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %s\r\n\r\n%s' \
    "$1" "$2" "${#3}" "$3"
}
seed upload "1" "$(req POST /api/v1/runs "$run_doc")"
seed upload-pr "1" "$(req POST /api/v1/runs "$pr_doc")"
seed upload-noauth "0" "$(req POST /api/v1/runs "$run_doc")"
seed verdict "1" "$(req POST /api/v1/runs/1/verdict '{"policy": {"rope": 0.05, "on_abstain": "block"}}')"
seed baseline "1" "$(req POST /api/v1/baselines '{"run_id": "2", "accepted_by": "a", "reason": "r"}')"
seed list "1" "$(req GET '/api/v1/projects/demo/runs?branch=main&limit=5' '')"
seed history "1" "$(req GET '/api/v1/projects/demo/history?kernel=kernel0' '')"
seed get "1" "$(req GET /api/v1/runs/1 '')"
seed health "0" "$(req GET /healthz '')"
seed metrics "0" "$(req GET /metrics '')"
seed chunked "1" "$(printf 'POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n0\r\n\r\n')"

log="$out/service_fuzz.log"
echo "== fuzzing for ${seconds}s (log: $log)"
status=0
(cd "$build" && ASAN_OPTIONS=detect_leaks=0 "$build/bin/rnx_fuzz_request" -max_total_time="$seconds" \
  -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$corpus") >"$log" 2>&1 || status=$?
runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
cov="$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')"
crashes="$(find "$build" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \) | wc -l)"
printf '%-22s %s\n' "seconds" "$seconds" "executions" "${runs:-?}" "edges covered" "${cov:-?}" \
  "corpus entries" "$(ls "$corpus" | wc -l)" "crashes/timeouts" "$crashes" "libFuzzer exit" "$status"
printf '{"seconds": %s, "executions": %s, "edges": %s, "crashes": %s, "exit": %s}\n' \
  "$seconds" "${runs:-0}" "${cov:-0}" "$crashes" "$status" >"$out/service_fuzz.json"
if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ]; then
  tail -40 "$log"
  exit 1
fi
