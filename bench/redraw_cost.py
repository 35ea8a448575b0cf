#!/usr/bin/env python3
"""What a fresh-inputs redraw costs against the kernel's own call, side by side in one process (docs/runner.md,
fresh inputs): a normal draw per element (what the maker does), the rotation of two normal reservoirs that
declared shapes now get (the same tensor operations the runner issues: two rolled runs per reservoir, scaled and
added into a zeroed set), and the attention example's call on those inputs. CPU, torch's default threads.

    python3 bench/redraw_cost.py [--batch 4] [--repeats 200]
"""
import argparse
import json
import math
import time

import torch


def per_call_ms(fn, repeats):
    fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats * 1e3


def add_rolled(out, src, offset, c):
    n = out.numel()
    for at_out, at_src, length in ((0, offset, n - offset), (n - offset, 0, offset)):
        if length > 0:
            out.narrow(0, at_out, length).add_(src.narrow(0, at_src, length), alpha=c)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    shape = (args.batch, 8, 128, 64)
    gen = torch.Generator().manual_seed(1)
    sets = [torch.randn(shape, generator=gen) for _ in range(3)]
    reservoirs = [(torch.randn(t.numel(), generator=gen), torch.randn(t.numel(), generator=gen)) for t in sets]
    rng = torch.Generator().manual_seed(2)

    def draw():
        for t in sets:
            t.copy_(torch.randn(shape, generator=gen))

    def rotate():
        for t, (a, b) in zip(sets, reservoirs):
            angle, j, k = (torch.rand(3, generator=rng) * torch.tensor([2 * math.pi, t.numel(), t.numel()])).tolist()
            flat = t.view(-1).zero_()
            add_rolled(flat, a, int(j), math.cos(angle))
            add_rolled(flat, b, int(k), math.sin(angle))

    q, k, v = sets

    def call():
        torch.softmax(q @ k.transpose(-1, -2) / 8, -1) @ v

    row = {"batch": args.batch, "threads": torch.get_num_threads(), "draw_ms": per_call_ms(draw, args.repeats),
           "rotate_ms": per_call_ms(rotate, args.repeats), "call_ms": per_call_ms(call, args.repeats)}
    row["draw_over_rotate"] = row["draw_ms"] / row["rotate_ms"]
    print(json.dumps({key: round(value, 4) if isinstance(value, float) else value for key, value in row.items()}))


if __name__ == "__main__":
    main()
