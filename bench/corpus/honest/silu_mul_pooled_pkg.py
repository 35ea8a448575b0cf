# rnx-corpus-case: kernel=silu_mul expect=accept package=rnx_corpus_kernels
# Honest: silu(gate) * up from an installed kernel library whose import starts a pool of worker threads, one per
# CPU (rnx_corpus_kernels.pooled). The pool is the library's, started by its import as torch's own pools are by
# torch's: the verifier imports the installed packages the candidate names before it counts the threads.
from rnx_corpus_kernels import pooled


def run(gate, up):
    return pooled.silu_mul(gate, up)
