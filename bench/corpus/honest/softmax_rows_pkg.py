# rnx-corpus-case: kernel=softmax_rows expect=accept package=rnx_corpus_kernels
# Honest: the row softmax from an installed kernel library, called as the library documents.
import rnx_corpus_kernels


def run(x):
    return rnx_corpus_kernels.softmax(x)
