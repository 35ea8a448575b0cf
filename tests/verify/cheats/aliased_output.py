# rnx-verify-case: kernel=scale_add expect=reject check=output_aliasing
# Cheat: writes the result into its input and returns it, saving the output allocation the reference pays for.
import torch


def run(x, y):
    return x.mul_(2.0).add_(y).relu_()
