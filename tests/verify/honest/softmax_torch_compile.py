# rnx-verify-case: kernel=softmax expect=accept
# Honest: the softmax written out under torch.compile, the first rewrite anyone tries. Importing torch's compiler
# stack wraps torch.manual_seed and inductor compiles at the first call (a C++ compiler on the CPU, Triton on a
# GPU): torch's doing, the baseline the verifier takes before the candidate loads, never the candidate's.
import torch


@torch.compile
def _softmax(x):
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def run(x):
    return _softmax(x)
