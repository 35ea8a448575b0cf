// The Python kernel forms: a function (`run`) or a KernelBench Model, loaded by runner/python/rnx_support.py.
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

// ---- Python: a function or a KernelBench Model ----

class python_call final : public bound_call {
 public:
  python_call(const kernel_spec& spec, py_ref call, py_ref convert, std::vector<at::Tensor> inputs)
      : spec_(spec), call_(std::move(call)), convert_(std::move(convert)), inputs_(std::move(inputs)) {}

  void invoke() override {
    PyObject* result = PyObject_CallNoArgs(call_.get());
    if (!result) kernel_call_failed(spec_, take_python_error(), inputs_);
    Py_DECREF(result);
  }

  std::vector<at::Tensor> outputs() override {
    py_ref result = py_ref::steal(PyObject_CallNoArgs(call_.get()));
    if (!result) kernel_call_failed(spec_, take_python_error(), inputs_);
    py_ref list = py_ref::steal(PyObject_CallOneArg(convert_.get(), result.get()));
    if (!list) kernel_call_failed(spec_, take_python_error(), inputs_);
    return tensors_from_list(list.get(), "kernel \"" + spec_.name + "\"");
  }

  std::vector<at::Tensor> state() override {
    py_ref args = py_ref::steal(PyTuple_Pack(1, call_.get()));
    py_ref list = call_support("state_tensors", args.get());
    return tensors_from_list(list.get(), "the state of kernel \"" + spec_.name + "\"");
  }

  std::unique_ptr<bound_call> with_inputs(const std::vector<at::Tensor>& inputs) override {
    py_ref list = tensors_to_python(inputs);
    py_ref args = py_ref::steal(PyTuple_Pack(2, call_.get(), list.get()));
    py_ref call;
    try {
      call = call_support("rebind", args.get());
    } catch (const error& e) {
      kernel_call_failed(spec_, std::string("binding other inputs: ") + e.what(), inputs);
    }
    return std::make_unique<python_call>(spec_, std::move(call), convert_, inputs);
  }

 private:
  const kernel_spec& spec_;
  py_ref call_;
  py_ref convert_;
  std::vector<at::Tensor> inputs_;
};

class python_kernel final : public kernel {
 public:
  python_kernel(const kernel_spec& spec, const std::string& module_prefix) : spec_(spec) {
    ensure_python();
    std::string module_name = module_prefix + spec.name;
    for (char& c : module_name) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    py_ref args =
        py_ref::steal(Py_BuildValue("(sss)", spec.resolved_path.c_str(), spec.entry.c_str(), module_name.c_str()));
    try {
      loaded_ = call_support("load", args.get());
    } catch (const error& e) {
      throw error(errc::kernel_failed, "kernel \"" + spec.name + "\": loading " + spec.path + " failed: " + e.what());
    }
    kernelbench_ = loaded_form(loaded_.get()) == kernel_form::kernelbench;
    if (!kernelbench_ && spec.inputs.empty()) {
      throw error(errc::kernel_failed, "kernel \"" + spec.name + "\": " + spec.path +
                                           " declares no inputs; add inputs = { x = \"B,1024\" } to its [[kernel]] "
                                           "(only KernelBench files with get_inputs() may omit them)");
    }
    if (!kernelbench_) bind_inputs_by_name();
  }

  kernel_form kind() const override { return kernelbench_ ? kernel_form::kernelbench : kernel_form::function; }
  bool standard_normal_inputs() const override { return !kernelbench_; }

  std::vector<at::Tensor> make_inputs(std::int64_t batch, at::ScalarType dtype, at::Device device,
                                      std::uint64_t seed) override {
    if (!kernelbench_) return runner::make_inputs(spec_.inputs, batch, dtype, device, seed);
    py_ref args = py_ref::steal(Py_BuildValue("(OLKs)", loaded_.get(), static_cast<long long>(batch),
                                              static_cast<unsigned long long>(seed), device.str().c_str()));
    py_ref list;
    try {
      list = call_support("kernelbench_inputs", args.get());
    } catch (const error& e) {
      throw error(errc::kernel_failed, "kernel \"" + spec_.name + "\": get_inputs() failed: " + e.what());
    }
    std::vector<at::Tensor> out;
    for (const auto& t : tensors_from_list(list.get(), "get_inputs() of " + spec_.path)) {
      out.push_back(t.is_floating_point() ? t.to(device, dtype).contiguous() : t.to(device));
    }
    return out;
  }

  std::unique_ptr<bound_call> prepare(std::string_view runtime, const std::vector<at::Tensor>& inputs,
                                      at::ScalarType dtype, at::Device device, std::uint64_t seed) override {
    py_ref list = tensors_to_python(inputs);
    py_ref args = py_ref::steal(Py_BuildValue("(OsOssK)", loaded_.get(), std::string(runtime).c_str(), list.get(),
                                              std::string(dtype_name(dtype)).c_str(), device_text(device).c_str(),
                                              static_cast<unsigned long long>(seed)));
    py_ref pair;
    try {
      pair = call_support("prepare", args.get());
    } catch (const error& e) {
      kernel_call_failed(spec_, std::string(runtime) + " preparation: " + e.what(), inputs);
    }
    return std::make_unique<python_call>(spec_, py_ref::borrow(PyTuple_GetItem(pair.get(), 0)),
                                         py_ref::borrow(PyTuple_GetItem(pair.get(), 1)), inputs);
  }

