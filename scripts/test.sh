#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what it needs, builds once, runs every test.
#   1. scripts/setup.sh (Debian + PyPI packages)
#   2. build/ with libtorch: every component and test, run by ctest
#   3. build-asan/ without libtorch, under AddressSanitizer + UndefinedBehaviorSanitizer: the readers,
#      stats, compare and the service tests again
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/scripts/setup.sh"

jobs="$(nproc)"
torch_prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"

echo "== build (with libtorch)"
cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH="$torch_prefix" -DRNX_BUILD_TESTS=ON
cmake --build build -j "$jobs"

echo "== tests"
ctest --test-dir build --output-on-failure --timeout 900 -j "$jobs"

echo "== sanitizers (no libtorch)"
cmake -S . -B build-asan -G Ninja -DRNX_WITH_TORCH=OFF -DRNX_SANITIZE=ON -DRNX_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=Debug
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure --timeout 900 -j "$jobs" -LE no-sanitize
echo "== all tests passed"
