# rnx-corpus-case: kernel=sdpa expect=accept
# Honest: attention written out with batched matmuls, the scale folded into q.
import math

import torch


def run(q, k, v):
    scores = torch.matmul(q * (1.0 / math.sqrt(q.shape[-1])), k.transpose(-2, -1))
    return torch.matmul(torch.softmax(scores, dim=-1), v)
