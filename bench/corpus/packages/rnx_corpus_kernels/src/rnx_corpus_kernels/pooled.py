"""Row-parallel kernels on a pool of worker threads the module starts when it is imported, one per CPU, as kernel
libraries that parallelise on the host do: the threads wait between calls and work only inside one.

Every function splits its rows into one chunk per worker, hands the chunks to the pool and returns once all are
done, so the work stays within the call.
"""
import os
import queue
import threading

import torch

_WORKERS = max(1, os.cpu_count() or 1)
_jobs = queue.Queue()


def _serve():
    while True:
        fn, done = _jobs.get()
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - handed back to the caller
            done.append(e)
        finally:
            _jobs.task_done()


_threads = [threading.Thread(target=_serve, name=f"rnx-corpus-pool-{i}", daemon=True) for i in range(_WORKERS)]
for _t in _threads:
    _t.start()


# Elements per block: under torch's grain size (32768), so each block runs on its worker's own thread and never
# opens a parallel region (which would start a team of threads for every worker).
_BLOCK = 16384


def _run_blocks(n, fn):
    """fn(start, stop) on every block of [0, n), the blocks dealt out to the workers; returns after the last."""
    blocks = [(s, min(s + _BLOCK, n)) for s in range(0, n, _BLOCK)]
    share = -(-len(blocks) // _WORKERS)
    errors = []
    for w in range(0, len(blocks), share):
        mine = blocks[w:w + share]
        _jobs.put((lambda mine=mine: [fn(a, b) for a, b in mine], errors))
    _jobs.join()
    if errors:
        raise errors[0]


def silu_mul(gate, up):
    """silu(gate) * up, elementwise, in blocks spread over the pool."""
    g, u = gate.contiguous().view(-1), up.contiguous().view(-1)
    out = torch.empty(gate.shape, dtype=gate.dtype, device=gate.device)
    flat = out.view(-1)

    def block(start, stop):
        torch.mul(torch.nn.functional.silu(g[start:stop]), u[start:stop], out=flat[start:stop])

    if g.numel():
        _run_blocks(g.numel(), block)
    return out
