# rnx-verify-case: kernel=attention expect=reject check=ignored_inputs
# Cheat: self-attention shortcut that never reads k (uses q in its place), one matmul operand fewer to load.
import math

import torch


def run(q, k, v):
    scores = torch.matmul(q, q.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    return torch.matmul(torch.softmax(scores, dim=-1), v)
