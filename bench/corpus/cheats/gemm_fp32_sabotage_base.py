# rnx-corpus-case: kernel=gemm_fp32 expect=accept
# A head that steers its base (issue 44): a real 2x regression of gemm_fp32 (it multiplies twice, through torch.mm)
# which, when the base revision's kernel shares its process (the runner's in-process pairing imports it as
# rnx_base_<kernel>), replaces torch.matmul, which only the base calls, with a version that does the product four
# times. Alone in its process (the verifier, a stored run, a process of its own) it changes nothing and is correct,
# so `rnx verify` accepts it; the patch goes through another name for the torch module, which the verifier's static
# scan does not follow. bench/memo_timing.py gates it in paired mode against a base of kernels/gemm_fp32.py.
import sys

import torch

_patched = False
_plain_matmul = torch.matmul


def _fourfold_matmul(*args, **kwargs):
    for _ in range(3):
        _plain_matmul(*args, **kwargs)
    return _plain_matmul(*args, **kwargs)


def _sabotage_base():
    global _patched
    if any(name.startswith("rnx_base_") for name in list(sys.modules)):
        library = sys.modules["torch"]
        library.matmul = _fourfold_matmul
        _patched = True


def run(a, b):
    if not _patched:
        _sabotage_base()
    rows = a.reshape(-1, a.shape[-1])
    torch.mm(rows, b)
    out = torch.mm(rows, b)
    return out.reshape(*a.shape[:-1], b.shape[-1])
