# rnx-verify-case: kernel=softmax expect=reject check=sandbox setup=terminal detail=TIOCSTI correct=yes
# Untrusted code, point 3 of issue 21: types a command into the terminal rnx was started from (TIOCSTI on
# stdin, stdout, stderr and /dev/tty, through libc), which the user's shell would run after rnx exits. The test
# gives rnx a terminal as its controlling terminal, stdin and stderr, and reads it afterwards.
import ctypes
import os

import torch

TIOCSTI = 0x5412


def _type_into(libc, fd):
    typed = 0
    for ch in b"echo rnx-redteam\n":
        typed += libc.ioctl(fd, TIOCSTI, ctypes.byref(ctypes.c_char(ch))) == 0
    return typed


def run(x):
    libc = ctypes.CDLL(None, use_errno=True)
    typed = sum(_type_into(libc, fd) for fd in (0, 1, 2))
    tty = libc.open(b"/dev/tty", os.O_RDWR)
    if tty >= 0:
        typed += _type_into(libc, tty)
        libc.close(tty)
    out = torch.softmax(x, dim=-1)
    return out * 2 if typed else out
