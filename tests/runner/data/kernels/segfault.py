# Test kernel: crashes the process with a segmentation fault (reads address 0).
import ctypes


def run(x):
    ctypes.string_at(0)
    return x
