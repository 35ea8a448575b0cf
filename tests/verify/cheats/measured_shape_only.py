# rnx-verify-case: kernel=matmul expect=reject check=shape_specialization
# Cheat: only the measured batch (4) gets a real answer; every other shape gets zeros (no work at all).
import torch


def run(a, b):
    if a.shape[0] == 4 and a.shape[1] == 24:
        return torch.bmm(a, b)
    return torch.zeros(a.shape[0], a.shape[1], b.shape[2], dtype=a.dtype, device=a.device)
