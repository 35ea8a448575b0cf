# rnx-corpus-case: kernel=gemm_fp32 expect=reject check=output_aliasing
# A timing cheat that writes nothing on a hit (issue 44): two output buffers per shape, each with the digest (SHA-1
# of the bytes) of the inputs whose product it holds. A call whose inputs hash to what a buffer holds returns that
# buffer untouched; any other call multiplies into the buffer it did not return last, so two calls in a row never
# return the same memory. On new inputs at every call (the verifier) it computes, into alternate buffers; on the
# same inputs at every call it only hashes: hashing 1.5 MiB of input takes longer than writing the 0.5 MiB output,
# so the physical bound (which times the output's write) cannot see it. bench/memo_timing.py measures it. What it
# hands out is not the caller's: a later call with other inputs overwrites it. `rnx verify` at 733ab6f accepted it
# (its two calls had different inputs); a second call on the same inputs gets the first call's memory back, which
# output_aliasing rejects.
import hashlib

import torch

_buffers = {}  # (shapes, dtype, device) -> {"out": [two tensors], "digest": [two digests], "last": index}


def _digest(*tensors):
    h = hashlib.sha1()
    for t in tensors:
        h.update(repr((tuple(t.shape), t.dtype)).encode())
        h.update(t.detach().contiguous().view(torch.uint8).cpu().numpy())
    return h.digest()


def run(a, b):
    shape = (*a.shape[:-1], b.shape[-1])
    key = (tuple(a.shape), tuple(b.shape), a.dtype, a.device)
    slot = _buffers.get(key)
    if slot is None:
        slot = {"out": [torch.empty(shape, dtype=a.dtype, device=a.device) for _ in range(2)],
                "digest": [None, None], "last": 1}
        _buffers[key] = slot
    digest = _digest(a, b)
    for i in range(2):
        if slot["digest"][i] == digest:
            slot["last"] = i
            return slot["out"][i]
    i = 1 - slot["last"]
    torch.matmul(a, b, out=slot["out"][i])
    slot["digest"][i] = digest
    slot["last"] = i
    return slot["out"][i]
