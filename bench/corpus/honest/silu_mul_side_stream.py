# rnx-corpus-case: kernel=silu_mul expect=review check=static_scan gpu=yes
# Honest (CUDA): the work runs on a stream of its own, which waits for the caller's stream before it starts, and
# the caller's stream waits for it before the call returns, so everything the call does lies inside the caller's
# timed window. The static scan sees a torch.cuda.Stream and asks a person to look; hidden_work measures nothing
# left running after the timed stream, so nothing rejects it.
import torch
import torch.nn.functional as F

_side = {}


def _stream(device):
    if device not in _side:
        _side[device] = torch.cuda.Stream(device=device)
    return _side[device]


def run(gate, up):
    caller = torch.cuda.current_stream(gate.device)
    side = _stream(gate.device)
    side.wait_stream(caller)
    with torch.cuda.stream(side):
        out = F.silu(gate) * up
    caller.wait_stream(side)
    out.record_stream(caller)
    return out
