# rnx-corpus-case: kernel=kb_literal_add expect=review check=edge_cases
# Honest, narrower contract: the add done on the flat storage of both inputs, as a kernel that takes a data pointer
# and a length does (Triton's tutorial vector add, most hand-written CUDA adds). Right on every input like the
# reference's own (get_inputs() makes them contiguous); on a non-contiguous view it reads the gaps. That narrows the
# contract without a word, so the verifier asks for review and says what to do: make the inputs contiguous, or
# assert that they are.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        flat_a = torch.as_strided(a, (a.numel(),), (1,))
        flat_b = torch.as_strided(b, (b.numel(),), (1,))
        return (flat_a + flat_b).view(a.shape)
