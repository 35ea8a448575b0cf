# For runner.bench: the base of a pair whose head steers it late (steer_late_head.py): a product through
# torch.matmul.
import torch


def run(a, b):
    return torch.matmul(a, b)
