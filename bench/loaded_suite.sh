#!/usr/bin/env bash
# The test command on a loaded machine: scripts/test.sh (what .ci/run runs) RUNS times in a row (default 3) in this
# checkout, sharing its build, while two other builds of rnx run beside it the whole time (each a copy of this tree,
# configured without libtorch, cleaned and rebuilt with one compiler job, over and over). It says whether every run
# passed, how long each took and how loaded the machine was; the unit tests assert no timing, so they must pass the
# same loaded as quiet.
#
#   bench/loaded_suite.sh [RUNS]      results: loaded_suite.json in bench/results (LOADED_OUT to change), logs in /tmp
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 2
runs="${1:-3}"
out="${LOADED_OUT:-$root/bench/results/loaded_suite.json}"
work="$(mktemp -d /tmp/rnx-loaded-XXXXXX)"
pids=()
stop_load() {
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null; done
  wait 2>/dev/null
}
trap 'stop_load; rm -rf "$work"' EXIT

# Two builds beside the suite: each its own copy of the tree (what is committed), each rebuilt from clean forever.
for n in 1 2; do
  git -C "$root" archive --format=tar HEAD | (mkdir -p "$work/tree$n" && tar -x -C "$work/tree$n")
  cmake -S "$work/tree$n" -B "$work/build$n" -G Ninja -DRNX_WITH_TORCH=OFF -DRNX_BUILD_TESTS=ON \
    >"$work/configure$n.log" 2>&1 || { tail -20 "$work/configure$n.log"; exit 2; }
  setsid bash -c "while true; do ninja -C '$work/build$n' -j 1 clean >/dev/null 2>&1; ninja -C '$work/build$n' -j 1 >/dev/null 2>&1; done" &
  pids+=($!)
done
sleep 20  # let the builds get going before the first run starts

results=()
for i in $(seq 1 "$runs"); do
  started=$(date +%s)
  load_before=$(cut -d' ' -f1 /proc/loadavg)
  bash scripts/test.sh >"/tmp/rnx-loaded-run$i.log" 2>&1
  rc=$?
  ended=$(date +%s)
  load_after=$(cut -d' ' -f1 /proc/loadavg)
  summary=$(grep -E "tests passed|tests failed" "/tmp/rnx-loaded-run$i.log" | tr '\n' ';' | sed 's/"/\\"/g')
  echo "run $i: exit $rc in $((ended - started)) s, load $load_before -> $load_after: $summary"
  results+=("{\"run\": $i, \"exit\": $rc, \"seconds\": $((ended - started)), \"load_before\": $load_before, \"load_after\": $load_after, \"ctest\": \"$summary\", \"log\": \"/tmp/rnx-loaded-run$i.log\"}")
done
stop_load
commit="$(git -C "$root" rev-parse --short HEAD)"
{
  echo "{\"commit\": \"$commit\", \"date\": \"$(date -u +%FT%TZ)\", \"cores\": $(nproc), \"builds_beside\": 2, \"runs\": ["
  (IFS=,; echo "${results[*]}")
  echo "]}"
} >"$out"
echo "loaded_suite: wrote $out"
! grep -q '"exit": [1-9]' "$out"
