#!/usr/bin/env bash
# scripts/demo.sh run N times in a row, each run's log kept, and what the gate decided counted: the unchanged pull
# request's verdict and how many of its configurations were *equivalent*, the slowed one's verdict.
#
#   bench/demo_repeat.sh [N] [LOG_DIR]    # N defaults to 5, LOG_DIR to $TMPDIR/rnx_demo_repeat
#
# Prints one line a run and a total ("unchanged PASS with all equivalent in K of N runs; slowed BLOCK in M of N").
# Exits 0 when every run behaved as promised. Settings are scripts/demo.sh's (RNX_BUILD_DIR).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-5}"
logs="${2:-${TMPDIR:-/tmp}/rnx_demo_repeat}"
mkdir -p "$logs"
all_equivalent=0
blocked=0
for ((i = 1; i <= runs; i++)); do
  log="$logs/run_$i.log"
  start=$(date +%s)
  "$root/scripts/demo.sh" >"$log" 2>&1
  code=$?
  seconds=$(($(date +%s) - start))
  # The sections of the log: "== 2." the unchanged pull request, "== 3." the slowed one.
  summary="$(python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
def section(start, end):
    a = text.find(start)
    b = text.find(end, a + 1) if end else -1
    return text[a:b if b != -1 else len(text)] if a != -1 else ""
def verdict(part):
    m = re.search(r"rnx verdict: (PASS|WARN|BLOCK)", part)
    return m.group(1) if m else "none"
def decisions(part):
    rows = re.findall(r"^\S+/\S+/\S+/b\d+\s.*?\s(faster|slower|equivalent|abstain|new|missing|broken)(?:\s|$)", part, re.M)
    return rows
same, slow = section("== 2.", "== 3."), section("== 3.", None)
rows = decisions(same)
eq = sum(d == "equivalent" for d in rows)
ok = verdict(same) == "PASS" and rows and eq == len(rows)
print("%s %d %d %s %d" % (verdict(same), eq, len(rows), verdict(slow), int(bool(ok))))
PY
)"
  read -r same_verdict eq total slow_verdict same_ok <<<"$summary"
  [ "$same_ok" = 1 ] && all_equivalent=$((all_equivalent + 1))
  [ "$slow_verdict" = BLOCK ] && blocked=$((blocked + 1))
  echo "run $i: unchanged $same_verdict, $eq of $total equivalent; slowed $slow_verdict; demo exit $code; ${seconds} s"
done
echo "unchanged PASS with all equivalent in $all_equivalent of $runs runs; slowed BLOCK in $blocked of $runs"
[ "$all_equivalent" = "$runs" ] && [ "$blocked" = "$runs" ]
