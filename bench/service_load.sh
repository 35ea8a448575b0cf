#!/usr/bin/env bash
# Load test of rnx-server with wrk, each phase over CONNECTIONS connections for DURATION: uploads of
# 16-configuration PR runs; verdicts of one such run against a 16-configuration baseline, asked again and again
# (served from the stored verdict); verdicts of distinct runs (each a fresh bootstrap). Prints throughput, p50/p99
# latency and the server's own mean wait and answer times as a table and writes bench/results/service_load.json.
#   bench/service_load.sh [DURATION=20s] [CONNECTIONS=50] [SERVER_THREADS=2] [SYNCHRONOUS=full|normal]
set -euo pipefail
# shellcheck source=bench/service_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/service_lib.sh"
duration="${1:-20s}"
connections="${2:-50}"
server_threads="${3:-2}"
synchronous="${4:-full}"
command -v wrk >/dev/null || { echo "wrk not found: apt-get install wrk (scripts/setup.sh does)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rnx_stop_server; rm -rf "$work"' EXIT
out="$root/bench/results"
mkdir -p "$out"

db="$work/rnx.sqlite"
token="$(rnx_make_token "$db" bench)"
rnx_start_server "$db" --threads "$server_threads" --synchronous "$synchronous"
post() {
  curl -sf -X POST -H "Authorization: Bearer $token" -H "Content-Type: application/json" --data-binary @- "$RNX_URL$1"
}
# The baseline (push to main) and one PR run to ask verdicts for: 16 configurations x 50 samples, 5 processes.
python3 "$root/bench/service_make_run.py" --commit base | post /api/v1/runs >/dev/null
head_id="$(python3 "$root/bench/service_make_run.py" --branch feature --pull-request 7 --commit head --seed 2 |
  post /api/v1/runs | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')"
verdict="$(post "/api/v1/runs/$head_id/verdict" </dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["verdict"])')"
python3 "$root/bench/service_make_run.py" --branch feature --pull-request 8 --commit __COMMIT__ --seed 3 >"$work/upload.json"
echo "== rnx-server ($server_threads threads, --synchronous $synchronous) at $RNX_URL; wrk $duration, $connections connections, 2 threads;" \
  "upload body $(wc -c <"$work/upload.json") bytes; sanity verdict of the PR run: $verdict"

# Server-side means of one phase from two /metrics snapshots: the wait for a request thread, and the time to
# answer once taken (all routes; each phase drives one route).
server_side() {  # server_side BEFORE AFTER -> "queue_wait_ms answer_ms"
  python3 - "$1" "$2" <<'PY'
import re, sys
def sums(path):
    text = open(path).read()
    def total(pattern):
        return sum(float(v) for v in re.findall(pattern + r"(?:\{.*\})? ([0-9.e+-]+)$", text, re.M))
    return (total("rnx_request_queue_wait_seconds_sum"), total("rnx_request_queue_wait_seconds_count"),
            total("rnx_http_request_duration_seconds_sum"), total("rnx_http_request_duration_seconds_count"))
a, b = sums(sys.argv[1]), sums(sys.argv[2])
d = [y - x for x, y in zip(a, b)]
print("%.2f %.2f" % (1e3 * d[0] / max(d[1], 1), 1e3 * d[2] / max(d[3], 1)))
PY
}

results=()
for mode in upload verdict verdict-new; do
  curl -sf "$RNX_URL/metrics" >"$work/metrics-before"
  # verdict-new starts at the first run the upload phase stored (head_id + 1).
  id="$head_id"
  if [ "$mode" = verdict-new ]; then id=$((head_id + 1)); fi
  line="$(wrk -t2 -c"$connections" -d"$duration" --timeout 10s -s "$root/bench/service_load.lua" "$RNX_URL" \
    -- "$mode" "$token" "$work/upload.json" "$id" | grep '^RESULT')"
  curl -sf "$RNX_URL/metrics" >"$work/metrics-after"
  line="$mode $line $(server_side "$work/metrics-before" "$work/metrics-after")"
  results+=("$line")
done

printf '%-12s %9s %10s %9s %9s %9s %8s %8s %9s %9s\n' mode requests req/s p50_ms p99_ms max_ms non2xx sockerr \
  wait_ms answer_ms
json="["
for line in "${results[@]}"; do
  read -r mode _ n secs rps p50 p99 max non2xx sockerr wait answer <<<"$line"
  printf '%-12s %9s %10s %9s %9s %9s %8s %8s %9s %9s\n' "$mode" "$n" "$rps" "$p50" "$p99" "$max" "$non2xx" \
    "$sockerr" "$wait" "$answer"
  json+="{\"mode\":\"$mode\",\"requests\":$n,\"seconds\":$secs,\"rps\":$rps,\"p50_ms\":$p50,\"p99_ms\":$p99,"
  json+="\"max_ms\":$max,\"non_2xx\":$non2xx,\"socket_errors\":$sockerr,\"connections\":$connections,"
  json+="\"server_queue_wait_mean_ms\":$wait,\"server_answer_mean_ms\":$answer},"
done
echo "wait_ms / answer_ms: server-side means from /metrics (rnx_request_queue_wait_seconds and"
echo "rnx_http_request_duration_seconds) over the phase: waiting for a request thread, then being answered."
echo "${json%,}]" >"$out/service_load.json"
echo "== runs stored: $(curl -sf "$RNX_URL/metrics" | sed -n 's/^rnx_runs //p')"
