#!/usr/bin/env bash
# GPU probe (one device call): pairing bias and Triton's system calls under a seccomp filter like rnx's.
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv
uname -a; cat /proc/version; id
gcc -O1 -shared -fPIC -o /tmp/probe.so seccomp_probe.c || echo "probe build failed"
echo "== triton, no filter (fresh cache)"; export TRITON_CACHE_DIR=/tmp/tc0; python3 triton_softmax.py 2>&1 | tail -5
echo "== triton, foreign-ABI trap only (fresh cache)"; export TRITON_CACHE_DIR=/tmp/tc1
LD_PRELOAD=/tmp/probe.so python3 triton_softmax.py 2>&1 | grep -v "filter on" | tail -20
echo "== triton, foreign-ABI trap, warm cache"; LD_PRELOAD=/tmp/probe.so python3 triton_softmax.py 2>&1 | grep -v "filter on" | tail -8
echo "== triton, processes trapped too (fresh cache)"; export TRITON_CACHE_DIR=/tmp/tc2
PROBE_PROCS=1 LD_PRELOAD=/tmp/probe.so python3 triton_softmax.py 2>&1 | grep -v "filter on" | tail -25
echo "== what triton spawns (python-level)"; export TRITON_CACHE_DIR=/tmp/tc3
python3 - <<'PY' 2>&1 | tail -20
import subprocess, os
orig = subprocess.Popen.__init__
def spy(self, args, *a, **k):
    print("SPAWN", args if isinstance(args, str) else " ".join(map(str, args))[:300])
    return orig(self, args, *a, **k)
subprocess.Popen.__init__ = spy
exec(open("triton_softmax.py").read())
PY
echo "== pairing probe"; timeout 300 python3 pairing_probe.py
