# rnx-corpus-case: kernel=attention_causal expect=reject check=output_aliasing
# Cheat: keeps its last answers under the inputs' addresses and shapes, with copies of the inputs it answered;
# called again on memory it has seen holding the same values, it hands back the answer it kept, the very tensor it
# returned before. A caller that changed or reused that earlier result gets it again as a new one. Right on every
# input, so only where the inputs land decides whether it is seen: the verifier gives a case's calls the same
# addresses, so it is.
import torch.nn.functional as F
import torch

_kept = {}  # (addresses, shapes) -> (q, k, v copies, answer)


def run(q, k, v):
    key = (q.data_ptr(), k.data_ptr(), v.data_ptr(), tuple(q.shape), tuple(k.shape), tuple(v.shape))
    hit = _kept.get(key)
    if hit is not None and torch.equal(hit[0], q) and torch.equal(hit[1], k) and torch.equal(hit[2], v):
        return hit[3]
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    _kept[key] = (q.clone(), k.clone(), v.clone(), out)
    if len(_kept) > 16:
        _kept.pop(next(iter(_kept)))
    return out
