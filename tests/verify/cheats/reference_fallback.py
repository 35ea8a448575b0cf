# rnx-verify-case: kernel=attention expect=review check=static_scan
# Cheat: claims a rewrite but imports the reference and calls it.
# Calls the reference instead of rewriting it: right, and no faster. Only the static scan sees it, and a source
# pattern alone is for a person to look at (review, issue 44); measured behaviour is what rejects.
import attention


def run(q, k, v):
    return attention.run(q, k, v)
