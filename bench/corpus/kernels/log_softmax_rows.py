# Log-softmax over the last dimension, written as x - logsumexp(x).
import torch


def run(x):
    return x - torch.logsumexp(x, dim=-1, keepdim=True)
