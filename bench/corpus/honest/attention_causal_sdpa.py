# rnx-corpus-case: kernel=attention_causal expect=accept
# Honest: the same causal attention through torch's fused scaled_dot_product_attention(is_causal=True).
import torch.nn.functional as F


def run(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
