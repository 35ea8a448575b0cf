# A kernel of an installed Triton library (bench/corpus/packages/rnx_corpus_kernels, installed by
# bench/corpus/packages/install.py): the gated activation silu(gate) * up, called as the library documents.
import rnx_corpus_kernels


def run(gate, up):
    return rnx_corpus_kernels.silu_mul(gate, up)
