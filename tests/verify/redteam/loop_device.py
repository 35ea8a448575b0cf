# rnx-verify-case: kernel=softmax expect=review check=static_scan setup=loop_device correct=yes
# Untrusted code, point 2 of issue 21 (root): writes into a loop block device the test attached to a file of its
# own (a stand-in for the host's disks), through libc (ctypes). The sandbox's /dev has no block device and the
# candidate is not root. Returns a wrong answer if the write went through; the test checks the file. (The static
# scan rejects the ctypes call; the correct answer and the untouched file show the containment.)
# (Since issue 44 the static scan alone asks for review, no longer rejects; the target left untouched and the
# correct answer show the containment.)
import ctypes
import os

import torch


def run(x):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(os.environ["RNX_VERIFY_REDTEAM_PATH"].encode(), os.O_WRONLY)
    wrote = False
    if fd >= 0:
        wrote = libc.write(fd, b"rnx-redteam" * 64, 11 * 64) > 0
        libc.fsync(fd)
        libc.close(fd)
    out = torch.softmax(x, dim=-1)
    return out * 2 if wrote else out
