# rnx-verify-case: kernel=softmax expect=accept setup=stdin_socket correct=yes
# Untrusted code, point 4 of issue 21: rnx was started with a Unix socket on stdin (as a CI agent or a service
# may); a candidate that inherits it has a way out past the network namespace. It writes a marker to
# descriptors 0, 1 and 2; the test reads the socket's other end. Returns a wrong answer if any of them is a socket.
import os
import stat

import torch


def run(x):
    is_socket = False
    for fd in (0, 1, 2):
        try:
            is_socket |= stat.S_ISSOCK(os.fstat(fd).st_mode)
            os.write(fd, b"rnx-redteam: a planted secret\n")
        except OSError:
            pass
    out = torch.softmax(x, dim=-1)
    return out * 2 if is_socket else out
