# rnx-verify-case: reference=refs/kb_matmul_large_k.py expect=accept args=--dtype,float32,bfloat16
# Honest KernelBench rewrite: torch.mm on the same operands. Its float32 error against float64 is the reference's
# own (K = 4096); a check whose yardstick ignores the reduction length rejected it in ignored_inputs.
import torch


class ModelNew(torch.nn.Module):
    def forward(self, A, B):
        return torch.mm(A, B)
