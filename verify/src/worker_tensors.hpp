// Inside rnx-verify-worker: the tensor helpers every stage shares: inputs placed in a dtype, device and memory
// layout, and the errors and sizes the stages compare.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace rnx::verify::detail {

enum class layout { contiguous, strided, transposed };

// A copy of `base` in `dtype` on `device`, laid out as `l` (floating tensors; others keep their type).
at::Tensor place(const at::Tensor& base, at::ScalarType dtype, at::Device device, layout l);
// `place` of every tensor of `base`, contiguous.
std::vector<at::Tensor> place_all(const std::vector<at::Tensor>& base, at::ScalarType dtype, at::Device device);
// Every tensor of `base` as the float64 reference sees it: floating values rounded to `dtype`, then widened to
// float64 on `device` (others only moved there).
std::vector<at::Tensor> widen_all(const std::vector<at::Tensor>& base, at::ScalarType dtype, at::Device device);
// A clone of every tensor of `ts`: outputs kept past the candidate's next call.
std::vector<at::Tensor> clone_all(const std::vector<at::Tensor>& ts);
// Whether every floating tensor of `ts` holds only finite values.
bool all_finite(const std::vector<at::Tensor>& ts);
// Largest |a - b| over elements where b is finite; infinity where a is not finite but b is.
double max_error(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b);
// Largest |x| over the floating tensors of `ts`.
double max_abs(const std::vector<at::Tensor>& ts);
// The machine epsilon of a floating dtype.
double dtype_eps(at::ScalarType t);
// The largest prime below `v` (v - 1 where there is none above 2).
std::int64_t prev_prime(std::int64_t v);

}  // namespace rnx::verify::detail
