# For runner.bench: a head that steers its base only in the second process whose control ran (it sees the base's
# twin among the modules, docs/runner.md, the control), counting such processes in the file $RNX_TEST_STEER_COUNT:
# there it makes torch.matmul, which only the base calls, do the product twenty times. Its own product goes through
# torch.mm. With the base first in the last process, that control trips with no process left in the schedule.
import os
import sys

import torch

_plain_matmul = torch.matmul
_checked = False


def _twentyfold_matmul(*args, **kwargs):
    for _ in range(19):
        _plain_matmul(*args, **kwargs)
    return _plain_matmul(*args, **kwargs)


def _maybe_steer():
    if not any(name.startswith("rnx_twin_") for name in list(sys.modules)):
        return
    path = os.environ["RNX_TEST_STEER_COUNT"]
    count = int(open(path).read() or "0") if os.path.exists(path) else 0
    count += 1
    with open(path, "w") as f:
        f.write(str(count))
    if count == 2:
        sys.modules["torch"].matmul = _twentyfold_matmul


def run(a, b):
    global _checked
    if not _checked:
        _checked = True
        _maybe_steer()
    return torch.mm(a.reshape(-1, a.shape[-1]), b).reshape(*a.shape[:-1], b.shape[-1])