  std::vector<at::Tensor> reference(const std::vector<at::Tensor>& inputs, std::uint64_t seed) override {
    std::vector<at::Tensor> wide = to_float64(inputs);
    at::Device device = inputs.empty() ? at::Device(at::kCPU) : inputs.front().device();
    py_ref args = py_ref::steal(
        Py_BuildValue("(OsK)", loaded_.get(), device_text(device).c_str(), static_cast<unsigned long long>(seed)));
    py_ref fn = call_support("reference", args.get());
    py_ref list = tensors_to_python(wide);
    py_ref tuple = py_ref::steal(PyList_AsTuple(list.get()));
    py_ref result = py_ref::steal(PyObject_CallObject(fn.get(), tuple.get()));
    if (!result) kernel_call_failed(spec_, "float64 reference: " + take_python_error(), wide);
    py_ref module = py_ref::borrow(support_module());
    py_ref to_list = py_ref::steal(PyObject_GetAttrString(module.get(), "tensors_of"));
    py_ref tensors = py_ref::steal(PyObject_CallOneArg(to_list.get(), result.get()));
    if (!tensors) kernel_call_failed(spec_, "float64 reference: " + take_python_error(), wide);
    return tensors_from_list(tensors.get(), "the float64 reference of \"" + spec_.name + "\"");
  }

  std::optional<work_info> count_work(const std::vector<at::Tensor>& inputs, at::ScalarType dtype, at::Device device,
                                      std::uint64_t seed) override {
    py_ref list = tensors_to_python(inputs);
    py_ref args =
        py_ref::steal(Py_BuildValue("(OOssK)", loaded_.get(), list.get(), std::string(dtype_name(dtype)).c_str(),
                                    device_text(device).c_str(), static_cast<unsigned long long>(seed)));
    py_ref counts = call_support("count_work", args.get());
    long long flops = 0;
    long long bytes = 0;
    long long elementwise = 0;
    if (!PyArg_ParseTuple(counts.get(), "LLL", &flops, &bytes, &elementwise)) {
      kernel_call_failed(spec_, take_python_error(), inputs);
    }
    return work_info{flops, bytes, work_source::counted, elementwise};
  }

  std::vector<std::string> local_modules() const override {
    std::vector<std::string> out;
    py_ref list = py_ref::steal(PyObject_GetAttrString(loaded_.get(), "local_modules"));
    if (!list || !PyList_Check(list.get())) {
      PyErr_Clear();
      return out;
    }
    for (Py_ssize_t i = 0; i < PyList_Size(list.get()); ++i) {
      if (const char* name = PyUnicode_AsUTF8(PyList_GetItem(list.get(), i))) out.emplace_back(name);
    }
    return out;
  }

 private:
  // The declared inputs in the order of the entry's parameters, matched by name (rnx_support.input_order): a
  // manifest's `{ b = ..., a = ... }` for `def run(a, b)` gives `a` its own shape. A name that is no parameter, or a
  // required parameter with no input, is the kernel's error naming both lists.
  void bind_inputs_by_name() {
    py_ref names = py_ref::steal(PyList_New(0));
    for (const auto& in : spec_.inputs) {
      py_ref s = py_ref::steal(PyUnicode_FromString(in.name.c_str()));
      PyList_Append(names.get(), s.get());
    }
    py_ref args = py_ref::steal(PyTuple_Pack(2, loaded_.get(), names.get()));
    py_ref result = call_support("input_order", args.get());
    PyObject* order = PyTuple_GetItem(result.get(), 0);
    PyObject* message = PyTuple_GetItem(result.get(), 1);
    if (message && message != Py_None) {
      throw error(errc::kernel_failed,
                  "kernel \"" + spec_.name + "\" (" + spec_.path + "): " + PyUnicode_AsUTF8(message));
    }
    if (!order || order == Py_None) return;
    std::vector<input_spec> bound;
    for (Py_ssize_t i = 0; i < PyList_Size(order); ++i) {
      bound.push_back(spec_.inputs.at(static_cast<std::size_t>(PyLong_AsSsize_t(PyList_GetItem(order, i)))));
    }
    spec_.inputs = std::move(bound);
  }

  kernel_spec spec_;  // the manifest's, its inputs in the order of the entry's parameters
  py_ref loaded_;
  bool kernelbench_ = false;
};

}  // namespace

std::unique_ptr<kernel> make_python_kernel(const kernel_spec& spec, const std::string& module_prefix) {
  return std::make_unique<python_kernel>(spec, module_prefix);
}

}  // namespace rnx::runner::detail
