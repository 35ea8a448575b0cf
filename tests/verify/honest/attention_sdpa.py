# rnx-verify-case: kernel=attention expect=accept
# Honest rewrite: PyTorch's fused scaled_dot_product_attention instead of the three explicit steps.
import torch.nn.functional as F


def run(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)
