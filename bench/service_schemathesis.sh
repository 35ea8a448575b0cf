#!/usr/bin/env bash
# Property-based API testing: schemathesis (examples, coverage, fuzzing, stateful; every check) against
# docs/api/openapi.yaml and a live rnx-server with a temp database. Prints the summary, writes a JUnit report.
#   bench/service_schemathesis.sh [MAX_EXAMPLES]      (default 100 per operation)
set -euo pipefail
# shellcheck source=bench/service_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/service_lib.sh"
max_examples="${1:-100}"
work="$(mktemp -d)"
trap 'rnx_stop_server; rm -rf "$work"' EXIT
out="$root/bench/results"
mkdir -p "$out"

db="$work/rnx.sqlite"
token="$(rnx_make_token "$db" bench)"
rnx_start_server "$db"
# Seed a baseline and a pull-request run so ids 1 and 2 exist for the id-taking operations.
for args in "--commit base" "--branch feature --pull-request 1 --commit head --seed 2"; do
  # shellcheck disable=SC2086
  python3 "$root/bench/service_make_run.py" $args |
    curl -sf -o /dev/null -X POST -H "Authorization: Bearer $token" -H "Content-Type: application/json" \
      --data-binary @- "$RNX_URL/api/v1/runs"
done

st_bin="$(command -v st || true)"
if [ -z "$st_bin" ]; then
  echo "schemathesis (st) not found: pip install -r requirements.txt" >&2
  exit 2
fi
echo "== schemathesis $("$st_bin" --version | awk '{print $NF}') against $RNX_URL, $max_examples examples per operation"
status=0
# From the temp folder, so the .hypothesis / .schemathesis caches do not land in the repository.
cd "$work"
"$st_bin" --config-file "$root/bench/service_schemathesis.toml" run "$root/docs/api/openapi.yaml" --url "$RNX_URL" \
  -H "Authorization: Bearer $token" \
  --checks all --max-examples "$max_examples" --seed 20261202 --workers 1 \
  --request-timeout 20 --no-color \
  --report junit --report-junit-path "$out/service_schemathesis.junit.xml" || status=$?
echo "== server still alive: $(curl -sf "$RNX_URL/healthz" || echo NO)"
echo "== 5xx responses counted by the server: $(curl -sf "$RNX_URL/metrics" | grep -c 'status="5' || true)"
exit "$status"
