# KernelBench style: nn.Embedding lookup of random token ids in a 32000 x 256 table.
import torch
import torch.nn as nn

batch_size = 1
tokens = 16384
vocab = 32000
dim = 256


class Model(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)

    def forward(self, ids):
        return self.table(ids)


def get_inputs():
    return [torch.randint(0, vocab, (batch_size, tokens))]


def get_init_inputs():
    return [vocab, dim]
