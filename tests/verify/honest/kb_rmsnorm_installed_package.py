# rnx-verify-case: kernel=rmsnorm expect=accept package=rnx_corpus_kernels
# Honest: RMSNorm from a kernel library installed with pip into site-packages (the corpus's own,
# bench/corpus/packages/rnx_corpus_kernels), whose functions are torch.compiler.disable'd at import like real
# libraries': judged on what it computes, like torch itself.
import torch

import rnx_corpus_kernels


class ModelNew(torch.nn.Module):
    def __init__(self, features, eps):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(1.0 + 0.1 * torch.randn(features))

    def forward(self, x):
        return rnx_corpus_kernels.rms_norm(x, self.weight, self.eps)
