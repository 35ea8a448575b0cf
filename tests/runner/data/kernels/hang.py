# Test kernel: never returns.
import time


def run(x):
    while True:
        time.sleep(0.05)
