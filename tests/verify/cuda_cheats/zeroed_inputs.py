# rnx-verify-case: kernel=attention expect=reject check=input_mutation gpu=yes
# CUDA cheat: zeroes q and k in place, making attention uniform (cheap: the mean of v), and returns that.
import torch


def run(q, k, v):
    q.zero_()
    k.zero_()
    return v.mean(dim=-2, keepdim=True).expand(q.shape[:-1] + (v.shape[-1],)).contiguous()
