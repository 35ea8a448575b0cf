# rnx-verify-case: kernel=softmax expect=accept
# Honest: a function marked torch.compiler.disable, as kernel libraries mark their entry points at import; the
# decorator imports torch's compiler stack, whose effects (torch.manual_seed wrapped) are torch's, not the
# candidate's.
import torch


@torch.compiler.disable
def run(x):
    return torch.softmax(x, dim=-1)
