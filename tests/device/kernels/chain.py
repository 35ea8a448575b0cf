# A chain of REPS dependent matrix products; the A/B check edits REPS from 33 to 34 (3% more work).
import torch

REPS = 33


def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    w = w * (1.0 / w.shape[0] ** 0.5)  # keeps the chain's values near 1 instead of overflowing
    for _ in range(REPS):
        x = x @ w
    return x
