// Kernel kinds (.py function, KernelBench .py, TorchScript .pt, .cpp/.cu), inputs, and the reference check.
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

namespace rnx::runner {

std::string_view to_string(kernel_form form) {
  switch (form) {
    case kernel_form::function: return "function";
    case kernel_form::kernelbench: return "kernelbench";
    case kernel_form::torchscript: return "torchscript";
    case kernel_form::cpp: return "cpp";
    case kernel_form::cuda: return "cuda";
  }
  return "function";
}

std::optional<kernel_form> kernel_form_from_string(std::string_view name) {
  return enum_from_name(name, {kernel_form::function, kernel_form::kernelbench, kernel_form::torchscript,
                               kernel_form::cpp, kernel_form::cuda});
}

kernel_form loaded_form(PyObject* loaded) {
  py_ref kind = py_ref::steal(PyObject_GetAttrString(loaded, "kind"));
  const char* text = kind ? PyUnicode_AsUTF8(kind.get()) : nullptr;
  if (!text) PyErr_Clear();
  auto form = kernel_form_from_string(text ? text : "");
  if (form != kernel_form::function && form != kernel_form::kernelbench) {
    throw error(errc::internal, std::string("the Python loader gave the kind '") + (text ? text : "") +
                                    "'; rnx_support.py and the runner disagree (rebuild both from one checkout)");
  }
  return *form;
}

py_ref tensors_to_python(const std::vector<at::Tensor>& tensors, python_sequence sequence) {
  const auto n = static_cast<Py_ssize_t>(tensors.size());
  py_ref out = py_ref::steal(sequence == python_sequence::tuple ? PyTuple_New(n) : PyList_New(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = THPVariable_Wrap(tensors[static_cast<std::size_t>(i)]);
    if (sequence == python_sequence::tuple) {
      PyTuple_SET_ITEM(out.get(), i, item);
    } else {
      PyList_SET_ITEM(out.get(), i, item);
    }
  }
  return out;
}

std::vector<at::Tensor> tensors_from_list(PyObject* list, const std::string& what) {
  std::vector<at::Tensor> out;
  if (!PyList_Check(list)) throw error(errc::kernel_failed, what + " did not give a list of tensors");
  for (Py_ssize_t i = 0; i < PyList_Size(list); ++i) {
    PyObject* item = PyList_GetItem(list, i);
    if (!THPVariable_Check(item)) {
      throw error(errc::kernel_failed,
                  what + " gave a " + std::string(Py_TYPE(item)->tp_name) + " where a tensor belongs");
    }
    out.push_back(THPVariable_Unpack(item));
  }
  return out;
}

at::ScalarType parse_dtype(std::string_view name) {
  switch (dtype_kind_from_string(name).value_or(dtype_kind::none)) {
    case dtype_kind::float32: return at::kFloat;
    case dtype_kind::float16: return at::kHalf;
    case dtype_kind::bfloat16: return at::kBFloat16;
    case dtype_kind::float64: return at::kDouble;
    case dtype_kind::none: break;
  }
  throw error(errc::invalid,
              "unsupported dtype \"" + std::string(name) + "\" (use float32, float16, bfloat16 or float64)");
}

std::string_view dtype_name(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return to_string(dtype_kind::float32);
    case at::kHalf: return to_string(dtype_kind::float16);
    case at::kBFloat16: return to_string(dtype_kind::bfloat16);
    case at::kDouble: return to_string(dtype_kind::float64);
    default: return "other";
  }
}

at::Device resolve_device(std::string_view spec) {
  const bool has_cuda = torch::cuda::is_available();
  const auto kind = device_kind_from_string(spec);
  if (!kind) throw error(errc::invalid, "unknown device \"" + std::string(spec) + "\" (use auto, cpu, cuda or cuda:N)");
  if (kind == device_kind::cpu) return at::Device(at::kCPU);
  if (kind == device_kind::automatic) return has_cuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  if (!has_cuda) {
    throw runtime_unavailable("device " + std::string(spec) +
                              ": CUDA is not available here (no GPU, or a CPU-only torch); run on a GPU machine "
                              "or set device = \"cpu\"");
  }
  int index = 0;
  if (spec.size() > 5) index = std::stoi(std::string(spec.substr(5)));
  if (index >= static_cast<int>(torch::cuda::device_count())) {
    throw runtime_unavailable("device " + std::string(spec) + ": only " + std::to_string(torch::cuda::device_count()) +
                              " GPU(s) are visible");
  }
  return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index));
}

