# rnx-verify-case: kernel=rowsum expect=reject check=determinism
# Cheat: a racy accumulation, modelled as run-to-run noise: two calls on the same data disagree.
import torch


def run(x):
    out = (x * x).sum(dim=-1) * 0.5
    return out + torch.randn_like(out) * 1e-3 * out.abs().mean()
