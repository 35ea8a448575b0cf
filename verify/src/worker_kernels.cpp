// Reference and candidate callables (Python through rnx_verify.py; .pt/.cpp/.cu through the runner) and inputs.
#include <Python.h>

#include "worker_kernels.hpp"

#include "rnx/common/error.hpp"
#include "rnx_verify_source.hpp"

#include <torch/csrc/autograd/python_variable.h>

#include <sstream>

namespace rnx::verify::detail {

using runner::py_ref;

std::string shape_variant::label() const {
  std::ostringstream os;
  os << "batch " << batch;
  for (const auto& [name, size] : dims) os << ", " << name << "->" << size;
  if (parameters_seed) os << ", parameters perturbed";
  return os.str();
}

PyObject* verify_module() {
  static PyObject* module = nullptr;
  if (module) return module;
  runner::ensure_python();
  py_ref code = py_ref::steal(Py_CompileString(rnx_verify_source, "rnx_verify.py", Py_file_input));
  if (!code) throw error(errc::internal, "rnx_verify.py does not compile: " + runner::take_python_error());
  module = PyImport_ExecCodeModule("rnx_verify", code.get());
  if (!module) throw error(errc::internal, "rnx_verify.py failed to load: " + runner::take_python_error());
  return module;
}

py_ref call_verify(const char* name, PyObject* args_tuple) {
  py_ref fn = py_ref::steal(PyObject_GetAttrString(verify_module(), name));
  if (!fn) throw error(errc::internal, std::string("rnx_verify has no ") + name);
  py_ref result = py_ref::steal(PyObject_CallObject(fn.get(), args_tuple));
  if (!result) throw error(errc::kernel_failed, runner::take_python_error());
  return result;
}

namespace {

py_ref dims_dict(const shape_variant& shape) {
  py_ref d = py_ref::steal(PyDict_New());
  for (const auto& [name, size] : shape.dims) {
    py_ref v = py_ref::steal(PyLong_FromLongLong(size));
    PyDict_SetItemString(d.get(), name.c_str(), v.get());
  }
  return d;
}

// A .py function or nn.Module class, bound per dtype and shape (KernelBench models are rebuilt per shape,
// from the reference's get_init_inputs() under the same seed as the reference's model).
class python_side final : public verify_kernel {
 public:
  python_side(py_ref loaded, py_ref reference_loaded, at::Device device, std::uint64_t seed, std::string what)
      : loaded_(std::move(loaded)),
        reference_loaded_(std::move(reference_loaded)),
        device_(device),
        seed_(seed),
        what_(std::move(what)) {
    kind_ = runner::loaded_form(loaded_.get());
  }

  std::vector<at::Tensor> call(const std::vector<at::Tensor>& inputs, at::ScalarType dtype,
                               const shape_variant& shape) override {
    PyObject* fn = bound(dtype, shape);
    py_ref args = runner::tensors_to_python(inputs, runner::python_sequence::tuple);
    py_ref result = py_ref::steal(PyObject_CallObject(fn, args.get()));
    if (!result) throw error(errc::kernel_failed, what_ + " raised " + runner::take_python_error());
    py_ref pack = py_ref::steal(PyTuple_Pack(1, result.get()));
    py_ref list = runner::call_support("tensors_of", pack.get());
    return runner::tensors_from_list(list.get(), what_);
  }

  runner::kernel_form kind() const override { return kind_; }
  std::string parameters_note() const override { return note_; }