std::uint64_t config_seed(std::uint64_t base, std::string_view kernel, std::int64_t batch) {
  // FNV-1a over the name, then a splitmix64 finish: stable across platforms and runs.
  std::uint64_t h = 1469598103934665603ULL ^ base;
  for (char c : kernel) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  h ^= static_cast<std::uint64_t>(batch) * 0x9E3779B97F4A7C15ULL;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
  return (h ^ (h >> 31)) & 0x7FFFFFFFFFFFFFFFULL;  // torch seeds are signed in Python
}

at::Generator seeded_generator(at::Device device, std::uint64_t seed) {
#ifdef RNX_RUNNER_CUDA
  if (device.is_cuda()) {
    at::Generator gen =
        at::cuda::detail::createCUDAGenerator(device.has_index() ? device.index() : c10::cuda::current_device());
    gen.set_current_seed(seed);
    return gen;
  }
#endif
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

std::vector<at::Tensor> make_inputs(const std::vector<input_spec>& specs, std::int64_t batch, at::ScalarType dtype,
                                    at::Device device, std::uint64_t seed) {
  at::Generator gen = seeded_generator(device, seed);
  std::vector<at::Tensor> out;
  out.reserve(specs.size());
  for (const auto& spec : specs) {
    at::Tensor t = at::randn(spec.resolve(batch), gen, at::TensorOptions().dtype(at::kFloat).device(gen.device()));
    out.push_back(t.to(dtype).contiguous());
  }
  return out;
}

namespace {

std::string shape_text(const at::Tensor& t) {
  std::ostringstream os;
  os << "[";
  for (std::int64_t i = 0; i < t.dim(); ++i) os << (i ? ", " : "") << t.size(i);
  os << "]";
  return os.str();
}

std::string describe_inputs(const std::vector<input_spec>& specs, const std::vector<at::Tensor>& inputs) {
  std::string out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    out += (i ? ", " : "") + (i < specs.size() ? specs[i].name : "input" + std::to_string(i)) + "=" +
           shape_text(inputs[i]);
  }
  return out;
}

std::string device_text(at::Device d) { return d.str(); }

std::vector<at::Tensor> to_float64(const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> out;
  out.reserve(inputs.size());
  for (const auto& t : inputs) out.push_back(t.is_floating_point() ? t.to(at::kDouble) : t);
  return out;
}

[[noreturn]] void kernel_call_failed(const kernel_spec& spec, const std::string& message,
                                     const std::vector<at::Tensor>& inputs) {
  throw error(errc::kernel_failed, "kernel \"" + spec.name + "\" (" + spec.path + ") failed: " + message +
                                       " [inputs: " + describe_inputs(spec.inputs, inputs) + "]");
}

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
    if (!kernelbench_) {
      py_ref names = py_ref::steal(PyList_New(0));
      for (const auto& in : spec.inputs) {
        py_ref s = py_ref::steal(PyUnicode_FromString(in.name.c_str()));
        PyList_Append(names.get(), s.get());
      }
      py_ref check_args = py_ref::steal(PyTuple_Pack(2, loaded_.get(), names.get()));
      py_ref message = call_support("check_arity", check_args.get());
      if (message.get() != Py_None) {
        throw error(errc::kernel_failed,
                    "kernel \"" + spec.name + "\" (" + spec.path + "): " + PyUnicode_AsUTF8(message.get()));
      }
    }
  }

  kernel_form kind() const override { return kernelbench_ ? kernel_form::kernelbench : kernel_form::function; }

  std::vector<at::Tensor> make_inputs(std::int64_t batch, at::ScalarType dtype, at::Device device,
                                      std::uint64_t seed) override {
    if (!kernelbench_) return runner::make_inputs(spec_.inputs, batch, dtype, device, seed);
    py_ref args = py_ref::steal(
        Py_BuildValue("(OLK)", loaded_.get(), static_cast<long long>(batch), static_cast<unsigned long long>(seed)));
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
    if (!PyArg_ParseTuple(counts.get(), "LL", &flops, &bytes)) kernel_call_failed(spec_, take_python_error(), inputs);
    return work_info{flops, bytes, work_source::counted};
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
  const kernel_spec& spec_;
  py_ref loaded_;
  bool kernelbench_ = false;
};

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

