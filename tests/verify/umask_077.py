#!/usr/bin/env python3
"""`rnx verify` started under umask 077 (a hardened login's default): the folders the sandbox makes for its
worker (the skeleton under a covered folder, /dev's nodes) must still open to the worker's user, and an honest
candidate is accepted exactly as under umask 022.

    umask_077.py RNX
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rnx = sys.argv[1]
    os.umask(0o077)
    cmd = [rnx, "verify", "--config", os.path.join(HERE, "rnx.toml"), "--kernel", "softmax",
           "--candidate", os.path.join(HERE, "honest", "softmax_fused.py"), "--format", "text"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    text = proc.stdout + proc.stderr
    if proc.returncode != 0 or "ACCEPTED" not in text:
        sys.exit(f"FAIL: under umask 077 `rnx verify` exited {proc.returncode}:\n{text[-2000:]}")
    print("ok: accepted under umask 077: " + text.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
