"""Probe: can the placement effect of in-process pairing (the module built first runs ~1% slower on the H200) be
cancelled inside one process? Two identical modules with weights, timed in ABBA/BAAB blocks with CUDA events and
an L2 flush before every call; the median of per-block ratios B/A for several ways of building them.

    python3 bench/gpu_probe/placement_probe.py --processes 6     (spawns one fresh process per repetition)

Strategies (each in its own fresh process, so every placement starts from an empty allocator):
  plain        A built, then B
  swapped      B built, then A (the ratio is still B/A)
  rehome       A and B built, then every parameter and buffer cloned into new memory, interleaved A, B, A, B ...
  rehome_rev   the same, interleaved B, A, B, A ...
  twins        each side built twice in the order A B B A; the blocks alternate between the pairs (A1,B1),(A2,B2)
"""
import json, os, statistics, subprocess, sys

STRATEGIES = os.environ.get("STRATEGIES", "plain,swapped,rehome,rehome_rev,twins").split(",")
MODULES = os.environ.get("MODULES", "layernorm,mlp,conv").split(",")


def child(strategy, module):
    import torch
    dev = torch.device("cuda")
    torch.manual_seed(0)
    L2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * L2 // 4, dtype=torch.float32, device=dev)
    if module == "layernorm":
        make = lambda: torch.nn.LayerNorm((64, 256, 256))
        x = torch.randn(16, 64, 256, 256, device=dev)
    elif module == "mlp":
        make = lambda: torch.nn.Sequential(torch.nn.Linear(4096, 8192), torch.nn.GELU(), torch.nn.Linear(8192, 4096))
        x = torch.randn(4096, 4096, device=dev)
    else:
        make = lambda: torch.nn.Sequential(torch.nn.Conv2d(64, 128, 3, padding=1), torch.nn.BatchNorm2d(128))
        x = torch.randn(32, 64, 128, 128, device=dev)

    def build():
        torch.manual_seed(1)
        return make().to(dev).eval()

    def rehome(first, second):
        ta = list(first.parameters()) + list(first.buffers())
        tb = list(second.parameters()) + list(second.buffers())
        for a, b in zip(ta, tb):
            a.data = a.data.clone()
            b.data = b.data.clone()

    pairs = []
    if strategy == "plain":
        A = build(); B = build(); pairs = [(A, B)]
    elif strategy == "swapped":
        B = build(); A = build(); pairs = [(A, B)]
    elif strategy == "rehome":
        A = build(); B = build(); rehome(A, B); pairs = [(A, B)]
    elif strategy == "rehome_rev":
        A = build(); B = build(); rehome(B, A); pairs = [(A, B)]
    elif strategy == "twins":
        A1 = build(); B1 = build(); B2 = build(); A2 = build(); pairs = [(A1, B1), (A2, B2)]

    def t(fn):
        flush.fill_(1.0)
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(x); e.record(); torch.cuda.synchronize()
        return s.elapsed_time(e)

    ratios = []
    with torch.no_grad():
        for A, B in pairs:
            for _ in range(5):
                A(x); B(x)
        torch.cuda.synchronize()
        for j in range(48):
            A, B = pairs[j % len(pairs)]
            a = b = 0.0
            for c in ("ABBA" if (j // len(pairs)) % 2 == 0 else "BAAB"):
                if c == "A": a += t(A)
                else: b += t(B)
            ratios.append(b / a)
        ms = statistics.median(t(pairs[0][0]) for _ in range(5))
    print(json.dumps({"ratio": statistics.median(ratios), "ms": ms}))


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3]); return
    n = int(sys.argv[sys.argv.index("--processes") + 1]) if "--processes" in sys.argv else 6
    res = {}
    for module in MODULES:
        for rep in range(n):
            order = STRATEGIES[rep % len(STRATEGIES):] + STRATEGIES[:rep % len(STRATEGIES)]
            for s in order:
                out = subprocess.run([sys.executable, __file__, "--child", s, module], capture_output=True, text=True)
                try:
                    r = json.loads(out.stdout.strip().splitlines()[-1])
                except Exception:
                    print(module, s, "failed:", out.stderr[-400:]); continue
                res.setdefault(module, {}).setdefault(s, []).append(r["ratio"])
                res[module].setdefault(s + "_ms", []).append(r["ms"])
        for s in STRATEGIES:
            v = res[module].get(s, [])
            if v:
                print(f"{module:10} {s:11} median {statistics.median(v):.4f}  per process " +
                      " ".join(f"{r:.4f}" for r in v), flush=True)
    if os.environ.get("OUT"):
        json.dump(res, open(os.path.join(os.environ["OUT"], "placement_probe.json"), "w"), indent=1)


main()
