# rnx-verify-case: kernel=softmax expect=reject check=shape_sweep detail=restarted pass=fresh_inputs,stale_memory,determinism,ignored_inputs,implausible_speedup,extra_threads,sandbox
# A kernel that supports only even row widths and ends its process when given an odd one (Triton's tutorial layer
# norm exits with status 3 on a size it does not support). The sweep's odd widths are rows the reference takes,
# so the shape sweep fails; the process is restarted there, so every later row is judged as usual instead of
# failing with "its channel is closed".
import os

import torch


def run(x):
    if x.shape[-1] % 2:
        os._exit(3)
    return torch.softmax(x, dim=-1)
