# rnx-verify-case: reference=refs/kb_layernorm_default.py expect=review check=ignored_inputs detail=cannot be matched
# Honest but unmatched: the same LayerNorm with its parameters under names of its own (gamma, beta), so the verifier
# cannot give them the reference's perturbation; it says so and asks for review rather than rejecting.
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.gamma = torch.nn.Parameter(torch.ones(features))
        self.beta = torch.nn.Parameter(torch.zeros(features))

    def forward(self, x):
        return torch.nn.functional.layer_norm(x, x.shape[-1:], self.gamma, self.beta)
