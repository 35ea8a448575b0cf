# rnx-corpus-case: kernel=attention_causal expect=reject check=smoke
# Cheat: drops the causal mask (fused non-causal attention is cheaper to call).
import torch.nn.functional as F


def run(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)
