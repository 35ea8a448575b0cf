# rnx-verify-case: reference=refs/kb_gelu_literal.py expect=review check=edge_cases detail=refuses
# Honest, narrower contract: refuses non-contiguous inputs with a clear error, as many hand-written and load_inline
# kernels do. The reference's own inputs (get_inputs()) are always contiguous, so this narrows the contract; the
# verifier asks for review and says what it refuses, it does not reject.
import torch


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if not x.is_contiguous():
            raise ValueError("inp must be contiguous")
        return torch.nn.functional.gelu(x, approximate="tanh")
