# rnx-verify-case: reference=refs/kb_layernorm_default.py expect=reject check=ignored_inputs detail=parameters
# Cheat: keeps the reference's nn.LayerNorm (same parameter names and shapes) and normalises without its weight and
# bias, right while they hold their initial ones and zeros. The verifier perturbs the parameters of both models.
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.ln = torch.nn.LayerNorm(features)

    def forward(self, x):
        return torch.nn.functional.layer_norm(x, x.shape[-1:], eps=self.ln.eps)
