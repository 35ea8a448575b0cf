# Test kernel: raises a Python exception.
def run(x):
    raise ValueError("negative sizes are not supported")
