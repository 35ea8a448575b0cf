# rnx-verify-case: kernel=softmax expect=reject check=sandbox env=GITHUB_TOKEN=rnx-test-secret correct=yes
# Untrusted code: looks for the CI token in its environment and its parent's; returns a wrong answer if found,
# so a passing smoke stage proves the secret was out of reach.
# (The static scan sees the environment read and asks for review; the sandbox row rejects the /proc reads it tried.)
import os

import torch


def _find_secret():
    if os.environ.get("GITHUB_TOKEN"):
        return True
    try:
        with open(f"/proc/{os.getppid()}/environ", "rb") as f:
            return b"rnx-test-secret" in f.read()
    except OSError:
        return False


def run(x):
    out = torch.softmax(x, dim=-1)
    return out * 2 if _find_secret() else out
