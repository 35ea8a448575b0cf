# Test kernel: quietly computes float32 inputs in float16, so its result diverges from the float64 reference.
import torch


def run(x):
    if x.dtype == torch.float32:
        return (x.half() * 3.3).float()
    return x * 3.3
