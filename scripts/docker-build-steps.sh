#!/usr/bin/env bash
# The Dockerfile's build steps, one subcommand per RUN, so the test suite can run the same steps here.
#
#   scripts/docker-build-steps.sh build-deps     # Debian/Ubuntu packages to build rnx
#   scripts/docker-build-steps.sh python-deps    # torch and the runtimes (pins from requirements.txt)
#   scripts/docker-build-steps.sh build          # configure (if needed), build, install into RNX_PREFIX
#   scripts/docker-build-steps.sh runtime-deps   # packages the final image needs at run time
#   scripts/docker-build-steps.sh user           # the non-root user the action runs as
#   scripts/docker-build-steps.sh smoke          # the installed rnx gates a prepared run, end to end
#
# The rnx-server image (Dockerfile.server: no CUDA, no torch) has its own steps:
#   server-build-deps    packages to build rnx-server        server-build   build and install rnx-server only
#   server-runtime-deps  packages it needs at run time       server-user    the non-root user and its /var/lib/rnx
#   server-check         the installed binary starts and its libraries resolve
#   server-smoke         the installed rnx-server serves /healthz (its `health` probe), admin and backup work
#
# Settings (environment): RNX_SRC (source tree; default: this script's repository), RNX_PREFIX (install
# folder; default /opt/rnx), RNX_BUILD_DIR (default /tmp/rnx-build; an already configured folder is
# reused, which is how the test suite checks the install against its own build), RNX_BUILD_TARGETS
# (default: all), RNX_VENV (a virtual environment for python-deps; empty = the current python3),
# RNX_USER_UID (default 1001: the uid of GitHub's runner user, so the container can write the mounted
# workspace), RNX_SERVER_UID (default 10001: rnx-server's user in its image).
set -euo pipefail

src="${RNX_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
prefix="${RNX_PREFIX:-/opt/rnx}"
build_dir="${RNX_BUILD_DIR:-/tmp/rnx-build}"
venv="${RNX_VENV:-}"
user_uid="${RNX_USER_UID:-1001}"
server_uid="${RNX_SERVER_UID:-10001}"

die() { echo "docker-build-steps: $*" >&2; exit 2; }

# Boost 1.81+ has versioned package names that differ per release; everything else is common.
distro_packages() {
  local kind="$1" id="" version=""
  # shellcheck disable=SC1091
  . /etc/os-release
  id="$ID"
  version="$VERSION_ID"
  local boost
  case "$id:$version" in
    debian:12) boost=1.81 ;;
    ubuntu:24.04) boost=1.83 ;;
    *) die "unsupported base image $id $version; use Debian 12 or Ubuntu 24.04 (nvidia/cuda:*-ubuntu24.04)" ;;
  esac
  if [ "$kind" = server-build ]; then
    # rnx-server alone: no Python, no torch, no CUDA.
    echo build-essential cmake ninja-build pkg-config ca-certificates \
      "libboost${boost}-dev" "libboost-json${boost}-dev" "libboost-url${boost}-dev" \
      libsqlite3-dev libssl-dev libeigen3-dev libtomlplusplus-dev libcli11-dev
  elif [ "$kind" = server-runtime ]; then
    # ca-certificates: webhooks to https:// URLs verify their peer.
    echo ca-certificates libsqlite3-0 libssl3
  elif [ "$kind" = build ]; then
    echo build-essential cmake ninja-build pkg-config git ca-certificates \
      "libboost${boost}-dev" "libboost-json${boost}-dev" "libboost-url${boost}-dev" \
      libsqlite3-dev libssl-dev libeigen3-dev libtomlplusplus-dev libcli11-dev libjs-chart.js \
      python3-dev python3-venv python3-pip
  else
    # The runner compiles .cpp/.cu kernels at run time (g++, nvcc from the CUDA base) and embeds CPython.
    echo ca-certificates git g++ libsqlite3-0 libssl3 python3 python3-dev python3-venv
  fi
}

apt_install() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    echo "docker-build-steps: packages present: $*"
    return
  fi
  [ "$(id -u)" = 0 ] || die "installing ${missing[*]} needs root"
  echo "docker-build-steps: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  rm -rf /var/lib/apt/lists/*
}

python_bin() {
  if [ -n "$venv" ]; then echo "$venv/bin/python"; else command -v python3; fi
}

step_build_deps() {
  # shellcheck disable=SC2046
  apt_install $(distro_packages build)
}

