# rnx-corpus-case: kernel=triton_add expect=accept gpu=yes
# Honest: the Triton vector add replaced by torch.add.
import torch


def run(x, y):
    return torch.add(x, y)
