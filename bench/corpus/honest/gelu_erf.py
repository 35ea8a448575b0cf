# rnx-corpus-case: kernel=gelu expect=accept
# Honest: the erf form written out, 0.5 x (1 + erf(x / sqrt 2)).
import math

import torch


def run(x):
    return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
