# rnx-corpus-case: kernel=gelu expect=accept
# Honest: the erf GELU marked torch.compiler.disable, as kernel libraries mark their entry points (the decorator
# imports torch's compiler stack, which wraps torch.manual_seed: torch's effect, not the candidate's).
import math

import torch


@torch.compiler.disable
def run(x):
    return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
