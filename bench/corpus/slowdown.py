#!/usr/bin/env python3
"""Calibrated slowdown variants of corpus kernels: the same results, a known fraction more time per call.

    python3 bench/corpus/slowdown.py --fraction 0.05 KERNEL.py [--out SLOWED.py]   (default: rewrite in place)

The variant is the kernel file unchanged, followed by a wrapper around its entry (`run`, or `Model.forward` for a
KernelBench file) that adds work proportional to the kernel's own time, calibrated at run time:

* CPU tensors: every call times itself (perf_counter around the original call) and then busy-waits for
  FRACTION of that time. The extra time tracks the kernel call by call, in any spell of the machine, so the true
  ratio is 1 + FRACTION up to the cost of two perf_counter reads (about 0.1 us against calls of 0.2 ms or more).
* CUDA tensors: the first call for each (shapes, dtypes, device) times the original kernel on the device the way
  the runner does (the L2 flushed by writing a buffer of twice its size, then a CUDA event pair around one call;
  the median of five), and measures once how many GPU clock cycles `torch.cuda._sleep` spins per millisecond.
  Every later call enqueues `torch.cuda._sleep(FRACTION * kernel_ms * cycles_per_ms)` on the current stream
  right after the kernel, so the extra device time sits inside the runner's event pair; the host does not wait.
  `_sleep` counts SM clock cycles: a clock change after calibration scales the sleep with the clock, the way a
  compute-bound kernel scales (a memory-bound one less so).

The wrapper never touches the outputs, so `rnx bench`'s reference check and `rnx verify` see the kernel's own
results. How well the fraction is met is checked by bench/corpus.py's slowdown mode, which reports each
configuration's measured ratio and interval beside 1 + FRACTION (README.md, "Calibrated slowdown").
"""
import argparse
import ast
import sys

MARK = "# rnx bench/corpus/slowdown.py"

WRAPPER = '''

{mark}: the kernel above, {percent:g}% slower per call (calibrated; the results are unchanged).
import functools as _rnx_functools
import statistics as _rnx_statistics
import time as _rnx_time

import torch as _rnx_torch

_RNX_FRACTION = {fraction!r}
_rnx_sleep_cycles = {{}}
_rnx_cycles_per_ms = []


def _rnx_device_ms(call, flush):
    """Median device time of five calls, each after an L2 flush, between CUDA events (the runner's method)."""
    times = []
    for _ in range(5):
        flush.fill_(1)
        start = _rnx_torch.cuda.Event(enable_timing=True)
        stop = _rnx_torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return _rnx_statistics.median(times)


def _rnx_measured_extra(fn, args, kwargs, flush, cycles):
    """The slowed call's time over the plain call's, minus one: the median of nine interleaved pairs."""
    ratios = []
    for _ in range(9):
        plain = _rnx_device_ms(lambda: fn(*args, **kwargs), flush)
        slowed = _rnx_device_ms(lambda: (fn(*args, **kwargs), _rnx_torch.cuda._sleep(cycles)), flush)
        ratios.append(slowed / max(plain, 1e-6))
    return _rnx_statistics.median(ratios) - 1


def _rnx_calibrate(fn, args, kwargs, device):
    if _rnx_torch.cuda.is_current_stream_capturing():
        raise RuntimeError("slowdown.py: the first call of a shape must not be captured in a CUDA graph "
                           "(it calibrates with synchronizing timings)")
    l2 = _rnx_torch.cuda.get_device_properties(device).L2_cache_size or (64 << 20)
    flush = _rnx_torch.empty(2 * l2 // 4, dtype=_rnx_torch.float32, device=device)
    kernel_ms = _rnx_device_ms(lambda: fn(*args, **kwargs), flush)
    if not _rnx_cycles_per_ms:
        probe = 2_000_000
        probe_ms = _rnx_device_ms(lambda: _rnx_torch.cuda._sleep(probe), flush)
        _rnx_cycles_per_ms.append(probe / max(probe_ms, 1e-6))
    cycles = int(_RNX_FRACTION * kernel_ms * _rnx_cycles_per_ms[0])
    # A sleep kernel costs its launch and ramp on top of the cycles it spins: measured on the H200, the first
    # guess overshot a 2% target by 0.4-1.8 points. Scale the cycles by what the slowed call really adds.
    for _ in range(3):
        extra = _rnx_measured_extra(fn, args, kwargs, flush, cycles)
        if extra <= 0 or abs(extra - _RNX_FRACTION) <= 0.1 * _RNX_FRACTION:
            break
        cycles = int(cycles * _RNX_FRACTION / extra)
    return cycles


def _rnx_slowed(fn):
    @_rnx_functools.wraps(fn)
    def slowed(*args, **kwargs):
        tensors = [a for a in args if isinstance(a, _rnx_torch.Tensor)]
        cuda = next((t.device for t in tensors if t.is_cuda), None)
        if cuda is None:
            start = _rnx_time.perf_counter()
            out = fn(*args, **kwargs)
            end = _rnx_time.perf_counter()
            until = end + (end - start) * _RNX_FRACTION
            while _rnx_time.perf_counter() < until:
                pass
            return out
        key = (str(cuda),) + tuple((tuple(t.shape), str(t.dtype)) for t in tensors)
        if key not in _rnx_sleep_cycles:
            _rnx_sleep_cycles[key] = _rnx_calibrate(fn, args, kwargs, cuda)
        out = fn(*args, **kwargs)
        if _rnx_sleep_cycles[key] > 0:
            _rnx_torch.cuda._sleep(_rnx_sleep_cycles[key])
        return out
    return slowed


{target} = _rnx_slowed({target})
'''


def entry_of(text, path):
    """`Model.forward` for a KernelBench file (class Model and get_inputs at module level), else `run`."""
    tree = ast.parse(text, filename=path)
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    if "Model" in names and "get_inputs" in names:
        return "Model.forward"
    if "run" in names:
        return "run"
    raise SystemExit(f"slowdown.py: {path} defines neither run() nor a KernelBench Model with get_inputs()")


def slowed_source(text, fraction, path="<kernel>"):
    """The kernel's source with the calibrated wrapper appended (FRACTION 0.05 = 5% more time per call)."""
    if not 0 < fraction < 10:
        raise SystemExit(f"slowdown.py: --fraction {fraction} is out of range (write a number above 0, e.g. 0.05)")
    if MARK in text:
        raise SystemExit(f"slowdown.py: {path} is already a slowdown variant")
    return text.rstrip("\n") + "\n" + WRAPPER.format(mark=MARK, percent=100 * fraction, fraction=fraction,
                                                     target=entry_of(text, path))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kernel", help="a corpus kernel file (.py function or KernelBench file)")
    ap.add_argument("--fraction", type=float, required=True, help="extra time per call, e.g. 0.05 for 5%%")
    ap.add_argument("--out", help="where the variant goes (default: rewrite KERNEL in place)")
    args = ap.parse_args()
    with open(args.kernel, encoding="utf-8") as f:
        text = f.read()
    with open(args.out or args.kernel, "w", encoding="utf-8") as f:
        f.write(slowed_source(text, args.fraction, args.kernel))


if __name__ == "__main__":
    sys.exit(main())
