"""Probe for the in-process pairing bias (issue 20): two identical nn.LayerNorm modules timed alternately.

Times side A and side B in ABBA/BAAB blocks with CUDA events and an L2 flush before every call (as rnx's
CUDA sampler does) and prints the median of per-block sum ratios B/A for several set-ups, so an asymmetry
(construction order, separate vs shared inputs, memory placement) shows as a ratio away from 1.
"""
import json, os, statistics, sys, torch

dev = torch.device("cuda")
L2 = torch.cuda.get_device_properties(0).L2_cache_size
flush_buf = torch.empty(2 * L2 // 4, dtype=torch.float32, device=dev)

def time_call(fn, x):
    flush_buf.fill_(1.0)
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record(); fn(x); e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e)

def paired(fa, xa, fb, xb, blocks=60, flush=True):
    ratios = []
    orders = ["ABBABAAB", "BAABABBA"]
    for w in range(20):
        fa(xa); fb(xb)
    torch.cuda.synchronize()
    for j in range(blocks):
        a = b = 0.0
        for c in orders[j % 2]:
            if c == "A": a += time_call(fa, xa) if flush else time_nf(fa, xa)
            else: b += time_call(fb, xb) if flush else time_nf(fb, xb)
        ratios.append(b / a)
    return statistics.median(ratios)

def time_nf(fn, x):
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record(); fn(x); e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e)

def ln():
    return torch.nn.LayerNorm((64, 256, 256)).to(dev)

def gelu(x): return torch.nn.functional.gelu(x)

res = {}
torch.manual_seed(0)
x = torch.randn(16, 64, 256, 256, device=dev)
x2 = x.clone()
with torch.no_grad():
    A = ln(); B = ln()
    res["ln: A first, B second, shared input"] = paired(A, x, B, x)
    res["ln: same module twice (A/A)"] = paired(A, x, A, x)
    res["ln: A first, B second, separate inputs"] = paired(A, x, B, x2)
    res["ln: swapped roles (B as A)"] = paired(B, x, A, x)
    del A, B; torch.cuda.empty_cache()
    B2 = ln(); A2 = ln()
    res["ln: B constructed first (ratio B/A)"] = paired(A2, x, B2, x)
    # weights moved to fresh allocations
    A3 = ln(); B3 = ln()
    for m in (A3, B3):
        for p in m.parameters(): p.data = p.data.clone()
    res["ln: weights cloned after construction"] = paired(A3, x, B3, x)
    res["ln: no flush"] = paired(A3, x, B3, x, flush=False)
    # addresses
    res["addr"] = {"A3.weight": A3.weight.data_ptr() % 4096, "B3.weight": B3.weight.data_ptr() % 4096,
                   "x": x.data_ptr() % 4096}
    res["gelu: function, shared input"] = paired(gelu, x, gelu, x)
    # per-call times
    res["ln ms A"] = statistics.median(time_call(A3, x) for _ in range(30))
print(json.dumps(res, indent=1))
out = os.environ.get("OUT")
if out: open(os.path.join(out, "pairing_probe.json"), "w").write(json.dumps(res, indent=1))
