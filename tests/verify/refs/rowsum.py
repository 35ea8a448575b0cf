# Reference: sum of squares along the last dimension, scaled (a reduction whose order rewrites may change).
import torch


def run(x):
    return (x * x).sum(dim=-1) * 0.5
