# A kernel of an installed Triton library (bench/corpus/packages/rnx_corpus_kernels, installed by
# bench/corpus/packages/install.py): RMSNorm over the last dimension with a weight, called as the library documents.
import rnx_corpus_kernels


def run(x, weight):
    return rnx_corpus_kernels.rms_norm(x, weight, 1e-6)
