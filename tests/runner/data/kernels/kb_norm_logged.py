# Test KernelBench file: a LayerNorm and a Linear with weights of their own. When RNX_TEST_IMPORT_LOG is set, each
# import appends "PID MODULE_NAME" to that file, so a test can see which revision's copy a worker loaded first.
import os

import torch
import torch.nn as nn

batch_size = 4

_log = os.environ.get("RNX_TEST_IMPORT_LOG")
if _log:
    with open(_log, "a") as f:
        f.write(f"{os.getpid()} {__name__}\n")


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.norm = nn.LayerNorm(features)
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return self.linear(self.norm(x))


def get_inputs():
    return [torch.randn(batch_size, 16, 64)]


def get_init_inputs():
    return [64]
