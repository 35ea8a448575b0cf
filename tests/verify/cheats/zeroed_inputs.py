# rnx-verify-case: kernel=softmax expect=reject check=input_mutation
# Cheat: zeroes its input in place, so a reference run afterwards on the same tensor agrees with the cheap answer.
import torch


def run(x):
    x.zero_()
    return torch.full_like(x, 1.0 / x.shape[-1])
