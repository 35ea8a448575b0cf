# Reference: scaled dot-product attention written out step by step (what the candidates rewrite).
import math

import torch


def run(q, k, v):
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, v)
