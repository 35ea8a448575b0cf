// rnx-verify-worker's job file, its result channel and its thread counts, and the static scan's audit row.
#include "worker_checks.hpp"

#include "device_checks.hpp"
#include "job_file.hpp"
#include "rnx/common/error.hpp"
#include "rnx/runner/worker_channel.hpp"
#include "rnx/sandbox/sandbox.hpp"
#include "rnx/verify/verify.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <thread>

namespace bj = boost::json;

namespace rnx::verify::detail {

using runner::py_ref;

namespace {
int result_fd = 1;
}  // namespace

void set_result_fd(int fd) { result_fd = fd; }

void emit(const bj::object& event) { runner::emit_line(result_fd, event); }

void emit_check(check_id id, outcome result, const std::string& detail, double seconds, std::string_view dtype) {
  emit(to_json(check_event{.group = group_of(id),
                           .name = id,
                           .result = result,
                           .detail = detail,
                           .dtype = dtype.empty() ? std::nullopt : std::optional<std::string>(dtype),
                           .seconds = seconds}));
}

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(3);
  os << v;
  return os.str();
}

job read_job(const std::filesystem::path& path) {
  job j;
  static_cast<job_file&>(j) = json::from_object<job_file>(json::parse_file(path), "the verify job " + path.string());
  for (const auto& in : j.inputs) j.shapes.push_back({in.name, parse_shape(in.shape, "input " + in.name), in.shape});
  return j;
}

// ---- thread and process counts of this worker ----

int native_threads() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
    ::closedir(d);
  }
  return n;
}

int python_threads() {
  py_ref r = call_verify("python_threads", py_ref::steal(PyTuple_New(0)).get());
  return static_cast<int>(PyLong_AsLong(r.get()));
}

void emit_static_scan(const job& j, bool kernelbench) {
  const double t = now_s();
  py_ref args = py_ref::steal(
      Py_BuildValue("(ssO)", j.candidate.path.c_str(), j.reference.path.c_str(), kernelbench ? Py_True : Py_False));
  py_ref findings = call_verify("static_scan", args.get());
  std::string detail;
  Py_ssize_t n = PyList_Size(findings.get());
  for (Py_ssize_t i = 0; i < n && i < 6; ++i) {
    PyObject* f = PyList_GetItem(findings.get(), i);
    long line = PyLong_AsLong(PyDict_GetItemString(f, "line"));
    std::string category = PyUnicode_AsUTF8(PyDict_GetItemString(f, "category"));
    std::string message = PyUnicode_AsUTF8(PyDict_GetItemString(f, "message"));
    detail.append(detail.empty() ? "" : "; ")
        .append("line ")
        .append(std::to_string(line))
        .append(" [")
        .append(category)
        .append("] ")
        .append(message);
  }
  if (n > 6) detail += "; and " + std::to_string(n - 6) + " more";
  // A source pattern alone is for a person to look at: what the code does when it runs is judged by the measured
  // rows (hidden_work, extra_threads, patched_globals, sandbox and the value checks), which reject.
  emit_check(check_id::static_scan, n ? outcome::review : outcome::pass,
             n ? "source patterns to look at (read, not run; the measured rows judge what the code does): " + detail
               : "no timer patching, streams, threads, processes, network, secrets or reference fallbacks found",
             now_s() - t);
}

}  // namespace rnx::verify::detail