 private:
  PyObject* bound(at::ScalarType dtype, const shape_variant& shape) {
    const std::string key = std::string(runner::dtype_name(dtype)) + "|" + shape.label();
    if (kind_ == runner::kernel_form::function) {
      if (!function_) {
        py_ref target = py_ref::steal(PyObject_GetAttrString(loaded_.get(), "target"));
        function_ = target;
      }
      return function_.get();
    }
    auto it = models_.find(key);
    if (it != models_.end()) {
      note_ = notes_[key];
      return it->second.get();
    }
    // rnx_verify.bind hands back the instance its constructor arguments already built: one instance meets every
    // size that leaves them unchanged (a user builds a model once and calls it at every batch).
    py_ref dims = dims_dict(shape);
    py_ref args = py_ref::steal(Py_BuildValue(
        "(OOssKLOK)", loaded_.get(), reference_loaded_.get(), std::string(runner::dtype_name(dtype)).c_str(),
        device_.str().c_str(), static_cast<unsigned long long>(seed_), static_cast<long long>(shape.batch), dims.get(),
        static_cast<unsigned long long>(shape.parameters_seed)));
    py_ref model;
    try {
      model = call_verify("bind", args.get());
    } catch (const error& e) {
      throw error(errc::kernel_failed, what_ + ": building the model failed: " + e.what());
    }
    if (models_.size() > 16) {  // bounded; the instances themselves are kept by rnx_verify
      models_.clear();
      notes_.clear();
    }
    note_ = notes_[key] = note_of(model.get());
    return models_.emplace(key, model).first->second.get();
  }

  static std::string note_of(PyObject* fn) {
    py_ref args = py_ref::steal(PyTuple_Pack(1, fn));
    try {
      py_ref note = call_verify("parameters_note", args.get());
      const char* text = PyUnicode_Check(note.get()) ? PyUnicode_AsUTF8(note.get()) : nullptr;
      return text ? text : "";
    } catch (const error&) {
      return "";
    }
  }

  py_ref loaded_;
  py_ref reference_loaded_;
  at::Device device_;
  std::uint64_t seed_;
  std::string what_;
  runner::kernel_form kind_ = runner::kernel_form::function;
  py_ref function_;
  std::map<std::string, py_ref> models_;  // by dtype and case label; rnx_verify.bind shares instances between labels
  std::map<std::string, std::string> notes_;
  std::string note_;
};

// .pt / .cpp / .cu through the runner's loaders, always in its eager runtime.
class runner_side final : public verify_kernel {
 public:
  runner_side(std::unique_ptr<runner::kernel> k, at::Device device, std::uint64_t seed, std::string what)
      : kernel_(std::move(k)), device_(device), seed_(seed), what_(std::move(what)) {}

  std::vector<at::Tensor> call(const std::vector<at::Tensor>& inputs, at::ScalarType dtype,
                               const shape_variant&) override {
    try {
      return kernel_->prepare(to_string(runtime_kind::eager), inputs, dtype, device_, seed_)->outputs();
    } catch (const runner::runtime_unavailable& e) {
      throw error(errc::kernel_failed, what_ + " cannot run here: " + e.what());
    }
  }
  runner::kernel_form kind() const override { return kernel_->kind(); }

