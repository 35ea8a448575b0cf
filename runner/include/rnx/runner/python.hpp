// The embedded CPython interpreter shared with libtorch: one per process, plus an owning PyObject handle.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

// Python.h must come first wherever it is included; keep it out of this header.
struct _object;
typedef _object PyObject;

namespace rnx::runner {

// A runtime (or device) that cannot run here: the configuration is `skipped` with this reason, not an error.
class runtime_unavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Owns one reference; copying adds a reference, moving transfers it.
class py_ref {
 public:
  py_ref() = default;
  static py_ref steal(PyObject* p) { return py_ref(p); }  // takes a new reference (may be null)
  static py_ref borrow(PyObject* p);                      // adds a reference
  py_ref(const py_ref& other);
  py_ref(py_ref&& other) noexcept : p_(std::exchange(other.p_, nullptr)) {}
  py_ref& operator=(py_ref other) noexcept {
    std::swap(p_, other.p_);
    return *this;
  }
  ~py_ref();
  PyObject* get() const { return p_; }
  PyObject* release() { return std::exchange(p_, nullptr); }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  explicit py_ref(PyObject* p) : p_(p) {}
  PyObject* p_ = nullptr;
};

// Starts the interpreter (once), imports torch and the runner's support module, and keeps the GIL:
// the runner calls kernels from one thread only. Throws rnx::error(internal) when Python cannot start.
void ensure_python();

// Imports torch.compile's and Triton's Python front ends where installed (rnx_support.preload_compilers): what a
// worker started ahead of its turn does while it waits. Never throws: a missing one is imported, or reported, by
// the kernel that needs it.
void preload_compilers();

// The support module (runner/python/rnx_support.py), imported once.
PyObject* support_module();

// When a Python error is set: clears it and returns "ExcType: message" (with the last traceback lines).
// `kind` receives the exception's class name ("Unavailable", "KernelError", ...).
std::string take_python_error(std::string* kind = nullptr);

// Calls support_module().NAME(args...) where args is a tuple; throws on a Python exception, classified:
// Unavailable -> runtime_unavailable, anything else -> rnx::error(kernel_failed) with the message.
py_ref call_support(const char* name, PyObject* args_tuple);

}  // namespace rnx::runner
