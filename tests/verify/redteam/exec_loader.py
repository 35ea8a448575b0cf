# rnx-verify-case: kernel=softmax expect=review check=static_scan correct=yes
# Untrusted code, point 2 of issue 35: copies an installed program into its scratch folder and its /dev/shm and
# starts each copy, directly and through the dynamic loader (`ld-linux ./copy`: the loader maps the copy itself,
# which Landlock's execute right does not see; a noexec mount refuses the mapping), at import and at its first call;
# and a copy in the folder compiled code is loaded from (.compiled, TRITON_CACHE_DIR's parent), started directly.
# Only installed programs may start: it returns a wrong answer if any copy ran. The loader on a copy in .compiled is
# not tried: mapping files there is what Triton's launcher, inductor's library and a cpp extension need, so the
# loader runs one there, inside the same seccomp filter, Landlock rules and namespaces (docs/verify.md,
# Containment). (The static scan rejects the subprocess import; the correct answer shows that nothing ran.)
# (Since issue 44 the static scan alone asks for review: nothing ran, which the correct answer shows.)
import os
import shutil
import subprocess

import torch

LOADERS = ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"]
COMPILED = os.path.dirname(os.environ.get("TRITON_CACHE_DIR", os.path.abspath(".compiled/triton")))


def _ran(argv):
    try:
        return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    except OSError:
        return False


def _copy(folder, name):
    copy = os.path.join(folder, name)
    try:
        os.makedirs(folder, exist_ok=True)
        shutil.copy("/bin/true", copy)
        os.chmod(copy, 0o755)
    except OSError:
        return None
    return copy


def _copy_and_start(name):
    ran = False
    for folder in (os.getcwd(), "/dev/shm"):
        copy = _copy(folder, name)
        if copy is None:
            continue
        ran = _ran([copy]) or ran
        for loader in LOADERS:
            if os.path.exists(loader):
                ran = _ran([loader, copy]) or ran
    copy = _copy(COMPILED, name)
    return (copy is not None and _ran([copy])) or ran


RAN_AT_IMPORT = _copy_and_start("mine_at_import")


def run(x):
    ran = _copy_and_start("mine_at_call") or RAN_AT_IMPORT
    out = torch.softmax(x, dim=-1)
    return out * 2 if ran else out
