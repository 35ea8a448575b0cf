#!/usr/bin/env bash
# Installs every system (Debian) and Python (PyPI) package rnx needs to build and test; idempotent.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sudo_cmd=""
if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi

debian_packages=(
  build-essential cmake ninja-build pkg-config git
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libsqlite3-dev sqlite3 libssl-dev libeigen3-dev
  libtomlplusplus-dev libcli11-dev doctest-dev
  clang-14 libclang-rt-14-dev
  clang-format clang-tidy  # tests/lint: lint.clang_format and lint.clang_tidy (.clang-format, .clang-tidy)
  python3-dev wrk shellcheck
  libbenchmark-dev  # tests/importers: a Google Benchmark program whose output rnx import converts
  python3-venv python3-pip  # scripts/docker-build-steps.sh (the Docker image's steps, run by tests/lint)
  libjs-chart.js  # Chart.js 3, embedded into rnx-server's pages and `rnx report` at build time
  chromium        # tests/service/browser_pages.py: the pages in a real headless browser
  systemd  # systemd-analyze: tests/lint checks deploy/rnx-server.service (verify, security exposure)
)
missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# pip is idempotent: requirements already met cost one resolution, and nothing is downloaded again.
echo "setup: Python packages from requirements.txt"
python3 -m pip install -q --disable-pip-version-check -r "$here/requirements.txt"
