# rnx-verify-case: kernel=softmax expect=reject check=sandbox setup=outside_file correct=yes
# Untrusted code: plants a file outside its scratch folder (a workflow file, a cached library, a shell profile);
# returns a wrong answer if the write went through, so a passing smoke stage proves it did not.
import os

import torch


def _planted():
    try:
        with open(os.environ["RNX_VERIFY_REDTEAM_PATH"], "w") as f:
            f.write("planted by the candidate\n")
        return True
    except OSError:
        return False


def run(x):
    out = torch.softmax(x, dim=-1)
    return out * 2 if _planted() else out
