# KernelBench level 2 style: Linear (1024 -> 2048) + Dropout(p=0.0) + LayerNorm(2048) over B rows.
import torch
import torch.nn as nn

batch_size = 1
in_features = 1024
out_features = 2048
dropout_p = 0.0


class Model(nn.Module):
    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(p=dropout_p)
        self.ln = nn.LayerNorm(out_features)
        with torch.no_grad():
            self.ln.weight.copy_(1.0 + 0.1 * torch.randn(out_features))
            self.ln.bias.copy_(0.1 * torch.randn(out_features))

    def forward(self, x):
        return self.ln(self.dropout(self.linear(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, dropout_p]
