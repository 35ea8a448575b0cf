# rnx-corpus-case: kernel=rmsnorm_module expect=accept package=rnx_corpus_kernels
# Honest: RMSNorm from an installed kernel library (bench/corpus/packages/rnx_corpus_kernels, a Triton kernel on
# CUDA, torch on CPU; its functions are torch.compiler.disable'd at import, like real libraries).
import torch
import torch.nn as nn

import rnx_corpus_kernels


class ModelNew(nn.Module):
    def __init__(self, features, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(features))

    def forward(self, x):
        return rnx_corpus_kernels.rms_norm(x, self.weight, self.eps)
