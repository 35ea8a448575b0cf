// The TorchScript form: a .pt file loaded with torch::jit::load.
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

// ---- TorchScript .pt ----

std::vector<at::Tensor> ivalue_tensors(const c10::IValue& v) {
  std::vector<at::Tensor> out;
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) {
      auto inner = ivalue_tensors(e);
      out.insert(out.end(), inner.begin(), inner.end());
    }
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) {
      auto inner = ivalue_tensors(e);
      out.insert(out.end(), inner.begin(), inner.end());
    }
  } else {
    throw error(errc::kernel_failed,
                "the TorchScript module returned " + v.tagKind() + "; return a tensor or a tuple/list of tensors");
  }
  return out;
}

class script_call final : public bound_call {
 public:
  script_call(const kernel_spec& spec, torch::jit::Module module, std::vector<at::Tensor> inputs)
      : spec_(spec), module_(std::move(module)), inputs_(std::move(inputs)) {
    for (const auto& t : inputs_) args_.emplace_back(t);
  }
  void invoke() override { run(); }
  std::vector<at::Tensor> outputs() override { return ivalue_tensors(run()); }
  std::vector<at::Tensor> state() override {
    std::vector<at::Tensor> out;
    for (const auto& p : module_.parameters()) out.push_back(p);
    for (const auto& b : module_.buffers()) out.push_back(b);
    return out;
  }
  std::unique_ptr<bound_call> with_inputs(const std::vector<at::Tensor>& inputs) override {
    return std::make_unique<script_call>(spec_, module_, inputs);  // a Module is a handle: the same module
  }

 private:
  c10::IValue run() {
    try {
      return module_.forward(args_);
    } catch (const c10::Error& e) {
      kernel_call_failed(spec_, e.what_without_backtrace(), inputs_);
    }
  }
  const kernel_spec& spec_;
  torch::jit::Module module_;
  std::vector<at::Tensor> inputs_;
  std::vector<c10::IValue> args_;
};

class torchscript_kernel final : public kernel {
 public:
  explicit torchscript_kernel(const kernel_spec& spec) : spec_(spec) {
    try {
      module_ = torch::jit::load(spec.resolved_path.string());
    } catch (const c10::Error& e) {
      throw error(errc::kernel_failed, "kernel \"" + spec.name + "\": " + spec.path +
                                           " is not a loadable TorchScript file (save it with torch.jit.save): " +
                                           e.what_without_backtrace());
    }
    if (spec.inputs.empty()) {
      throw error(errc::kernel_failed, "kernel \"" + spec.name +
                                           "\": a TorchScript kernel needs an inputs table "
                                           "such as inputs = { x = \"B,1024\" }");
    }
    auto method = module_.find_method("forward");
    if (!method) throw error(errc::kernel_failed, "kernel \"" + spec.name + "\": " + spec.path + " has no forward()");
    const auto& schema = method->function().getSchema();
    std::size_t params = schema.arguments().size() - 1;  // minus self
    if (params != spec.inputs.size()) {
      std::string names;
      for (const auto& in : spec.inputs) names += (names.empty() ? "" : ", ") + in.name;
      throw error(errc::kernel_failed, "kernel \"" + spec.name + "\" (" + spec.path + "): wrong arity: forward takes " +
                                           std::to_string(params) + " argument(s) but the manifest declares " +
                                           std::to_string(spec.inputs.size()) + " input(s) (" + names +
                                           "); make the inputs table match the signature");
    }
    module_.eval();
  }

  kernel_form kind() const override { return kernel_form::torchscript; }

  std::vector<at::Tensor> make_inputs(std::int64_t batch, at::ScalarType dtype, at::Device device,
                                      std::uint64_t seed) override {
    return runner::make_inputs(spec_.inputs, batch, dtype, device, seed);
  }
  bool standard_normal_inputs() const override { return true; }

  std::unique_ptr<bound_call> prepare(std::string_view runtime, const std::vector<at::Tensor>& inputs,
                                      at::ScalarType dtype, at::Device device, std::uint64_t) override {
    if (runtime_kind_from_string(runtime) != runtime_kind::torchscript) {
      throw runtime_unavailable(std::string(runtime) +
                                " does not apply to a TorchScript .pt file (it is already "
                                "compiled); list runtimes = [\"torchscript\"] for this kernel");
    }
    torch::jit::Module copy = module_.clone();
    copy.to(device, dtype);
    return std::make_unique<script_call>(spec_, std::move(copy), inputs);
  }

  std::vector<at::Tensor> reference(const std::vector<at::Tensor>& inputs, std::uint64_t) override {
    std::vector<at::Tensor> wide = to_float64(inputs);
    torch::jit::Module copy = module_.clone();
    copy.to(wide.empty() ? at::Device(at::kCPU) : wide.front().device(), at::kDouble);
    script_call call(spec_, std::move(copy), wide);
    return call.outputs();
  }

 private:
  const kernel_spec& spec_;
  torch::jit::Module module_;
};

}  // namespace

std::unique_ptr<kernel> make_torchscript_kernel(const kernel_spec& spec) {
  return std::make_unique<torchscript_kernel>(spec);
}

}  // namespace rnx::runner::detail
