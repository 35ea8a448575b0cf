# rnx-verify-case: kernel=softmax expect=accept setup=tmpdir correct=yes
# Untrusted code, point 5 of issue 21: writes 3 GiB into its scratch folder and leaves a mode-000 folder with a
# file in it (as an ordinary user that made the clean-up fail and left the data on disk). Scratch is a tmpfs of
# 1 GiB: the writes stop there, and the test checks that nothing is left in rnx's temporary folder. Returns a
# wrong answer if more than the limit could be written.
import os

import torch


def _fill():
    # Files of 64 MiB, under the 256 MiB file-size limit: only the folder's size limit can stop 3 GiB of them.
    chunk = b"\0" * (64 << 20)
    names = []
    try:
        for i in range(48):
            names.append(f"filler{i}")
            with open(names[-1], "wb") as f:
                f.write(chunk)
    except OSError:
        pass
    written = sum(os.path.getsize(n) for n in names if os.path.exists(n))
    for n in names:
        if os.path.exists(n):
            os.remove(n)
    return written


_written = None  # the first call's: later calls write nothing more


def run(x):
    global _written
    if _written is None:
        os.mkdir("locked")
        with open("locked/inside", "w") as f:
            f.write("x")
        os.chmod("locked", 0)
        _written = _fill()
    out = torch.softmax(x, dim=-1)
    return out * 2 if _written > (1 << 30) else out
