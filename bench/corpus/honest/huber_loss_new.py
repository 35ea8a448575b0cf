# rnx-corpus-case: kernel=huber_loss expect=accept
# Honest: the Huber loss from its two pieces, |d| <= 1: d^2 / 2, else |d| - 1/2, written as min(|d|, 1) = q:
# q^2 / 2 + (|d| - q), fresh buffers at every call.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        d = (predictions - targets).abs_()
        q = d.clamp(max=1.0)
        return (0.5 * q * q + (d - q)).mean()
