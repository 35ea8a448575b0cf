# Reference: relu(2x + y), elementwise.
import torch


def run(x, y):
    return torch.relu(x * 2.0 + y)
