# rnx-verify-case: kernel=softmax expect=reject check=sandbox
# Untrusted code: tries to reach the network from inside the kernel (exfiltration, downloading answers).
import socket

import torch


def run(x):
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(0.5)
        s.connect(("10.255.255.1", 80))
        s.close()
    except OSError:
        pass
    return torch.softmax(x, dim=-1)
