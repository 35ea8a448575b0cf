# rnx-verify-case: kernel=scale_add expect=reject check=edge_cases
# Cheat: reads raw memory as if every input were contiguous (skips the copy a strided input needs).
import torch


def run(x, y):
    flat_x = torch.as_strided(x, (x.numel(),), (1,))
    flat_y = torch.as_strided(y, (y.numel(),), (1,))
    return torch.relu(flat_x * 2.0 + flat_y).view(x.shape)
