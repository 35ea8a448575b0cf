# rnx-verify-case: kernel=softmax expect=review check=static_scan setup=sysctl sysctl=kernel.core_pattern correct=yes
# Untrusted code, point 2 of issue 21 (root): sets kernel.core_pattern through libc alone (ctypes: no audit
# hook sees it), which as host root would make the next crashing process run a command as root. Here a harmless
# file name is written; the test restores the setting if it changed. The static scan rejects the ctypes call;
# what shows the containment is the target left unchanged and the correct answer (the write was refused).
# (Since issue 44 the static scan alone asks for review, no longer rejects: the write was refused, which is what
# the unchanged target and the correct answer show.)
import ctypes
import os

import torch

PATTERN = b"core.rnx-redteam"


def run(x):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(os.environ["RNX_VERIFY_REDTEAM_PATH"].encode(), os.O_WRONLY)
    changed = False
    if fd >= 0:
        changed = libc.write(fd, PATTERN, len(PATTERN)) == len(PATTERN)
        libc.close(fd)
    out = torch.softmax(x, dim=-1)
    return out * 2 if changed else out
