# KernelBench style: a bag-of-tokens sum. The only input is a tensor of integer token ids (batch, bags, bag_len);
# each bag's rows of a 32000 x 256 table made inside the model are gathered and summed. Reads 64 rows per output
# row, so most of a call is the gather, and its output (batch, bags, dim) is small beside what it reads.
import torch
import torch.nn as nn

batch_size = 1
bags = 256
bag_len = 64
vocab = 32000
dim = 256


class Model(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.table = nn.EmbeddingBag(vocab, dim, mode="sum")

    def forward(self, ids):
        return self.table(ids.reshape(-1, ids.shape[-1])).reshape(*ids.shape[:-1], -1)


def get_inputs():
    return [torch.randint(0, vocab, (batch_size, bags, bag_len))]


def get_init_inputs():
    return [vocab, dim]
