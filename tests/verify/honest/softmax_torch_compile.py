# rnx-verify-case: kernel=softmax expect=accept args=--speedup-limit,100000
# Honest: the softmax written out under torch.compile, the first rewrite anyone tries. Importing torch's compiler
# stack wraps torch.manual_seed and inductor compiles at the first call (a C++ compiler on the CPU, Triton on a
# GPU): torch's doing, the baseline the verifier takes before the candidate loads, never the candidate's.
# The speedup limit is raised because the case is about those effects, not about timing: on the loaded 2-core CI
# machine the eager reference of this 4 x 96 softmax (a few microseconds) waits for a second OpenMP thread on
# every call and measured 7.6-13.7 ms, which made the compiled kernel look 250-470x faster (docs/verify.md).
import torch


@torch.compile
def _softmax(x):
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def run(x):
    return _softmax(x)
