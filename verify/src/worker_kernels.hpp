// Inside rnx-verify-worker: the reference and candidate as callables on tensors, and the inputs they are fed.
#pragma once

#include "job_file.hpp"
#include "rnx/common/manifest.hpp"
#include "rnx/runner/kernel.hpp"
#include "rnx/runner/python.hpp"

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::verify::detail {

// Sizes that differ from the declared ones: for manifest inputs, declared size -> new size (every non-batch
// dimension of that size changes); for KernelBench files, module-level name -> value.
struct shape_variant {
  std::int64_t batch = 1;
  std::map<std::string, std::int64_t> dims;
  // Non-zero: a KernelBench model's parameters perturbed by this seed (rnx_verify.perturb_parameters), in an instance
  // of its own; 0: as built.
  std::uint64_t parameters_seed = 0;
  std::string label() const;
};

// One side (reference or candidate) as a function of tensors.
class verify_kernel {
 public:
  virtual ~verify_kernel() = default;
  // Calls the kernel once on `inputs` (already in `dtype`); throws rnx::error(kernel_failed) with the message.
  virtual std::vector<at::Tensor> call(const std::vector<at::Tensor>& inputs, at::ScalarType dtype,
                                       const shape_variant& shape) = 0;
  virtual runner::kernel_form kind() const = 0;
  // What building the instance of the last call did to its parameters (rnx_verify.parameters_note): "" as built,
  // "perturbed: NAMES", "none" (nothing to perturb) or "unmatched: WHY" (a candidate whose parameters are not the
  // reference's by name and shape, left as built).
  virtual std::string parameters_note() const { return ""; }
};

// The Python helper module (verify/python/rnx_verify.py), imported once into the runner's interpreter.
PyObject* verify_module();
runner::py_ref call_verify(const char* name, PyObject* args_tuple);  // throws rnx::error(kernel_failed)

// Which side of the comparison a file is: its name is the role rnx_verify.load is told and the start of messages.
enum class side_role { reference, candidate };
std::string_view to_string(side_role role);  // "reference", "candidate"

class kernel_pair {
 public:
  // Loads the reference (trusted) at once; the candidate only in load_candidate(), after the sandbox is sealed.
  kernel_pair(const side_spec& reference, std::vector<input_spec> inputs, at::Device device, std::uint64_t seed,
              std::filesystem::path cache_dir);
  void load_candidate(const side_spec& candidate);

  bool kernelbench() const { return kernelbench_; }
  bool has_batch() const { return has_batch_; }
  // Non-batch sizes the sweep may vary (declared size or module-level name -> its size).
  std::map<std::string, std::int64_t> variable_dims() const;

  // Fresh values for `shape` drawn from `seed` (float32 on the CPU for declared inputs; KernelBench's own).
  std::vector<at::Tensor> base_inputs(const shape_variant& shape, std::uint64_t seed);

  verify_kernel& reference() { return *reference_; }
  verify_kernel& candidate() { return *candidate_; }
  at::Device device() const { return device_; }

 private:
  std::unique_ptr<verify_kernel> load_side(const side_spec& side, side_role role);

  std::vector<input_spec> inputs_;
  at::Device device_;
  std::uint64_t seed_;
  std::filesystem::path cache_dir_;
  bool kernelbench_ = false;
  bool has_batch_ = true;
  std::map<std::string, std::int64_t> kb_dims_;
  runner::py_ref reference_loaded_;
  runner::py_ref candidate_loaded_;
  std::vector<std::unique_ptr<kernel_spec>> specs_;  // kept alive: runner kernels refer to their spec
  std::unique_ptr<verify_kernel> reference_;
  std::unique_ptr<verify_kernel> candidate_;
};

}  // namespace rnx::verify::detail
