// Loading a kernel, making its inputs, binding it to a runtime, and checking outputs: what the verifier and
// optimizer reuse from the runner.
//
//   rnx::manifest m = rnx::load_manifest("rnx.toml");
//   const rnx::kernel_spec& spec = *m.find_kernel("softmax");
//   auto k = rnx::runner::load_kernel(spec);                       // .py, KernelBench .py, .pt, .cpp or .cu
//   at::Device dev = rnx::runner::resolve_device("auto");
//   std::uint64_t seed = rnx::runner::config_seed(0, spec.name, 8);
//   auto inputs = k->make_inputs(8, at::kFloat, dev, seed);        // from the declared shapes, B = 8
//   auto call = k->prepare("eager", inputs, at::kFloat, dev, seed);
//   auto check = rnx::runner::compare_outputs(call->outputs(), k->reference(inputs, seed),
//                                             rnx::default_tolerance("float32"));
//   call->invoke();                                                // one call, output discarded
#pragma once

#include "rnx/common/manifest.hpp"
#include "rnx/runner/python.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>  // at::set_num_threads: callers fix the thread count as the runner does

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::runner {

// "float32" -> at::kFloat, ...; throws rnx::error(invalid) naming the dtype otherwise.
at::ScalarType parse_dtype(std::string_view name);
std::string_view dtype_name(at::ScalarType type);

// "auto" -> cuda:0 when CUDA is available, else cpu; "cuda"/"cuda:N" without a usable GPU throws
// runtime_unavailable (the configuration is skipped, with the reason).
at::Device resolve_device(std::string_view spec);

// The seed of one configuration's inputs: the same kernel and batch get the same values in every dtype,
// runtime and process, so runtimes are compared on identical data.
std::uint64_t config_seed(std::uint64_t base, std::string_view kernel, std::int64_t batch);

// A random generator of its own for `device` (never torch's default one, whose state the kernel may use), seeded
// with `seed`: the CPU's Mersenne Twister, or on CUDA the device's Philox generator, so values are drawn where they
// are used (drawing 33 M floats on one CPU thread and copying them took about 0.2 s a tensor).
at::Generator seeded_generator(at::Device device, std::uint64_t seed);

// Fresh tensors for declared shapes: standard normal values drawn in float32 on `device` from
// seeded_generator(device, seed) (the same values in every process and on every device of one kind; CPU and CUDA
// values differ), then converted to dtype.
std::vector<at::Tensor> make_inputs(const std::vector<input_spec>& specs, std::int64_t batch, at::ScalarType dtype,
                                    at::Device device, std::uint64_t seed);

// A kernel bound to one runtime and one set of inputs, called repeatedly by the timer.
class bound_call {
 public:
  virtual ~bound_call() = default;
  virtual void invoke() = 0;                      // one call; the result is dropped at once
  virtual std::vector<at::Tensor> outputs() = 0;  // one call; the result as tensors, for checking
  // What the call owns besides its inputs and may move to new memory: a module's parameters and buffers (eager
  // and torch.compile Python modules, TorchScript files); empty where there is nothing to move.
  virtual std::vector<at::Tensor> state() { return {}; }
  // The same kernel, runtime and state (a module's weights, a compiled or traced form) bound to other inputs of
  // the same shapes, dtypes and device: the pool of fresh inputs (timed_calls.hpp). Throws runtime_unavailable
  // where the runtime holds copies of its inputs that new values would not reach.
  virtual std::unique_ptr<bound_call> with_inputs(const std::vector<at::Tensor>& inputs) = 0;
};

// Moves the state of two calls of one process to new memory, interleaved (first's tensor 0, second's tensor 0,
// first's tensor 1, ...), values unchanged. On the H200 the module whose weights were allocated first ran ~1%
// slower than an identical one allocated second, in every process (bench/gpu_probe/placement_probe.py: B/A
// 0.991 built in order, 1.0003 after this move), so an in-process pair would measure the allocation order.
// Returns how many tensors moved.
std::size_t rehome_state(bound_call& first, bound_call& second);

// What a loaded kernel is, which decides how its inputs and weights are made. A .py file is a function or a
// KernelBench model by the one rule of runner/python/rnx_support.py (find_entry), which `rnx verify` shares; the
// other forms come from the file's extension.
enum class kernel_form { function, kernelbench, torchscript, cpp, cuda };
std::string_view to_string(kernel_form form);  // "function", "kernelbench", "torchscript", "cpp", "cuda"
std::optional<kernel_form> kernel_form_from_string(std::string_view name);
// The form of a .py file loaded by rnx_support.load or rnx_verify.load (its `kind`): function or kernelbench;
// throws rnx::error(internal) for anything else.
kernel_form loaded_form(PyObject* loaded);

// Tensors to Python and back, for the Python halves of the runner and the verifier: a new list or tuple holding
// the tensors, and a list's tensors (throws rnx::error(kernel_failed), naming `what`, for anything else in it).
enum class python_sequence { list, tuple };
py_ref tensors_to_python(const std::vector<at::Tensor>& tensors, python_sequence sequence = python_sequence::list);
std::vector<at::Tensor> tensors_from_list(PyObject* list, const std::string& what);

struct load_options {
  std::string cuda_arch;                      // "sm_90"; empty = the visible GPU's, else sm_90
  std::filesystem::path cache_dir;            // compiled .cpp/.cu kernels; empty = default_cache_dir()
  std::string module_prefix = "rnx_kernel_";  // Python module name = prefix + kernel name (two revisions in one
                                              // process need distinct prefixes)
};

class kernel {
 public:
  virtual ~kernel() = default;
  virtual kernel_form kind() const = 0;
  virtual std::vector<at::Tensor> make_inputs(std::int64_t batch, at::ScalarType dtype, at::Device device,
                                              std::uint64_t seed) = 0;
  // True when make_inputs is the declared shapes' maker (runner::make_inputs above): every element of every input
  // i.i.d. standard normal, drawn in float32 and converted. fresh_inputs then redraws by an exact rotation of two
  // normal reservoirs rather than by the maker (timed_calls.hpp). False for get_inputs(), whose law is the file's.
  virtual bool standard_normal_inputs() const { return false; }
  // Throws runtime_unavailable when the runtime cannot run this kind of kernel or on this machine, and
  // rnx::error(kernel_failed) when the kernel itself fails (arity, export errors, ...).
  virtual std::unique_ptr<bound_call> prepare(std::string_view runtime, const std::vector<at::Tensor>& inputs,
                                              at::ScalarType dtype, at::Device device, std::uint64_t seed) = 0;
  // The float64 eager result on the same inputs (converted to float64); KernelBench files use Model.
  virtual std::vector<at::Tensor> reference(const std::vector<at::Tensor>& inputs, std::uint64_t seed) = 0;
  // The work of one call of the eager reference on `inputs` in `dtype` (source counted; docs/manifest.md, work):
  // torch's FLOP counter over the call, and the bytes of the inputs, weights and outputs with each distinct storage
  // once. nullopt where there is no eager Python form to count (TorchScript, C++ and CUDA kernels).
  virtual std::optional<work_info> count_work(const std::vector<at::Tensor>& /*inputs*/, at::ScalarType /*dtype*/,
                                              at::Device /*device*/, std::uint64_t /*seed*/) {
    return std::nullopt;
  }
  // Python modules the kernel imported from beside its file (helpers); two revisions sharing a process would
  // share these under one name, so such kernels are not paired in-process.
  virtual std::vector<std::string> local_modules() const { return {}; }
};

// Loads by the spec's kind; errors are rnx::error(kernel_failed) / (not_found) naming the file and entry.
std::unique_ptr<kernel> load_kernel(const kernel_spec& spec, const load_options& options = {});

struct check_result {
  bool ok = true;
  double max_abs_err = 0;
  double rel_err = 0;  // max |out - ref| / max |ref| over all outputs
  std::string message;
};

// torch.testing.assert_close's rule (|out - ref| <= atol + rtol * |ref|, NaN never equal) on every output.
check_result compare_outputs(const std::vector<at::Tensor>& out, const std::vector<at::Tensor>& ref, tolerance tol);

}  // namespace rnx::runner
