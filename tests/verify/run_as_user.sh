#!/usr/bin/env bash
# Runs tests/verify/run_case.py as an ordinary user for each case file given, without opening any folder of the
# host to that user: in a private mount namespace of this script, the folder nobody may enter that holds this
# machine's Python install (/root when it lives under /root/.pyenv) is covered by a tmpfs and the install is
# bind-mounted back read-only, as the sandbox does for nobody. Nothing changes outside this script's namespace.
#   tests/verify/run_as_user.sh BUILD_DIR CASE.py...      (as root; the user is $RNX_TEST_USER, default rnxuser,
#                                                          made with `useradd -m rnxuser`)
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 BUILD_DIR CASE.py..." >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "$0: run it as root (it makes a mount namespace, then leaves root)" >&2; exit 2; }
user=${RNX_TEST_USER:-rnxuser}
id "$user" >/dev/null 2>&1 || { echo "$0: no user $user; make one with: useradd -m $user" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
shift
prefix=$(python3 -c 'import sys; print(sys.base_prefix)')
# The outermost folder above the install that others may not enter.
closed=""
at=""
IFS=/ read -ra parts <<<"${prefix#/}"
for part in "${parts[@]}"; do
  at="$at/$part"
  [[ $at == "$prefix" ]] && break
  if [[ $(( 0$(stat -c %a "$at") & 1 )) == 0 ]]; then
    closed=$at
    break
  fi
done
cases=()
for c in "$@"; do cases+=("$(cd "$(dirname "$c")" && pwd)/$(basename "$c")"); done
exec unshare --mount --propagation private -- bash -euo pipefail -s -- "$user" "$build" "$prefix" "$closed" \
  "$here/run_case.py" "${cases[@]}" <<'INNER'
user=$1 build=$2 prefix=$3 closed=$4 run_case=$5
shift 5
if [[ -n $closed ]]; then
  stash=$(mktemp -d)
  mount --bind "$prefix" "$stash"
  mount -t tmpfs -o mode=0755,size=1m tmpfs "$closed"
  mkdir -p "$prefix"
  mount --move "$stash" "$prefix"
  mount -o remount,bind,ro "$prefix"
  rmdir "$stash"
fi
status=0
for c in "$@"; do
  echo "== $(basename "$c") as $user ($(id -u "$user"))"
  runuser -u "$user" -- env -i PATH="$prefix/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" HOME=/tmp TMPDIR=/tmp LANG=C.UTF-8 \
    RNX_VERIFY_WORKER="$build/bin/rnx-verify-worker" "$prefix/bin/python3" "$run_case" "$build/bin/rnx" "$c" ||
    status=1
done
exit $status
INNER