std::unique_ptr<kernel> load_kernel(const kernel_spec& spec, const load_options& options) {
  if (!std::filesystem::exists(spec.resolved_path)) {
    throw error(errc::not_found,
                "kernel \"" + spec.name + "\": file " + spec.resolved_path.string() + " does not exist");
  }
  if (spec.kind() == kernel_kind::python) return std::make_unique<python_kernel>(spec, options.module_prefix);
  if (spec.kind() == kernel_kind::torchscript) return std::make_unique<torchscript_kernel>(spec);
  if (spec.native()) return std::make_unique<native_kernel>(spec, options);
  throw error(errc::invalid, "kernel \"" + spec.name + "\": unsupported file type " + spec.path);
}

check_result compare_outputs(const std::vector<at::Tensor>& out, const std::vector<at::Tensor>& ref, tolerance tol) {
  check_result r;
  if (out.size() != ref.size()) {
    r.ok = false;
    r.max_abs_err = INFINITY;
    r.rel_err = INFINITY;
    r.message = "the kernel returned " + std::to_string(out.size()) + " output(s) but the float64 reference returned " +
                std::to_string(ref.size());
    return r;
  }
  double ref_max = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].sizes() != ref[i].sizes()) {
      r.ok = false;
      r.max_abs_err = INFINITY;
      r.rel_err = INFINITY;
      r.message = "output " + std::to_string(i) + " has shape " + shape_text(out[i]) + " but the reference has " +
                  shape_text(ref[i]);
      return r;
    }
    // On the reference's device: a GPU compares tens of millions of elements in float64 in milliseconds, the CPU
    // after a copy in about a second.
    at::Tensor e = ref[i].detach().to(at::kDouble);
    at::Tensor o = out[i].detach().to(e.device(), at::kDouble);
    at::Tensor diff = (o - e).abs();
    at::Tensor exact = o.eq(e);  // equal infinities count as close, as in torch.testing
    at::Tensor close = diff.le(tol.atol + tol.rtol * e.abs()).logical_or(exact);
    std::int64_t bad = close.logical_not().sum().item<std::int64_t>();
    at::Tensor finite_diff = diff.masked_fill(exact, 0);
    double max_abs = finite_diff.numel() ? finite_diff.nan_to_num(INFINITY, INFINITY).max().item<double>() : 0.0;
    r.max_abs_err = std::max(r.max_abs_err, max_abs);
    if (e.numel()) ref_max = std::max(ref_max, e.abs().nan_to_num(0, 0, 0).max().item<double>());
    if (bad > 0 && r.ok) {
      r.ok = false;
      at::Tensor flat = close.logical_not().flatten().nonzero();
      std::int64_t first = flat[0][0].item<std::int64_t>();
      std::ostringstream os;
      os.precision(6);
      os << "output " << i << ": " << bad << " of " << o.numel() << " elements outside rtol=" << tol.rtol
         << ", atol=" << tol.atol << "; first at flat index " << first << ": got " << o.flatten()[first].item<double>()
         << ", expected " << e.flatten()[first].item<double>();
      r.message = os.str();
    }
  }
  r.rel_err = ref_max > 0 ? r.max_abs_err / ref_max : r.max_abs_err;
  if (!r.ok) {
    std::ostringstream os;
    os.precision(3);
    os << " (max abs err " << r.max_abs_err << ", rel err " << r.rel_err << ")";
    r.message += os.str();
  }
  return r;
}

namespace {

// Hands the CUDA caching allocator's free blocks back to the driver, so the moved weights land in fresh segments
// rather than in what the float64 check just freed (which held one side's weights in a different place than the
// other's: a self-check of a large LayerNorm still read 1.0076 after the move alone).
void release_cached_blocks(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
#ifdef RNX_RUNNER_CUDA
  const auto on_cuda = [](const at::Tensor& t) { return t.is_cuda(); };
  if (std::any_of(a.begin(), a.end(), on_cuda) || std::any_of(b.begin(), b.end(), on_cuda)) {
    c10::cuda::device_synchronize();
    c10::cuda::CUDACachingAllocator::emptyCache();
  }
#else
  (void)a;
  (void)b;
#endif
}

}  // namespace

std::size_t rehome_state(bound_call& first, bound_call& second) {
  std::vector<at::Tensor> a = first.state();
  std::vector<at::Tensor> b = second.state();
  at::NoGradGuard no_grad;
  release_cached_blocks(a, b);
  std::size_t moved = 0;
  // The new copy is made while the old memory is still held, so it cannot land where the old one was.
  auto move = [&moved](at::Tensor& t) {
    t.set_data(t.detach().clone());
    ++moved;
  };
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i < a.size()) move(a[i]);
    if (i < b.size()) move(b[i]);
  }
  return moved;
}

}  // namespace rnx::runner
