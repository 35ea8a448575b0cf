# rnx-verify-case: kernel=softmax expect=reject check=sandbox setup=unix_socket correct=yes
# Untrusted code: connects to a Unix socket outside its scratch folder (on a hosted runner that would be
# /var/run/docker.sock, which gives root and the network); returns a wrong answer if it got through, so a passing
# smoke stage proves the socket was out of reach.
import os
import socket

import torch


def _reached():
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(os.environ["RNX_VERIFY_REDTEAM_PATH"])
        s.sendall(b"hello from the candidate")
        s.close()
        return True
    except OSError:
        return False


def run(x):
    out = torch.softmax(x, dim=-1)
    return out * 2 if _reached() else out
