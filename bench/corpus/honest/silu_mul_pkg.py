# rnx-corpus-case: kernel=silu_mul expect=accept package=rnx_corpus_kernels
# Honest: silu(gate) * up from an installed kernel library, called as the library documents.
import rnx_corpus_kernels


def run(gate, up):
    return rnx_corpus_kernels.silu_mul(gate, up)