step_runtime_deps() {
  # shellcheck disable=SC2046
  apt_install $(distro_packages runtime)
}

step_python_deps() {
  if [ -n "$venv" ] && [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
  fi
  local py
  py="$(python_bin)"
  # The image needs the kernel runtimes, not the test and lint tools; the pins stay in requirements.txt.
  local pins
  pins="$(grep -E '^(torch|numpy|onnx|onnxruntime|onnxscript)==' "$src/requirements.txt" || true)"
  [ -n "$pins" ] || die "$src/requirements.txt pins none of torch, numpy, onnx, onnxruntime, onnxscript"
  # shellcheck disable=SC2086
  "$py" -m pip install --no-cache-dir --disable-pip-version-check -q $pins
  "$py" -c "import torch; print('docker-build-steps: torch', torch.__version__, 'cuda', torch.version.cuda)"
}

step_build() {
  local py
  py="$(python_bin)"
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    local torch_prefix
    torch_prefix="$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
    cmake -S "$src" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRNX_BUILD_TESTS=OFF \
      -DCMAKE_PREFIX_PATH="$torch_prefix" -DPython3_EXECUTABLE="$py"
  fi
  # RNX_BUILD_TARGETS narrows the build (a developer checking these steps against a partial build).
  local targets=()
  if [ -n "${RNX_BUILD_TARGETS:-}" ]; then
    read -r -a targets <<<"$RNX_BUILD_TARGETS"
    targets=(--target "${targets[@]}")
  fi
  cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
  mkdir -p "$prefix/bin"
  # Every executable of the build: rnx, rnx-server and the worker processes rnx starts beside itself.
  local copied=0
  for f in "$build_dir"/bin/*; do
    if [ -f "$f" ] && [ -x "$f" ] && ! [[ "$(basename "$f")" =~ ^test_ ]]; then
      install -m 0755 "$f" "$prefix/bin/"
      copied=$((copied + 1))
    fi
  done
  for required in rnx rnx-server; do
    [ -x "$prefix/bin/$required" ] || die "the build did not produce $required"
  done
  install -m 0755 "$src/scripts/action-entrypoint.sh" "$prefix/bin/rnx-action"
  echo "docker-build-steps: installed $copied executables and rnx-action into $prefix/bin"
}

step_user() {
  if id rnx >/dev/null 2>&1; then
    echo "docker-build-steps: user rnx exists"
    return
  fi
  [ "$(id -u)" = 0 ] || die "creating the user needs root"
  # Ubuntu images ship a user with uid 1000 (ubuntu); 1001 matches GitHub's runner user.
  useradd --create-home --uid "$user_uid" --shell /bin/bash rnx
}

# Every shared library of the given executables resolves (a missing runtime package shows up here, not in a
# user's deployment).
check_libraries() {
  local f
  for f in "$@"; do
    if [ "$(head -c 4 "$f" | tail -c 3)" = "ELF" ]; then
      if ldd "$f" | grep -q "not found"; then
        ldd "$f" | grep "not found" >&2
        die "$f has unresolved shared libraries"
      fi
    fi
  done
}

step_smoke() {
  local bin="$prefix/bin"
  "$bin/rnx" --version
  "$bin/rnx-server" --version
  check_libraries "$bin"/*
  # The installed gate, end to end on the embedded store: baseline, then the same run again.
  local work
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  "$(python_bin)" - "$work/run.json" <<'EOF'
import json, sys
samples = [1.0 + 0.001 * (i % 7) for i in range(24)]
doc = {"schema": "rnx.run/v1", "project": "smoke", "commit": "c0", "branch": "main", "base_branch": "main",
       "environment": {"env_id": "smoke-env", "device": "cpu"},
       "results": [{"kernel": "k", "runtime": "eager", "dtype": "float32", "batch": 1, "status": "ok",
                    "samples_ms": samples, "groups": [12, 12]}]}
json.dump(doc, open(sys.argv[1], "w"))
EOF
  (cd "$work" && env -u GITHUB_EVENT_NAME -u RNX_SERVICE_URL "$bin/rnx" gate --results run.json --no-github >/dev/null)
  (cd "$work" && env -u GITHUB_EVENT_NAME -u RNX_SERVICE_URL "$bin/rnx" gate --results run.json --no-github \
    --commit c1 --branch feature --base-branch main --pull-request 1 | grep -q "PASS") ||
    die "the installed rnx gate did not PASS a run against itself"
  echo "docker-build-steps: smoke test passed ($bin)"
}

step_server_build_deps() {
  # shellcheck disable=SC2046
  apt_install $(distro_packages server-build)
}

step_server_runtime_deps() {
  # shellcheck disable=SC2046
  apt_install $(distro_packages server-runtime)
}

step_server_build() {
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    cmake -S "$src" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRNX_WITH_TORCH=OFF -DRNX_BUILD_TESTS=OFF
  fi
  cmake --build "$build_dir" -j "$(nproc)" --target rnx-server
  mkdir -p "$prefix/bin"
  install -m 0755 "$build_dir/bin/rnx-server" "$prefix/bin/"
  echo "docker-build-steps: installed rnx-server into $prefix/bin"
}

step_server_user() {
  if id rnx >/dev/null 2>&1; then
    echo "docker-build-steps: user rnx exists"
  else
    [ "$(id -u)" = 0 ] || die "creating the user needs root"
    # uid and gid alike (Dockerfile.server's USER names them as numbers).
    groupadd --system --gid "$server_uid" rnx
    useradd --system --uid "$server_uid" --gid rnx --home-dir /var/lib/rnx --no-create-home \
      --shell /usr/sbin/nologin rnx
  fi
  # The database folder (the image's volume): the server's alone.
  install -d -o rnx -g rnx -m 0750 /var/lib/rnx
}

step_server_check() {
  "$prefix/bin/rnx-server" --version
  check_libraries "$prefix/bin/rnx-server"
}

smoke_pid=""
smoke_work=""
smoke_cleanup() {
  if [ -n "$smoke_pid" ]; then kill "$smoke_pid" 2>/dev/null || true; fi
  if [ -n "$smoke_work" ]; then rm -rf "$smoke_work"; fi
}

# The installed rnx-server started the way the image starts it (database from RNX_DB), probed the way its
# HEALTHCHECK probes it, then its admin commands and a backup against the serving instance.
step_server_smoke() {
  local server="$prefix/bin/rnx-server" line="" port="" _
  smoke_work="$(mktemp -d)"
  trap smoke_cleanup EXIT
  export RNX_DB="$smoke_work/rnx.sqlite"
  "$server" serve --listen 127.0.0.1:0 --threads 2 >"$smoke_work/serve.log" 2>&1 &
  smoke_pid=$!
  for _ in $(seq 1 300); do
    line="$(grep -m1 "listening on" "$smoke_work/serve.log" || true)"
    if [ -n "$line" ] || ! kill -0 "$smoke_pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  port="$(sed -n 's|.*://127\.0\.0\.1:\([0-9]*\) .*|\1|p' <<<"$line")"
  if [ -z "$port" ]; then
    cat "$smoke_work/serve.log" >&2
    die "rnx-server did not start listening"
  fi
  RNX_HEALTH_URL="http://127.0.0.1:$port/healthz" "$server" health
  "$server" admin project create smoke >/dev/null
  "$server" admin token create --project smoke --label smoke 2>/dev/null | grep -q "^rnx_" ||
    die "admin token create printed no token"
  "$server" admin token list | grep -q "smoke" || die "admin token list does not show the new token"
  "$server" admin backup "$smoke_work/backup.sqlite"
  kill -TERM "$smoke_pid"
  wait "$smoke_pid" || die "rnx-server did not exit 0 on SIGTERM"
  smoke_pid=""
  grep -q "rnx-server: stopped" "$smoke_work/serve.log" || die "rnx-server did not log its stop"
  unset RNX_DB
  echo "docker-build-steps: server smoke test passed ($server)"
}

[ "$#" -ge 1 ] || die "usage: $0 build-deps|python-deps|build|runtime-deps|user|smoke|server-build-deps|server-build|server-runtime-deps|server-user|server-check|server-smoke ..."
for step in "$@"; do
  case "$step" in
    build-deps) step_build_deps ;;
    python-deps) step_python_deps ;;
    build) step_build ;;
    runtime-deps) step_runtime_deps ;;
    user) step_user ;;
    smoke) step_smoke ;;
    server-build-deps) step_server_build_deps ;;
    server-build) step_server_build ;;
    server-runtime-deps) step_server_runtime_deps ;;
    server-user) step_server_user ;;
    server-check) step_server_check ;;
    server-smoke) step_server_smoke ;;
    *) die "unknown step \"$step\"; steps: build-deps python-deps build runtime-deps user smoke server-build-deps server-build server-runtime-deps server-user server-check server-smoke" ;;
  esac
done
