# rnx-corpus-case: kernel=triton_softmax expect=accept gpu=yes
# Honest: the Triton row softmax replaced by torch.softmax over the last dimension.
import torch


def run(x):
    return torch.softmax(x, dim=-1)
