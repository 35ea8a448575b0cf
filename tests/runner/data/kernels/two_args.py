# Test kernel: takes two tensors, for the wrong-arity test.
def run(a, b):
    return a + b
