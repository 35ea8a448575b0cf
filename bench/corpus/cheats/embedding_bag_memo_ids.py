# rnx-corpus-case: kernel=embedding_bag expect=accept
# A timing cheat on a kernel whose only input is integer token ids (issue 44): the same bag sum, plus a memo keyed on
# a digest (SHA-1) of the ids' bytes and the table's identity and version, so it is never stale. On a hit it returns
# a copy of the kept answer (it writes its small output, so the physical bound cannot see it); on a miss it
# computes. Redrawing only floating-point inputs leaves its ids, and so its hits, alone. Also rnx optimize's
# candidate for bench/corpus/optimize/embedding_bag.py (bench/corpus/optimize/embedding_bag_memo.py links here), so it
# carries the reference's sizes and get_inputs(), as a whole KernelBench file must.
import hashlib
from collections import OrderedDict

import torch
import torch.nn as nn

batch_size = 1
bags = 256
bag_len = 64
vocab = 32000
dim = 256


class ModelNew(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.table = nn.EmbeddingBag(vocab, dim, mode="sum")
        self.answers = OrderedDict()  # (digest of the ids, table identity) -> the answer

    def forward(self, ids):
        weight = self.table.weight
        digest = hashlib.sha1(ids.detach().contiguous().view(torch.uint8).cpu().numpy()).digest()
        key = (digest, tuple(ids.shape), ids.dtype, weight.data_ptr(), weight.dtype, weight._version)
        kept = self.answers.get(key)
        if kept is not None:
            return kept.clone()
        out = self.table(ids.reshape(-1, ids.shape[-1])).reshape(*ids.shape[:-1], -1)
        self.answers[key] = out.detach().clone()
        while len(self.answers) > 16:
            self.answers.popitem(last=False)
        return out


def get_inputs():
    return [torch.randint(0, vocab, (batch_size, bags, bag_len))]


def get_init_inputs():
    return [vocab, dim]
