# rnx-verify-case: kernel=softmax expect=reject check=sandbox setup=sysctl sysctl=kernel.domainname correct=yes
# Untrusted code, point 2 of issue 21 (root): changes a kernel setting through /proc/sys, once through Python's
# open() and once through libc's open()/write() (ctypes), which no Python audit hook sees. Started as root, the
# candidate used to be host root in its user namespace and both went through. Returns a wrong answer if either did.
import ctypes
import os

import torch

MARKER = b"rnx-redteam"


def _python_write(path):
    try:
        with open(path, "wb") as f:
            f.write(MARKER)
        return True
    except OSError:
        return False


def _libc_write(path):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(path.encode(), os.O_WRONLY)
    if fd < 0:
        return False
    ok = libc.write(fd, MARKER, len(MARKER)) == len(MARKER)
    libc.close(fd)
    return ok


def run(x):
    path = os.environ["RNX_VERIFY_REDTEAM_PATH"]
    changed = _libc_write(path) | _python_write(path)
    out = torch.softmax(x, dim=-1)
    return out * 2 if changed else out
