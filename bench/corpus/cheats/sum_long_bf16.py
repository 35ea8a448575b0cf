# rnx-corpus-case: kernel=sum_long expect=reject check=smoke
# Cheat: sums the rows after rounding them to bfloat16 (torch accumulates in float32, so only the inputs lose
# precision): half the memory to read. A million terms each off by up to 2^-9 of its value move the sum by about 1,
# ten times the accumulation allowance a float32 sum of that length gets, so it stays rejected.
import torch


def run(x):
    return x.to(torch.bfloat16).sum(dim=-1, dtype=torch.float32)
