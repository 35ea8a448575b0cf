#!/usr/bin/env python3
"""What a slow spell of this machine is made of: one-thread softmax, exp, max and sum over a (8, 64, 1024) float32
tensor under each of torch's CPU kernel sets (ATEN_CPU_CAPABILITY), a pure-Python loop, and the page faults and
preemptions of the softmax calls. A spell that slows the vector kernels but not the Python loop, with no faults and
no preemptions, is the host's doing (frequency or vector-unit throttling), not the process's.

    python3 bench/spell_probe.py
"""
import os
import resource
import subprocess
import sys
import time

CHILD = r"""
import resource, time, torch
torch.set_num_threads(1)
x = torch.randn(8, 64, 1024)
ops = [("softmax", lambda: torch.softmax(x, -1)), ("exp", lambda: x.exp()), ("max", lambda: x.max(-1)),
       ("sum", lambda: x.sum(-1))]
out = []
for name, f in ops:
    for _ in range(5):
        f()
    r0 = resource.getrusage(resource.RUSAGE_THREAD)
    t = time.perf_counter()
    for _ in range(50):
        f()
    ms = (time.perf_counter() - t) / 50 * 1e3
    r1 = resource.getrusage(resource.RUSAGE_THREAD)
    out.append(f"{name} {ms:.3f} ms (faults {r1.ru_minflt - r0.ru_minflt}, preempted {r1.ru_nivcsw - r0.ru_nivcsw})")
print(torch.backends.cpu.get_cpu_capability() + ": " + ", ".join(out))
"""


def main():
    t = time.perf_counter()
    s = 0
    for i in range(3_000_000):
        s += i
    print(f"python loop of 3M additions: {time.perf_counter() - t:.3f} s")
    with open("/proc/stat") as f:
        print("cpu line of /proc/stat (user nice system idle iowait irq softirq steal):", f.readline().split()[1:9])
    for capability in ("default", "avx2", "avx512"):
        env = {**os.environ, "ATEN_CPU_CAPABILITY": capability}
        subprocess.run([sys.executable, "-c", CHILD], env=env, check=True)


if __name__ == "__main__":
    main()
