# For runner.fresh_inputs: appends what every float32 call was given (the process, each input's address and a
# digest of its bytes, and the module's own name, which tells the two sides of a pair apart) to the file named by
# $RNX_TEST_CALL_LOG, so the test can tell whether any timed call saw
# inputs an earlier call saw. Neither the float input nor the integer one (indices) may repeat.
import hashlib
import os

import torch

batch_size = 2


def _digest(t):
    return hashlib.sha1(t.contiguous().view(torch.uint8).numpy().tobytes()).hexdigest()[:16]


class Model(torch.nn.Module):
    def forward(self, x, idx):
        if x.dtype == torch.float32:
            with open(os.environ["RNX_TEST_CALL_LOG"], "a") as log:
                log.write(f"{os.getpid()} {x.data_ptr()} {_digest(x)} {idx.data_ptr()} {_digest(idx)} {__name__}\n")
        return x[:, idx] * 2


def get_inputs():
    return [torch.randn(batch_size, 64), torch.randint(0, 64, (8,))]


def get_init_inputs():
    return []
