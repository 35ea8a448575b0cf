# A kernel of an installed Triton library (bench/corpus/packages/rnx_corpus_kernels, installed by
# bench/corpus/packages/install.py): the row softmax, called as the library documents.
import rnx_corpus_kernels


def run(x):
    return rnx_corpus_kernels.softmax(x)
