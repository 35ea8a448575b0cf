#!/usr/bin/env python3
"""The reference check's yardstick on typical kernels (CPU): what each one's own rounding in a dtype measures.

For each kernel: the eager output's error against float64 (largest, 99th percentile), how far rounding the inputs
to the dtype moves the float64 output, and their ratio, which the runner counts up to 256x (tolerance.hpp).
Honest computations stay far below 256x; a float32 kernel computing in float16 does not.

    python3 bench/yardstick_ratios.py [--json out.json]
"""
import argparse
import json

import torch

EPS = {torch.float32: 2.0 ** -23, torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7}


def centred(b):
    return b - b.mean(0, keepdim=True)


KERNELS = [
    ("gemm K=4096", lambda a, b: a @ b, lambda g: [torch.randn(256, 4096, generator=g), torch.randn(4096, 256, generator=g)], torch.float32),
    ("gemm K=4096, offset A", lambda a, b: a @ b,
     lambda g: [torch.randn(256, 4096, generator=g) + 10, centred(torch.randn(4096, 256, generator=g))], torch.float32),
    ("cumsum 32768", lambda x: x.cumsum(-1), lambda g: [torch.randn(4, 32768, generator=g)], torch.float32),
    ("cumsum 32768, positive", lambda x: x.cumsum(-1), lambda g: [torch.rand(4, 32768, generator=g)], torch.float32),
    ("softmax 4096", lambda x: x.softmax(-1), lambda g: [torch.randn(64, 4096, generator=g)], torch.float32),
    ("layer_norm 4096", lambda x: torch.nn.functional.layer_norm(x, (4096,)), lambda g: [torch.randn(64, 4096, generator=g)], torch.float32),
    ("cross_entropy", lambda x, t: torch.nn.functional.cross_entropy(x, t.argmax(-1)),
     lambda g: [torch.randn(64, 1000, generator=g), torch.randn(64, 1000, generator=g)], torch.float32),
    ("float16 inside float32", lambda x: (x.half() * 3.3).float() if x.dtype == torch.float32 else x * 3.3,
     lambda g: [torch.randn(2, 256, generator=g)], torch.float32),
    ("gemm K=4096 bf16", lambda a, b: a @ b, lambda g: [torch.randn(256, 4096, generator=g), torch.randn(4096, 256, generator=g)], torch.bfloat16),
]


def measure(fn, inputs, dtype, g):
    xs = [x.to(dtype) for x in inputs]
    wide = [x.double() for x in xs]
    ref = fn(*wide)
    err = (fn(*xs).double() - ref).abs().flatten()
    n = err.numel()
    typical = err.kthvalue(int(0.99 * (n - 1)) + 1).values.item()
    moved = [w * (1 + EPS[dtype] * (2 * torch.rand(w.shape, generator=g, dtype=torch.float64) - 1)) for w in wide]
    rounding = (fn(*moved) - ref).abs().max().item()
    return {"largest": err.max().item(), "typical": typical, "input_rounding": rounding,
            "ratio": typical / rounding if rounding > 0 else float("inf")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    print(f"{'kernel':26} {'dtype':9} {'largest':>10} {'p99':>10} {'input rnd':>10} {'p99/rnd':>8}")
    for name, fn, make, dtype in KERNELS:
        g = torch.Generator().manual_seed(0)
        r = measure(fn, make(g), dtype, g)
        r.update(kernel=name, dtype=str(dtype).replace("torch.", ""))
        rows.append(r)
        print(f"{name:26} {r['dtype']:9} {r['largest']:10.3g} {r['typical']:10.3g} {r['input_rounding']:10.3g} "
              f"{r['ratio']:8.1f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
