# rnx-verify-case: kernel=attention expect=reject check=static_scan
# Cheat: claims a rewrite but imports the reference and calls it.
import attention


def run(q, k, v):
    return attention.run(q, k, v)
