# Row reduction: the maximum over the last dimension (values only).
import torch


def run(x):
    return x.max(dim=-1).values
