# Test kernel: a matrix product, for the shape-mismatch test.
def run(a, b):
    return a @ b
