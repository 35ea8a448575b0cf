# rnx-verify-case: kernel=softmax expect=reject check=patched_globals
# Cheat: patches the reference's softmax at run time through names built from strings (invisible to a text
# search), so the reference would agree with this candidate's cheaper, wrong answer.
import torch

_mod = globals()["__builtins__"]
_set = _mod["setattr"] if isinstance(_mod, dict) else getattr(_mod, "setattr")


def _cheap(x, dim=-1, **kwargs):
    return torch.full_like(x, 1.0 / x.shape[dim])


def run(x):
    _set(torch, "soft" + "max", _cheap)
    return _cheap(x)
