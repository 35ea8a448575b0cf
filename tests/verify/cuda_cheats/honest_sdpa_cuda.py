# rnx-verify-case: kernel=attention expect=accept gpu=yes
# Honest CUDA rewrite: PyTorch's fused attention kernel on the GPU, everything on the current stream.
import torch.nn.functional as F


def run(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)
