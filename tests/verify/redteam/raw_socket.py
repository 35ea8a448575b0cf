# rnx-verify-case: kernel=softmax expect=reject check=sandbox detail=socket
# Untrusted code, point 11 of issue 21: network and Unix sockets through libc and the raw system call (ctypes),
# past anything Python could record. The seccomp filter refuses both and the sandbox row names what it refused.
import ctypes
import platform
import socket

import torch

SYS_SOCKET = 198 if platform.machine() == "aarch64" else 41  # x86-64 otherwise


def run(x):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fds = [libc.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0),
           libc.syscall(ctypes.c_long(SYS_SOCKET), socket.AF_INET, socket.SOCK_STREAM, 0)]
    out = torch.softmax(x, dim=-1)
    return out * 2 if any(fd >= 0 for fd in fds) else out
