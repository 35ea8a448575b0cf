# rnx-corpus-case: kernel=conv2d_module expect=reject check=precision
# Cheat: the float32 convolution run in bfloat16 with the module's own weights, cast back to float32.
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        y = F.conv2d(x.bfloat16(), self.conv.weight.bfloat16(), self.conv.bias.bfloat16(), padding=1)
        return y.to(x.dtype)
