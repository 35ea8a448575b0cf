# rnx-corpus-case: kernel=cross_entropy expect=accept
# Honest KernelBench rewrite: log_softmax, then the labels' entries gathered and averaged.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, labels):
        logp = torch.log_softmax(logits, dim=-1)
        return -logp.gather(-1, labels.unsqueeze(-1)).mean()
