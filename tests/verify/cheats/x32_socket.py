# rnx-verify-case: kernel=softmax expect=reject check=sandbox
# Untrusted code: opens a network socket through the x32 system-call ABI (the x86-64 architecture with
# __X32_SYSCALL_BIT set in the number), which a filter comparing plain numbers would let through. The seccomp
# filter kills the candidate's process instead, whether or not this kernel has x32 at all. Elsewhere than
# x86-64 there is no x32 (the cheat then raises; the case is written for x86-64, where CI runs).
import ctypes
import platform

import torch

X32_SYSCALL_BIT = 0x40000000
SYS_SOCKET = 41  # x86-64 and x32 share the number
AF_INET, SOCK_STREAM = 2, 1


def run(x):
    if platform.machine() != "x86_64":
        raise RuntimeError("no x32 ABI on " + platform.machine())
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(ctypes.c_long(X32_SYSCALL_BIT | SYS_SOCKET), AF_INET, SOCK_STREAM, 0)
    if fd >= 0:
        return torch.softmax(x, dim=-1) * 2  # a socket: a wrong answer says so
    return torch.softmax(x, dim=-1)