 private:
  std::unique_ptr<runner::kernel> kernel_;
  at::Device device_;
  std::uint64_t seed_;
  std::string what_;
};

bool is_python(const std::string& path) { return path.size() > 3 && path.compare(path.size() - 3, 3, ".py") == 0; }

}  // namespace

kernel_pair::kernel_pair(const side_spec& reference, std::vector<input_spec> inputs, at::Device device,
                         std::uint64_t seed, std::filesystem::path cache_dir)
    : inputs_(std::move(inputs)), device_(device), seed_(seed), cache_dir_(std::move(cache_dir)) {
  verify_module();
  reference_ = load_side(reference, side_role::reference);
  if (reference_->kind() == runner::kernel_form::kernelbench) {
    kernelbench_ = true;
    py_ref args = py_ref::steal(PyTuple_Pack(1, reference_loaded_.get()));
    py_ref info;
    try {
      info = call_verify("kernelbench_info", args.get());
    } catch (const error& e) {
      throw error(errc::invalid, e.what());
    }
    has_batch_ = PyObject_IsTrue(PyDict_GetItemString(info.get(), "batch")) == 1;
    PyObject* dims = PyDict_GetItemString(info.get(), "dims");
    PyObject* key = nullptr;
    PyObject* value = nullptr;
    Py_ssize_t pos = 0;
    while (PyDict_Next(dims, &pos, &key, &value)) kb_dims_[PyUnicode_AsUTF8(key)] = PyLong_AsLongLong(value);
  } else if (inputs_.empty()) {
    throw error(errc::usage, "reference " + reference.path +
                                 " is a function kernel but no inputs were declared; pass "
                                 "--inputs \"x=B,1024\" or declare inputs for it in rnx.toml");
  } else {
    has_batch_ = false;
    for (const auto& in : inputs_) {
      for (const auto& d : in.dims) has_batch_ = has_batch_ || d.is_batch;
    }
  }
}

std::string_view to_string(side_role role) { return role == side_role::reference ? "reference" : "candidate"; }

std::unique_ptr<verify_kernel> kernel_pair::load_side(const side_spec& side, side_role role) {
  const std::string what = std::string(to_string(role)) + " " + side.path;
  const bool is_reference = role == side_role::reference;
  if (is_python(side.path)) {
    py_ref args = py_ref::steal(Py_BuildValue("(ssss)", side.path.c_str(), side.entry.c_str(),
                                              std::string(to_string(role)).c_str(),
                                              is_reference ? "rnx_verify_reference" : "rnx_verify_candidate"));
    py_ref loaded;
    try {
      loaded = call_verify("load", args.get());
    } catch (const error& e) {
      throw error(is_reference ? errc::invalid : errc::kernel_failed, "loading " + what + " failed: " + e.what());
    }
    if (is_reference)
      reference_loaded_ = loaded;
    else
      candidate_loaded_ = loaded;
    return std::make_unique<python_side>(loaded, reference_loaded_, device_, seed_, what);
  }
  if (kernelbench_) {
    throw error(errc::usage, what + ": a KernelBench reference needs a Python candidate (a ModelNew class)");
  }
  auto spec = std::make_unique<kernel_spec>();
  spec->name = std::string(to_string(role));
  spec->path = side.path;
  spec->resolved_path = std::filesystem::absolute(side.path);
  spec->entry = side.entry;
  spec->inputs = inputs_;
  spec->device = device_.str();
  runner::load_options options;
  options.cache_dir = cache_dir_;
  std::unique_ptr<runner::kernel> k;
  try {
    k = runner::load_kernel(*spec, options);
  } catch (const error& e) {
    throw error(is_reference ? e.code() : errc::kernel_failed, "loading " + what + " failed: " + e.what());
  }
  specs_.push_back(std::move(spec));
  return std::make_unique<runner_side>(std::move(k), device_, seed_, what);
}

void kernel_pair::load_candidate(const side_spec& candidate) {
  candidate_ = load_side(candidate, side_role::candidate);
}

std::map<std::string, std::int64_t> kernel_pair::variable_dims() const {
  if (kernelbench_) return kb_dims_;
  std::map<std::string, std::int64_t> sizes;
  for (const auto& in : inputs_) {
    for (const auto& d : in.dims) {
      if (!d.is_batch && d.size > 1) sizes[std::to_string(d.size)] = d.size;
    }
  }
  return sizes;
}

std::vector<at::Tensor> kernel_pair::base_inputs(const shape_variant& shape, std::uint64_t seed) {
  if (kernelbench_) {
    py_ref dims = dims_dict(shape);
    PyObject* cand = candidate_loaded_ ? candidate_loaded_.get() : Py_None;
    py_ref args = py_ref::steal(Py_BuildValue("(OOLOK)", reference_loaded_.get(), cand,
                                              static_cast<long long>(has_batch_ ? shape.batch : 0), dims.get(),
                                              static_cast<unsigned long long>(seed)));
    py_ref list = call_verify("kernelbench_inputs", args.get());
    std::vector<at::Tensor> out;
    for (const auto& t : runner::tensors_from_list(list.get(), "get_inputs()")) {
      out.push_back(t.is_floating_point() ? t.detach().to(at::kCPU, at::kFloat) : t.detach().to(at::kCPU));
    }
    return out;
  }
  std::vector<input_spec> specs = inputs_;
  for (auto& in : specs) {
    for (auto& d : in.dims) {
      if (d.is_batch) continue;
      if (auto it = shape.dims.find(std::to_string(d.size)); it != shape.dims.end()) d.size = it->second;
    }
  }
  return runner::make_inputs(specs, shape.batch, at::kFloat, at::Device(at::kCPU), seed);
}

}  // namespace rnx::verify::detail
