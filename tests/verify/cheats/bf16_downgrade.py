# rnx-verify-case: kernel=attention expect=reject check=precision
# Cheat: quietly computes a float32 kernel in bfloat16 (faster on tensor cores) and casts back.
import torch.nn.functional as F


def run(q, k, v):
    out = F.scaled_dot_product_attention(q.bfloat16(), k.bfloat16(), v.bfloat16())
    return out.to(q.dtype)
