# rnx-corpus-case: kernel=embedding expect=reject check=fresh_inputs
# Cheat: remembers the first lookup's result per shape and returns it for every later batch of token ids.
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)
        self.seen = {}

    def forward(self, ids):
        key = (tuple(ids.shape), self.table.weight.dtype, ids.device)
        if key not in self.seen:
            self.seen[key] = self.table(ids)
        return self.seen[key].clone()
