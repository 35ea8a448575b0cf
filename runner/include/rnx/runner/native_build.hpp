// Compiling .cpp / .cu kernels into shared libraries against the runner's own libtorch, cached by source hash.
#pragma once

#include "rnx/common/manifest.hpp"

#include <filesystem>
#include <string>

namespace rnx::runner {

// $RNX_CACHE_DIR, else $XDG_CACHE_HOME/rnx, else ~/.cache/rnx.
std::filesystem::path default_cache_dir();

// The compute architecture nvcc gets: `requested` when set ("sm_90"), else the visible GPU's (from
// nvidia-smi), else sm_90 (the H200 this product targets).
std::string choose_cuda_arch(const std::string& requested);

// Builds spec's .cpp (host compiler) or .cu (nvcc) with a generated wrapper that exposes the entry through a
// C ABI, and returns the shared library. The cache key is a SHA-256 of the source, the wrapper, the
// compiler command and the torch version, so an unchanged kernel is not rebuilt. A failed compile throws
// rnx::error(kernel_failed) with the compiler's last lines; a missing nvcc throws runtime_unavailable.
std::filesystem::path build_native_kernel(const kernel_spec& spec, const std::string& cuda_arch,
                                          const std::filesystem::path& cache_dir);

}  // namespace rnx::runner
