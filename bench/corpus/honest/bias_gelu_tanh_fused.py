# rnx-corpus-case: kernel=bias_gelu_tanh expect=accept
# Honest: the bias add followed by torch's fused tanh-approximation GELU (the same formula, one kernel).
import torch.nn.functional as F


def run(x, bias):
    return F.gelu(x + bias, approximate="tanh")
