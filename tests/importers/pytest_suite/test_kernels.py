"""A small pytest-benchmark suite for the importer's end-to-end test. RNX_TEST_SLOWDOWN=K repeats each kernel's
work K times: the deliberate slowdown the test must see."""
import os

import pytest

SLOWDOWN = max(1, int(os.environ.get("RNX_TEST_SLOWDOWN", "1")))


def dot(n):
    xs = range(n)
    return sum(x * x for x in xs)


@pytest.mark.parametrize("dtype", ["float64"])
@pytest.mark.parametrize("n", [2000])
def test_dot(benchmark, n, dtype):
    benchmark(lambda: [dot(n) for _ in range(SLOWDOWN)])


def test_sort(benchmark):
    data = list(range(3000, 0, -1))
    benchmark(lambda: [sorted(data) for _ in range(SLOWDOWN)])
