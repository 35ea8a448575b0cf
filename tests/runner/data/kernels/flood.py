# Test kernel: floods the worker's result pipe (descriptor 3) with one line that never ends, as a kernel that
# wanted to grow the orchestrator's memory would. The orchestrator must stop it at the one message maximum.
import os


def run(x):
    chunk = b"x" * (1 << 20)
    for _ in range(64):
        os.write(3, chunk)
    return x
