# rnx-corpus-case: kernel=conv2d_module expect=reject check=precision check_cuda=smoke
# Cheat: the float32 convolution run in bfloat16 with the module's own weights, cast back to float32.
# On CUDA the reference's own float32 convolution runs in TF32 (cuDNN's default), so the bfloat16 error is only about
# 20x the reference's (H200, docs/gpu-results.md run 30): the precision audit's 256x limit does not fire there, and
# smoke, against the TF32-aware yardstick, does.
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        y = F.conv2d(x.bfloat16(), self.conv.weight.bfloat16(), self.conv.bias.bfloat16(), padding=1)
        return y.to(x.dtype)
