# The gated activation of a SwiGLU MLP: silu(gate) * up, elementwise.
import torch.nn.functional as F


def run(gate, up):
    return F.silu(gate) * up
