# Reference in KernelBench form: a GEMM with a long reduction (K = 4096) of activations with a non-zero mean by
# centred weights, as after a ReLU: partial sums run far above the result, so float32 rounds well above eps * max.
import torch

M = 128
K = 4096
N = 128


class Model(torch.nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(M, K) + 10.0
    B = torch.randn(K, N)
    return [A, B - B.mean(dim=0, keepdim=True)]


def get_init_inputs():
    return []
