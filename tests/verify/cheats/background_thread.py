# rnx-verify-case: kernel=scale_add expect=reject check=extra_threads
# Cheat: hands the work to a thread that outlives the call, so a timer around the call sees almost nothing.
import queue
import threading

import torch

_jobs = queue.Queue()


def _worker():
    while True:
        out, x, y = _jobs.get()
        try:
            out.copy_(torch.relu(x * 2.0 + y))
        finally:
            _jobs.task_done()


_thread = threading.Thread(target=_worker, daemon=True)
_thread.start()


def run(x, y):
    out = torch.empty_like(x)
    _jobs.put((out, x, y))
    _jobs.join()
    return out
