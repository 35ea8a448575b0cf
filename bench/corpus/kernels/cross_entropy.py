# KernelBench style: cross-entropy of logits against integer class labels, mean over the rows.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1
rows = 1024
classes = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, labels):
        return F.cross_entropy(logits, labels)


def get_inputs():
    return [torch.randn(batch_size * rows, classes), torch.randint(0, classes, (batch_size * rows,))]


def get_init_inputs():
    return []
