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
* What the wrapper adds beyond the sleep (its Python, the sleep kernel's launch) is not known to the wrapper;
  on the H200 the slowed calls measured 2.4-3.8% slower where 2% was asked (docs/gpu-results.md, run 19). So a
  variant can carry a SCALE per dtype (`--scale float32=0.7`): the fraction asked of that dtype's calls is
  FRACTION x SCALE. bench/corpus.py's slowdown mode sets it from a calibration run (`--calibrate`): the ratio
  rnx bench measured for each configuration gives SCALE = FRACTION / (ratio - 1), and only the runs after it
  count as detections.

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
_RNX_SCALE = {scale!r}  # dtype -> factor on FRACTION, from a calibration run (bench/corpus.py slowdown --calibrate)
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


def _rnx_fraction(args):
    """FRACTION, times the calibrated SCALE of the first floating-point tensor's dtype."""
    for a in args:
        if isinstance(a, _rnx_torch.Tensor) and a.is_floating_point():
            return _RNX_FRACTION * _RNX_SCALE.get(str(a.dtype).replace("torch.", ""), 1.0)
    return _RNX_FRACTION


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
    cycles = int(_rnx_fraction(args) * kernel_ms * _rnx_cycles_per_ms[0])
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
            until = end + (end - start) * (_rnx_fraction(args) if _RNX_SCALE else _RNX_FRACTION)
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


def slowed_source(text, fraction, path="<kernel>", scale=None):
    """The kernel's source with the calibrated wrapper appended (FRACTION 0.05 = 5% more time per call; SCALE a
    dtype -> factor map from a calibration run, e.g. {"float32": 0.7})."""
    if not 0 < fraction < 10:
        raise SystemExit(f"slowdown.py: --fraction {fraction} is out of range (write a number above 0, e.g. 0.05)")
    if MARK in text:
        raise SystemExit(f"slowdown.py: {path} is already a slowdown variant")
    scale = dict(scale or {})
    for dtype, factor in scale.items():
        if not 0 < factor < 100:
            raise SystemExit(f"slowdown.py: the scale of {dtype} is {factor}; write a factor above 0, e.g. 0.7")
    return text.rstrip("\n") + "\n" + WRAPPER.format(mark=MARK, percent=100 * fraction, fraction=fraction,
                                                     scale=scale, target=entry_of(text, path))


def parse_scale(items):
    """["float32=0.7", ...] -> {"float32": 0.7}."""
    scale = {}
    for item in items:
        dtype, _, factor = item.partition("=")
        try:
            scale[dtype] = float(factor)
        except ValueError:
            raise SystemExit(f"slowdown.py: --scale {item}: write DTYPE=FACTOR, e.g. float32=0.7") from None
    return scale


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kernel", help="a corpus kernel file (.py function or KernelBench file)")
    ap.add_argument("--fraction", type=float, required=True, help="extra time per call, e.g. 0.05 for 5%%")
    ap.add_argument("--scale", action="append", default=[], metavar="DTYPE=FACTOR",
                    help="a calibrated factor on FRACTION for one dtype's calls (repeatable)")
    ap.add_argument("--out", help="where the variant goes (default: rewrite KERNEL in place)")
    args = ap.parse_args()
    with open(args.kernel, encoding="utf-8") as f:
        text = f.read()
    with open(args.out or args.kernel, "w", encoding="utf-8") as f:
        f.write(slowed_source(text, args.fraction, args.kernel, parse_scale(args.scale)))


if __name__ == "__main__":
    sys.exit(main())
