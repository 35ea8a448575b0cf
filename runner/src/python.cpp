// The embedded interpreter: start-up, the support module (compiled in from runner/python), error capture.
#include <Python.h>

#include "rnx/runner/python.hpp"

#include "rnx/common/error.hpp"
#include "build_config.hpp"
#include "rnx_support_source.hpp"

#include <unistd.h>

namespace rnx::runner {

py_ref py_ref::borrow(PyObject* p) {
  Py_XINCREF(p);
  return py_ref(p);
}

py_ref::py_ref(const py_ref& other) : p_(other.p_) { Py_XINCREF(p_); }

py_ref::~py_ref() {
  // After interpreter shutdown the objects are gone with it; only release while it lives.
  if (p_ && Py_IsInitialized()) Py_DECREF(p_);
}

namespace {

PyObject* support_ = nullptr;

std::string to_utf8(PyObject* o) {
  if (!o) return "";
  py_ref s = py_ref::steal(PyObject_Str(o));
  if (!s) {
    PyErr_Clear();
    return "<unprintable>";
  }
  const char* text = PyUnicode_AsUTF8(s.get());
  if (!text) {
    PyErr_Clear();
    return "<unprintable>";
  }
  return text;
}

// Which interpreter started and where it looks for modules: sys.prefix, sys.executable and sys.path, so that a
// failed import names the install it searched (a prefix found through PATH's python3, say, that lacks torch).
std::string interpreter_whereabouts() {
  PyObject* sys = PyImport_AddModule("sys");  // borrowed
  if (!sys) {
    PyErr_Clear();
    return "sys unavailable";
  }
  auto attribute = [&](const char* name) {
    py_ref value = py_ref::steal(PyObject_GetAttrString(sys, name));
    if (!value) PyErr_Clear();
    return to_utf8(value.get());
  };
  return "prefix " + attribute("prefix") + ", executable " + attribute("executable") + ", path " + attribute("path");
}

}  // namespace

void ensure_python() {
  if (support_) return;
  if (!Py_IsInitialized()) {
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;  // the orchestrator owns SIGINT/SIGTERM handling of workers
    config.parse_argv = 0;
    // Started as the interpreter rnx was built against, where it still exists: otherwise Python takes the first
    // python3 on PATH as its program, and a system python3 there gives the system's stdlib and site-packages,
    // without torch.
    PyStatus status = PyStatus_Ok();
    if (::access(RNX_PYTHON_EXECUTABLE, X_OK) == 0) {
      status = PyConfig_SetBytesString(&config, &config.executable, RNX_PYTHON_EXECUTABLE);
    }
    if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) {
      throw error(errc::internal, std::string("cannot start the embedded Python interpreter: ") +
                                      (status.err_msg ? status.err_msg : "unknown reason"));
    }
  }
  py_ref torch = py_ref::steal(PyImport_ImportModule("torch"));
  if (!torch) {
    const std::string why = take_python_error();
    throw error(errc::internal, "the embedded Python (" + interpreter_whereabouts() + ") cannot import torch (" + why +
                                    "); install the pinned torch from requirements.txt into this Python");
  }
  py_ref code = py_ref::steal(Py_CompileString(rnx_support_source, "rnx_support.py", Py_file_input));
  if (!code) throw error(errc::internal, "rnx_support.py does not compile: " + take_python_error());
  PyObject* module = PyImport_ExecCodeModule("rnx_support", code.get());
  if (!module) throw error(errc::internal, "rnx_support.py failed to load: " + take_python_error());
  support_ = module;
}

PyObject* support_module() {
  ensure_python();
  return support_;
}

std::string take_python_error(std::string* kind) {
  if (!PyErr_Occurred()) return "";
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* raw = PyErr_GetRaisedException();
#else
  PyObject* type = nullptr;
  PyObject* raw = nullptr;
  PyObject* traceback = nullptr;
  PyErr_Fetch(&type, &raw, &traceback);
  PyErr_NormalizeException(&type, &raw, &traceback);
  if (raw && traceback) PyException_SetTraceback(raw, traceback);
  Py_XDECREF(type);
  Py_XDECREF(traceback);
#endif
  py_ref exc = py_ref::steal(raw);
  std::string type_name = raw ? Py_TYPE(raw)->tp_name : "Exception";
  if (auto dot = type_name.rfind('.'); dot != std::string::npos) type_name = type_name.substr(dot + 1);
  if (kind) *kind = type_name;
  std::string message = to_utf8(raw);
  // The innermost frames say where in the user's kernel it failed.
  std::string where;
  py_ref tb = py_ref::steal(raw ? PyException_GetTraceback(raw) : nullptr);
  if (tb) {
    py_ref traceback_module = py_ref::steal(PyImport_ImportModule("traceback"));
    py_ref frames = traceback_module
                        ? py_ref::steal(PyObject_CallMethod(traceback_module.get(), "extract_tb", "O", tb.get()))
                        : py_ref();
    if (frames && PyList_Check(frames.get())) {
      Py_ssize_t n = PyList_Size(frames.get());
      for (Py_ssize_t i = n - 1; i >= 0 && i >= n - 2; --i) {
        PyObject* frame = PyList_GetItem(frames.get(), i);
        py_ref file = py_ref::steal(PyObject_GetAttrString(frame, "filename"));
        py_ref line = py_ref::steal(PyObject_GetAttrString(frame, "lineno"));
        std::string f = to_utf8(file.get());
        if (f.find("rnx_support") != std::string::npos || f.find("/site-packages/") != std::string::npos) continue;
        where = " (at " + f + ":" + to_utf8(line.get()) + ")";
        break;
      }
    }
    PyErr_Clear();
  }
  if (type_name == "Unavailable" || type_name == "KernelError") return message;
  return type_name + ": " + message + where;
}

void preload_compilers() {
  try {
    py_ref none = py_ref::steal(PyTuple_New(0));
    call_support("preload_compilers", none.get());
  } catch (const error&) {
    // Only a head start: the configuration that needs the module imports it and reports what fails.
  }
}

py_ref call_support(const char* name, PyObject* args_tuple) {
  PyObject* module = support_module();
  py_ref fn = py_ref::steal(PyObject_GetAttrString(module, name));
  if (!fn) throw error(errc::internal, std::string("rnx_support has no ") + name);
  py_ref result = py_ref::steal(PyObject_CallObject(fn.get(), args_tuple));
  if (!result) {
    std::string kind;
    std::string message = take_python_error(&kind);
    if (kind == "Unavailable") throw runtime_unavailable(message);
    throw error(errc::kernel_failed, message);
  }
  return result;
}

}  // namespace rnx::runner
