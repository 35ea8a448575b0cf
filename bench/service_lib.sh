# Shared by the bench/service_*.sh scripts: find rnx-server, start it on a free loopback port, make a token.
# Source it; it defines rnx_start_server / rnx_stop_server and sets RNX_SERVER.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RNX_SERVER="${RNX_SERVER:-}"
if [ -z "$RNX_SERVER" ]; then
  for candidate in "$root/build-service/bin/rnx-server" "$root/build/bin/rnx-server"; do
    if [ -x "$candidate" ]; then RNX_SERVER="$candidate"; break; fi
  done
fi
if [ -z "$RNX_SERVER" ] || [ ! -x "$RNX_SERVER" ]; then
  echo "rnx-server not found: build it (cmake --build build-service --target rnx-server) or set RNX_SERVER" >&2
  exit 2
fi

# rnx_start_server DB [extra serve flags...]: sets RNX_PID, RNX_PORT, RNX_URL.
rnx_start_server() {
  local db="$1"
  shift
  RNX_LOG="$(mktemp)"
  "$RNX_SERVER" serve --db "$db" --listen 127.0.0.1:0 "$@" >"$RNX_LOG" 2>&1 &
  RNX_PID=$!
  for _ in $(seq 200); do
    if grep -q "listening on" "$RNX_LOG"; then break; fi
    sleep 0.05
  done
  RNX_PORT="$(sed -n 's/.*127\.0\.0\.1:\([0-9][0-9]*\) .*/\1/p' "$RNX_LOG" | head -1)"
  if [ -z "$RNX_PORT" ]; then
    echo "rnx-server did not start:" >&2
    cat "$RNX_LOG" >&2
    exit 1
  fi
  RNX_URL="http://127.0.0.1:$RNX_PORT"
}

rnx_stop_server() {
  if [ -n "${RNX_PID:-}" ]; then
    kill "$RNX_PID" 2>/dev/null || true
    wait "$RNX_PID" 2>/dev/null || true
    RNX_PID=""
  fi
}

# rnx_make_token DB PROJECT: creates the project if needed and prints a fresh token.
rnx_make_token() {
  "$RNX_SERVER" admin project create "$2" --db "$1" >/dev/null 2>&1 || true
  "$RNX_SERVER" admin token create --project "$2" --db "$1" --scope admin 2>/dev/null
}
