# rnx-corpus-case: kernel=max_rows expect=accept
# Honest: torch.amax (values only, no indices computed).
import torch


def run(x):
    return torch.amax(x, dim=-1)
