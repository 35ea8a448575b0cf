# Test kernel: doubles its input (a correct, cheap kernel).
def run(x):
    return x * 2
