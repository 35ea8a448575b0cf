#!/usr/bin/env bash
# The GitHub Action's entrypoint (installed as rnx-action): turns action.yml's inputs into an rnx command.
#
#   rnx-action MODE --flag=value ...   (MODE: gate | report-only | accept | optimize)
#
# In gate and report-only mode, --import-format=F with --import-files="A.json B.json" first converts another
# harness's output with `rnx import` (docs/import.md) and gates that run (rnx gate --results).
#
# action.yml passes every input as --flag=value; inputs left blank arrive as "--flag=" and are dropped,
# so rnx.toml's values stand. Each mode gets only the flags its command takes.
set -euo pipefail

mode="${1:-gate}"
[ "$#" -gt 0 ] && shift

gate_flags="--config --service-url --store --mode --pair-ref --rope --probability --min-samples --on-abstain --runner
  --results --out-dir --report-key --status-context --project --shard --run-group"
accept_flags="--config --service-url --store --status-context"
optimize_flags="--config --kernel --budget --rewriter"

case "$mode" in
  gate | report-only) allowed="$gate_flags" ;;
  accept) allowed="$accept_flags" ;;
  optimize) allowed="$optimize_flags" ;;
  *)
    echo "::error title=rnx::the mode input \"$mode\" must be gate, report-only, accept or optimize" >&2
    exit 2
    ;;
esac

flag_allowed() {
  local flag
  for flag in $allowed; do
    [ "$flag" = "$1" ] && return 0
  done
  return 1
}

args=()
import_format=""
import_files=""
merge_files=""
group_verdict=""
project=""
config=""
for arg in "$@"; do
  case "$arg" in
    --*=*) ;;
    *)
      echo "::error title=rnx::unexpected argument \"$arg\" (expected --flag=value)" >&2
      exit 2
      ;;
  esac
  name="${arg%%=*}"
  value="${arg#*=}"
  [ -n "$value" ] || continue
  # The comparison input is called `comparison` in action.yml (stored | paired | confirmed) and --mode in rnx gate.
  [ "$name" = "--comparison" ] && name="--mode"
  case "$name" in
    --import-format) import_format="$value"; continue ;;
    --import-files) import_files="$value"; continue ;;
    --merge) merge_files="$value"; continue ;;
    --group-verdict) group_verdict="$value"; continue ;;
    --project) project="$value" ;;
    --config) config="$value" ;;
  esac
  # An input that this mode does not use (e.g. thresholds in accept mode) is left out.
  if flag_allowed "$name"; then args+=("$name" "$value"); fi
done

# The workspace is mounted from the runner; git (paired mode's base checkout) refuses foreign owners.
if [ -n "${GITHUB_WORKSPACE:-}" ] && command -v git >/dev/null; then
  git config --global --add safe.directory "$GITHUB_WORKSPACE" 2>/dev/null || true
fi

rnx="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rnx"

if [ -n "$import_format" ]; then
  case "$mode" in
    gate | report-only) ;;
    *)
      echo "::error title=rnx::import-format applies to the gate and report-only modes, not $mode" >&2
      exit 2
      ;;
  esac
  if [ -z "$import_files" ]; then
    echo "::error title=rnx::import-format needs import-files (the harness's JSON output, space-separated)" >&2
    exit 2
  fi
  # Space-separated paths; shell patterns (bench-*.json) are expanded on purpose.
  # shellcheck disable=SC2206
  files=($import_files)
  # The project: the input, else rnx.toml's [project] name (rnx import reads it), else the repository's name.
  import_args=()
  [ -n "$config" ] && import_args+=(--config "$config")
  if [ -n "$project" ]; then
    import_args+=(--project "$project")
  elif [ ! -f "${config:-rnx.toml}" ]; then
    import_args+=(--project "${GITHUB_REPOSITORY##*/}")
  fi
  mkdir -p .rnx
  "$rnx" import --format "$import_format" "${files[@]}" --out .rnx/imported-run.json "${import_args[@]}"
  args+=(--results .rnx/imported-run.json)
fi
# The final job of a sharded matrix: the shards' documents (patterns expanded on purpose), or the service's group.
if [ -n "$merge_files" ]; then
  shopt -s nullglob
  # shellcheck disable=SC2206
  merge=($merge_files)
  shopt -u nullglob
  if [ "${#merge[@]}" -eq 0 ]; then
    echo "::error title=rnx::no shard run document matches the merge input \"$merge_files\": every shard job failed before writing one (or the artifacts were not downloaded)" >&2
    exit 2
  fi
  args+=(--merge "${merge[@]}")
fi
case "$group_verdict" in
  "" | false) ;;
  true) args+=(--group-verdict) ;;
  *)
    echo "::error title=rnx::the group-verdict input \"$group_verdict\" must be true or false" >&2
    exit 2
    ;;
esac
case "$mode" in
  gate) exec "$rnx" gate "${args[@]}" ;;
  report-only) exec "$rnx" gate --report-only "${args[@]}" ;;
  accept) exec "$rnx" accept "${args[@]}" ;;
  optimize) exec "$rnx" optimize "${args[@]}" ;;
esac
