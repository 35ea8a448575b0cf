# rnx-verify-case: kernel=attention expect=reject check=hidden_work gpu=yes
# CUDA cheat: the real work runs on a side stream and is never joined, so CUDA events on the current stream
# (what a timer records) see only the launch.
import torch
import torch.nn.functional as F

_side = None


def run(q, k, v):
    global _side
    if _side is None:
        _side = torch.cuda.Stream(device=q.device)
    out = torch.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype, device=q.device)
    _side.wait_stream(torch.cuda.current_stream(q.device))
    with torch.cuda.stream(_side):
        for _ in range(20):  # enough work that it is still running when the timed stream is done
            out.copy_(F.scaled_dot_product_attention(q, k, v))
    return out
