# rnx-verify-case: kernel=softmax expect=review check=static_scan correct=yes
# Untrusted code (issue 20's Triton work lets a first call start processes): copies a program into its scratch
# folder and runs it. Programs run only from the system's and Python's folders (Landlock), never from what the
# candidate can write. Returns a wrong answer if it ran. (The static scan rejects the subprocess import; the
# correct answer shows that the program did not run.)
# (Since issue 44 the static scan alone asks for review, no longer rejects; the target left untouched and the
# correct answer show the containment.)
import os
import shutil
import subprocess

import torch


def run(x):
    ran = False
    shutil.copy("/bin/true", "mine")
    os.chmod("mine", 0o755)
    try:
        ran = subprocess.run([os.path.abspath("mine")]).returncode == 0
    except OSError:
        pass
    out = torch.softmax(x, dim=-1)
    return out * 2 if ran else out
