# A 3x3 convolution with the filter passed as an input (stride 1, padding 1, no bias).
import torch.nn.functional as F


def run(x, w):
    return F.conv2d(x, w, padding=1)
