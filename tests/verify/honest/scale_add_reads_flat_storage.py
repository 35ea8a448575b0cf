# rnx-verify-case: kernel=scale_add expect=review check=edge_cases detail=returns wrong values for non-contiguous
# Honest, narrower contract (issue 44): reads raw memory as if every input were contiguous; the manifest's inputs
# always are, so a wrong value on a strided view narrows the contract (review, with its fix), it is no rejection.
import torch


def run(x, y):
    flat_x = torch.as_strided(x, (x.numel(),), (1,))
    flat_y = torch.as_strided(y, (y.numel(),), (1,))
    return torch.relu(flat_x * 2.0 + flat_y).view(x.shape)
