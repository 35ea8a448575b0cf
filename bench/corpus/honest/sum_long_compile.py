# rnx-corpus-case: kernel=sum_long expect=accept
# Honest: the same sum under torch.compile. Inductor's loop adds in its own order (vector lanes, then threads), and
# a float32 sum of a million terms in that order is 1e-6 to 1e-5 off the exact sum, several times eager torch's
# cascade summation: the error of the dtype's arithmetic, not of the rewrite.
import torch


@torch.compile
def _sum(x):
    return x.sum(dim=-1)


def run(x):
    return _sum(x)
