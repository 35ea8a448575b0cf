// Kernel forms and inputs: dtype and device names, seeds, declared inputs, and load_kernel, which hands a file to its
// form (kernel_python.cpp, kernel_torchscript.cpp, kernel_native.cpp); the reference check is kernel_compare.cpp,
// moving a pair's state kernel_rehome.cpp.
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

namespace detail {

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

}  // namespace detail

std::unique_ptr<kernel> load_kernel(const kernel_spec& spec, const load_options& options) {
  if (!std::filesystem::exists(spec.resolved_path)) {
    throw error(errc::not_found,
                "kernel \"" + spec.name + "\": file " + spec.resolved_path.string() + " does not exist");
  }
  if (spec.kind() == kernel_kind::python) return detail::make_python_kernel(spec, options.module_prefix);
  if (spec.kind() == kernel_kind::torchscript) return detail::make_torchscript_kernel(spec);
  if (spec.native()) return detail::make_native_kernel(spec, options);
  throw error(errc::invalid, "kernel \"" + spec.name + "\": unsupported file type " + spec.path);
}

}  // namespace rnx::runner
