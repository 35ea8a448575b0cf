# rnx-corpus-case: kernel=argmax_rows expect=accept
# Honest: the indices of torch.max over the rows.
import torch


def run(x):
    return torch.max(x, dim=-1).indices
