# rnx-corpus-case: kernel=gelu expect=reject check=precision
# Cheat: the float32 GELU evaluated in float16 (half the memory traffic) and widened again.
import torch.nn.functional as F


def run(x):
    return F.gelu(x.half()).to(x.dtype)
