# rnx-verify-case: kernel=softmax expect=accept
# Honest rewrite whose library compiles at the first call, as Triton does (ptxas and a C compiler for its
# launcher started as processes, its cache under TRITON_CACHE_DIR): support/first_call_build.py, beside it (the
# verifier lets a kernel read its own folder, not the rest of the repository), runs the Python interpreter and gcc
# into the scratch folder and loads the library built there. Needs gcc.
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import first_call_build  # noqa: E402  (the stand-in for Triton)

_launcher = None


def run(x):
    global _launcher
    if _launcher is None:
        _launcher = first_call_build.build_launcher()
    if not _launcher.rnx_rows_ok(x.shape[0]):
        raise RuntimeError("the launcher refused the rows")
    return torch.softmax(x, dim=-1)
