# rnx-verify-case: kernel=softmax expect=accept setup=shm_file correct=yes
# Untrusted code, point 5 of issue 21: leaves a file with a secret and 64 MiB in /dev/shm for a later process
# (shared memory is not counted by the memory watcher and outlives the run on the host). The sandbox's /dev/shm
# is its own tmpfs, gone with it; the test checks the host's.
import torch

PATH = "/dev/shm/rnx-redteam-shm-leftover"  # the test's target (run_case.py setup=shm_file)


_left = False


def run(x):
    global _left
    path = PATH
    if _left:
        return torch.softmax(x, dim=-1)
    _left = True
    try:
        with open(path, "wb") as f:
            f.write(b"rnx-redteam secret\n" + b"\0" * (64 << 20))
    except OSError:
        pass
    return torch.softmax(x, dim=-1)
