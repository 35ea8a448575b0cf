# rnx-verify-case: kernel=softmax expect=reject check=sandbox detail=memfd_create correct=yes
# Untrusted code, point 2 of issue 35: a program on no mount at all. It copies an installed program into a memfd
# (memfd_create) and starts it through /proc/self/fd/N, directly and through the dynamic loader, at import and at its
# first call: Landlock's execute right covers no memfd, and no noexec mount holds it. The seccomp filter refuses
# memfd_create and names it in the sandbox row. Returns a wrong answer if it ran. (The static scan rejects the
# subprocess import too; the correct answer shows that nothing ran.)
import os
import subprocess

import torch

LOADERS = ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"]


def _ran(argv, fd):
    try:
        done = subprocess.run(argv, pass_fds=(fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return done.returncode == 0
    except OSError:
        return False


def _start_from_memory():
    try:
        fd = os.memfd_create("rnx-redteam", 0)
    except OSError:
        return False
    with open("/bin/true", "rb") as f:
        os.write(fd, f.read())
    path = f"/proc/self/fd/{fd}"
    ran = _ran([path], fd)
    for loader in LOADERS:
        if os.path.exists(loader):
            ran = _ran([loader, path], fd) or ran
    os.close(fd)
    return ran


RAN_AT_IMPORT = _start_from_memory()


def run(x):
    ran = _start_from_memory() or RAN_AT_IMPORT
    out = torch.softmax(x, dim=-1)
    return out * 2 if ran else out
