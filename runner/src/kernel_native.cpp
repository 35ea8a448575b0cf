// The native forms: a .cpp or .cu file compiled against this libtorch (native_build.hpp) and called through dlsym.
#include <Python.h>

#include "rnx/runner/kernel.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/runner/native_build.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/cuda.h>
#include <torch/script.h>

#ifdef RNX_RUNNER_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "kernel_forms.hpp"

namespace rnx::runner::detail {

namespace {

// ---- Native .cpp / .cu, compiled against this libtorch ----

using arity_fn = int (*)();
using invoke_fn = const char* (*)(const void*, void*);

class native_call final : public bound_call {
 public:
  native_call(const kernel_spec& spec, invoke_fn fn, std::vector<at::Tensor> inputs)
      : spec_(spec), fn_(fn), inputs_(std::move(inputs)) {}
  void invoke() override {
    out_.clear();
    if (const char* message = fn_(&inputs_, &out_)) kernel_call_failed(spec_, message, inputs_);
    out_.clear();
  }
  std::vector<at::Tensor> outputs() override {
    std::vector<at::Tensor> out;
    if (const char* message = fn_(&inputs_, &out)) kernel_call_failed(spec_, message, inputs_);
    return out;
  }
  std::unique_ptr<bound_call> with_inputs(const std::vector<at::Tensor>& inputs) override {
    return std::make_unique<native_call>(spec_, fn_, inputs);
  }

 private:
  const kernel_spec& spec_;
  invoke_fn fn_;
  std::vector<at::Tensor> inputs_;
  std::vector<at::Tensor> out_;
};

class native_kernel final : public kernel {
 public:
  native_kernel(const kernel_spec& spec, const load_options& options) : spec_(spec) {
    if (spec.kind() == kernel_kind::cuda && !torch::cuda::is_available()) {
      // Built only where it can run: nvcc's output cannot be loaded without a GPU driver anyway.
      unavailable_ = "a .cu kernel needs a CUDA device and none is available here";
      return;
    }
    std::filesystem::path library = build_native_kernel(
        spec, options.cuda_arch, options.cache_dir.empty() ? default_cache_dir() : options.cache_dir);
    handle_ = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      throw error(errc::kernel_failed,
                  "kernel \"" + spec.name + "\": cannot load the built " + library.string() + ": " + ::dlerror());
    }
    auto arity = reinterpret_cast<arity_fn>(::dlsym(handle_, "rnx_kernel_arity"));
    invoke_ = reinterpret_cast<invoke_fn>(::dlsym(handle_, "rnx_kernel_invoke"));
    if (!arity || !invoke_) throw error(errc::internal, library.string() + ": the generated entry points are missing");
    int params = arity();
    if (params != static_cast<int>(spec.inputs.size())) {
      std::string names;
      for (const auto& in : spec.inputs) names += (names.empty() ? "" : ", ") + in.name;
      throw error(errc::kernel_failed, "kernel \"" + spec.name + "\" (" + spec.path + "): wrong arity: entry '" +
                                           (spec.entry.empty() ? "run" : spec.entry) + "' takes " +
                                           std::to_string(params) + " argument(s) but the manifest declares " +
                                           std::to_string(spec.inputs.size()) + " input(s) (" + names +
                                           "); make the inputs table match the signature");
    }
  }
  ~native_kernel() override {
    // Left loaded on purpose: tensors returned by the kernel may hold deleters that live in the library.
  }

  kernel_form kind() const override { return spec_.kind() == kernel_kind::cuda ? kernel_form::cuda : kernel_form::cpp; }

  std::vector<at::Tensor> make_inputs(std::int64_t batch, at::ScalarType dtype, at::Device device,
                                      std::uint64_t seed) override {
    return runner::make_inputs(spec_.inputs, batch, dtype, device, seed);
  }
  bool standard_normal_inputs() const override { return true; }

  std::unique_ptr<bound_call> prepare(std::string_view runtime, const std::vector<at::Tensor>& inputs, at::ScalarType,
                                      at::Device device, std::uint64_t) override {
    if (!unavailable_.empty()) throw runtime_unavailable(unavailable_);
    if (runtime_kind_from_string(runtime) != runtime_kind::eager) {
      throw runtime_unavailable(std::string(runtime) + " applies to Python kernels; a compiled " +
                                std::string(to_string(kind())) +
                                " kernel runs natively (list runtimes = [\"eager\"] for this kernel)");
    }
    if (spec_.kind() == kernel_kind::cuda && !device.is_cuda()) {
      throw runtime_unavailable("a .cu kernel runs on CUDA devices only; set device = \"cuda\" for this kernel");
    }
    return std::make_unique<native_call>(spec_, invoke_, inputs);
  }

  std::vector<at::Tensor> reference(const std::vector<at::Tensor>& inputs, std::uint64_t) override {
    std::vector<at::Tensor> wide = to_float64(inputs);
    std::vector<at::Tensor> out;
    if (const char* message = invoke_(&wide, &out)) {
      kernel_call_failed(spec_,
                         std::string("float64 reference: ") + message +
                             " (the reference runs the kernel in float64; dispatch on float64 too, e.g. with "
                             "AT_DISPATCH_FLOATING_TYPES_AND2)",
                         wide);
    }
    return out;
  }

 private:
  const kernel_spec& spec_;
  void* handle_ = nullptr;
  invoke_fn invoke_ = nullptr;
  std::string unavailable_;
};

}  // namespace

std::unique_ptr<kernel> make_native_kernel(const kernel_spec& spec, const load_options& options) {
  return std::make_unique<native_kernel>(spec, options);
}

}  // namespace rnx::runner::detail
