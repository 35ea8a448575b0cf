# rnx-verify-case: kernel=softmax expect=review check=edge_cases detail=restarted pass=smoke,shape_sweep,stability,fresh_inputs,determinism,implausible_speedup,sandbox
# Honest, narrower contract: a native kernel that assumes contiguous rows and aborts the process on any other
# layout (here an exit, as a failed device-side assertion ends a CUDA process). The reference's inputs are always
# contiguous, so a crash on a strided or transposed view narrows the contract: review, with the fix, and the
# process restarted for the rows after it.
import os

import torch


def run(x):
    if not x.is_contiguous():
        os._exit(3)
    return torch.softmax(x, dim=-1)
