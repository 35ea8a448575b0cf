# For runner.fresh_inputs: right for its first 40 calls (the reference check, the warm-up), then it returns its
# input unchanged, as a kernel would that skips its work once it is called in a loop. Its timed calls must be caught.
calls = 0


def run(x):
    global calls
    calls += 1
    return x * 2 if calls <= 40 else x
