// The candidate's own process (rnx-verify-worker --candidate-host): imports the candidate behind the seccomp
// filter, then calls it on what the judge sends and answers with what came out. It decides nothing: every
// check's outcome is computed by the judge, which started it and holds the result channel.
#include "candidate_channel.hpp"
#include "candidate_remote.hpp"
#include "rnx/sandbox/sandbox.hpp"
#include "rnx/common/error.hpp"
#include "worker_checks.hpp"

#include <boost/json.hpp>

#include <c10/core/GradMode.h>
#include <c10/util/Exception.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace bj = boost::json;

namespace rnx::verify::detail {

namespace {

constexpr std::uint64_t max_request_bytes = std::uint64_t{64} << 30;  // the judge is trusted; a sanity bound only

// Storage-form tensors from the judge, on this process's device with the same layout.
std::vector<at::Tensor> on_device(const std::vector<at::Tensor>& received, at::Device device) {
  std::vector<at::Tensor> out;
  for (const auto& t : received) {
    if (!t.defined() || device.is_cpu()) {
      out.push_back(t);
      continue;
    }
    const std::int64_t elements = static_cast<std::int64_t>(t.storage().nbytes() / t.element_size());
    at::Tensor storage = t.as_strided({elements}, {1}, 0).to(device);
    out.push_back(storage.as_strided(t.sizes(), t.strides(), t.storage_offset()));
  }
  return out;
}

shape_variant parse_shape_variant(const bj::object& header) {
  shape_variant s;
  const bj::object& shape = header.at("shape").as_object();
  s.batch = shape.at("batch").as_int64();
  for (const auto& [name, size] : shape.at("dims").as_object()) s.dims[std::string(name)] = size.as_int64();
  if (const bj::value* p = shape.if_contains("parameters_seed"); p && p->is_int64()) {
    s.parameters_seed = static_cast<std::uint64_t>(p->as_int64());
  }
  return s;
}

at::ScalarType parse_scalar_type(const bj::object& header) {
  const std::string name(header.at("dtype").as_string());
  for (at::ScalarType t : {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}) {
    if (name == c10::toString(t)) return t;
  }
  throw error(errc::internal, "unknown dtype in a request: " + name);
}

// Folders whose programs the candidate's process (and the compilers it starts) may execute: the system's and
// Python's (its prefixes and every folder on sys.path: torch, Triton and its ptxas) and those on PATH, never at or
// beneath `scratch`.
std::vector<std::filesystem::path> executable_folders(const std::filesystem::path& scratch) {
  std::vector<std::filesystem::path> out = sandbox::system_program_folders();
  auto add = [&](PyObject* text) {
    const char* s = text && PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : nullptr;
    if (!s || !*s) return;
    std::error_code ec;
    const std::filesystem::path p = std::filesystem::weakly_canonical(s, ec);
    if (ec || !std::filesystem::is_directory(p, ec)) return;
    const auto beneath = p.lexically_relative(scratch);
    const auto above = scratch.lexically_relative(p);
    if (!beneath.empty() && *beneath.begin() != "..") return;  // at or beneath scratch, where the candidate writes
    if (!above.empty() && *above.begin() != "..") return;      // above it: scratch would be beneath the rule
    if (p == "/" || p.string().rfind("/proc", 0) == 0 || p.string().rfind("/dev", 0) == 0) return;
    out.push_back(p);
  };
  for (const char* name : {"prefix", "base_prefix", "exec_prefix", "base_exec_prefix"}) add(PySys_GetObject(name));
  // The folders of the caller's PATH (nvcc under /usr/local/cuda/bin, a compiler in a toolchain folder): the
  // candidate cannot write to any of them.
  if (const char* path = std::getenv("PATH")) {
    std::string list(path);
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t end = std::min(list.find(':', at), list.size());
      const std::string dir = list.substr(at, end - at);
      if (!dir.empty() && dir.front() == '/') {
        py_ref text = py_ref::steal(PyUnicode_FromString(dir.c_str()));
        add(text.get());
      }
      at = end + 1;
    }
  }
  if (PyObject* path = PySys_GetObject("path"); path && PyList_Check(path)) {
    for (Py_ssize_t i = 0; i < PyList_Size(path); ++i) add(PyList_GetItem(path, i));
  }
  return out;
}

// Kills and reaps every process the candidate left running (this process is their subreaper, so orphans come
// here too); returns how many were still alive. Compilers a first call starts have finished by then.
int end_leftover_processes() {
  int alive = 0;
  const std::string tasks = "/proc/" + std::to_string(::getpid()) + "/task";
  for (int round = 0; round < 1000; ++round) {
    std::vector<pid_t> children;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(tasks, ec), end; !ec && it != end; it.increment(ec)) {
      std::ifstream in(it->path() / "children");
      for (pid_t c; in >> c;) children.push_back(c);
    }
    if (children.empty()) break;
    for (pid_t c : children) {
      std::ifstream stat("/proc/" + std::to_string(c) + "/stat");
      std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      const auto close = text.rfind(')');
      const bool zombie = close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
      if (!zombie) {
        ++alive;
        ::kill(c, SIGKILL);
      }
      ::waitpid(c, nullptr, 0);
    }
  }
  return alive;
}

// Whether a seccomp filter is already installed on this process (inherited from the process that started it).
bool under_seccomp_filter() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Seccomp:", 0) == 0) return line.find('2') != std::string::npos;
  }
  return false;
}

bool overlaps(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined() || !a.has_storage() || !b.has_storage()) return false;
  if (a.device() != b.device()) return false;
  auto lo_a = reinterpret_cast<std::uintptr_t>(a.storage().data());
  auto lo_b = reinterpret_cast<std::uintptr_t>(b.storage().data());
  if (lo_a == 0 || lo_b == 0) return false;
  return lo_a < lo_b + b.storage().nbytes() && lo_b < lo_a + a.storage().nbytes();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class host {
 public:
  host(const std::filesystem::path& job_path, int in_fd, int out_fd, bool capabilities_dropped, std::string why)
      : job_(read_job(job_path)),
        in_(in_fd),
        out_(out_fd),
        capabilities_dropped_(capabilities_dropped),
        why_(std::move(why)),
        device_(runner::resolve_device(job_.device)),
        pair_(job_.reference, job_.shapes, device_, job_.seed, job_.cache_dir) {}

  [[noreturn]] void run() {
    warm_up();
    send(bj::object{{"event", to_string(candidate_event::ready)},
                    {"python_threads", python_threads()},
                    {"compiler_stack_s", compiler_stack_s_}});
    for (;;) {
      message m = receive_message(in_, max_request_bytes);
      serve(m);
    }
  }

 private:
  void serve(message& m) {
    const std::string name(m.header.at("op").as_string());
    const auto op = candidate_op_from_string(name);
    if (!op) throw error(errc::internal, "unknown request " + name);
    switch (*op) {
      case candidate_op::load: return load();
      case candidate_op::call: return call(m);
      case candidate_op::hidden_work: return hidden_work(m);
      case candidate_op::time: return time(m);
      case candidate_op::time_fresh: return time_fresh(m);
      case candidate_op::finish: return finish();
    }
  }

  void send(bj::object header, const std::vector<at::Tensor>& values = {},
            const std::vector<at::Tensor>& storages = {}) {
    bj::array patched;
    for (const auto& p : patched_) patched.push_back(bj::string(p));
    patched_.clear();
    header["patched"] = std::move(patched);
    header["outputs"] = static_cast<std::int64_t>(values.size());
    // Outputs travel as values; the inputs as the call left them travel whole, layout and gaps included.
    send_message(out_, std::move(header), values, storages);
  }

  // The reference runs first, here too, so that torch's pools and the device are warm before the thread count
  // the judge takes as "before the candidate"; torch's compiler stack is imported before it for the same reason
  // (rnx_verify.import_compiler_stack: what torch patches and starts is the baseline, not the candidate's doing).
  void warm_up() {
    const std::string device = device_.str();
    py_ref seconds =
        call_verify("import_compiler_stack",
                    py_ref::steal(Py_BuildValue("(ss)", device.c_str(), job_.candidate.path.c_str())).get());
    compiler_stack_s_ = PyFloat_AsDouble(seconds.get());
    shape_variant sh{job_.batches.empty() ? 1 : job_.batches.front(), {}};
    std::vector<at::Tensor> in;
    for (const auto& b : pair_.base_inputs(sh, job_.seed)) in.push_back(b.to(device_));
    pair_.reference().call(in, at::kFloat, sh);
    at::ones({1 << 16}).sum();
    synchronize_device(device_);
  }

  void check_guard(const std::string& when) {
    if (!guard_) return;
    py_ref changed = py_ref::steal(PyObject_CallMethod(guard_.get(), "check_and_restore", nullptr));
    if (!changed) throw error(errc::internal, "namespace guard failed: " + runner::take_python_error());
    for (Py_ssize_t i = 0; i < PyList_Size(changed.get()); ++i) {
      patched_.push_back(std::string(PyUnicode_AsUTF8(PyList_GetItem(changed.get(), i))) + " (" + when + ")");
    }
  }

  void load() {
    std::string why1;
    sealed_ = capabilities_dropped_ && sandbox::install_filter(1, why1);
    if (!sealed_ && capabilities_dropped_ && under_seccomp_filter()) {
      // A process the judge started again after a crash (candidate_slot) was forked once the judge had installed
      // the same filter, which it inherits; that filter refuses a second SIGSYS handler, so a refused call ends this
      // process instead of being counted (the judge then reports the kill). The refusals are the same.
      sealed_ = true;
      why1.clear();
    }
    why_ += why1;
    guard_ = call_verify("namespace_guard", py_ref::steal(PyTuple_New(0)).get());
    // Landlock refuses writes outside the scratch folder (the current directory); this records the attempts.
    writes_ =
        call_verify("watch_writes", py_ref::steal(Py_BuildValue("(s)", std::filesystem::current_path().c_str())).get());
    const auto import_start = std::chrono::steady_clock::now();
    try {
      pair_.load_candidate(job_.candidate);
    } catch (const std::exception& e) {
      check_guard("at import");
      send(bj::object{{"ok", false}, {"error", std::string("the candidate did not load: ") + e.what()}});
      return;
    }
    check_guard("at import");
    // From the first call on, its processes may run only installed programs (compilers), nothing it wrote.
    std::string why2;
    sealed_ = sealed_ && sandbox::install_filter(2, why2) &&
              sandbox::restrict_execute(executable_folders(std::filesystem::current_path()),
                                        std::filesystem::current_path(), why2);
    why_ += why2;
    send(bj::object{{"ok", true},
                    {"kind", runner::to_string(pair_.candidate().kind())},
                    {"seccomp", sealed_},
                    {"why", why_},
                    {"import_s", seconds_since(import_start)}});
  }

  // One call of the candidate, with freed memory poisoned first and the globals it patched put back after.
  std::vector<at::Tensor> invoke(const std::vector<at::Tensor>& inputs, at::ScalarType dtype,
                                 const shape_variant& shape, const char* when) {
    poison_free_memory(device_);
    std::vector<at::Tensor> out;
    try {
      out = pair_.candidate().call(inputs, dtype, shape);
    } catch (const c10::Error& e) {
      check_guard(when);
      throw error(errc::kernel_failed, "candidate raised " + std::string(e.what_without_backtrace()));
    } catch (...) {
      check_guard(when);
      throw;
    }
    check_guard(when);
    processes_left_ += end_leftover_processes();
    return out;
  }

  // The inputs of a call at stable addresses: each input's storage is copied into the memory the same input slot
  // had at the last call where it has the same size, dtype and device (else into new memory that the slot keeps).
  // Where the inputs land is then the verifier's choice, not the allocator's: a memo keyed on an input's address
  // meets the same address at every call of a case and its neighbours, with new values or the same ones, so
  // output_aliasing and the value checks see what it does whatever the allocator would have done.
  std::vector<at::Tensor> at_stable_addresses(const std::vector<at::Tensor>& received) {
    std::vector<at::Tensor> out;
    if (slots_.size() < received.size()) slots_.resize(received.size());
    for (std::size_t i = 0; i < received.size(); ++i) {
      const at::Tensor& t = received[i];
      if (!t.defined() || !t.has_storage()) {
        out.push_back(t);
        continue;
      }
      const std::int64_t elements = static_cast<std::int64_t>(t.storage().nbytes() / t.element_size());
      const at::Tensor flat = t.as_strided({elements}, {1}, 0);
      at::Tensor& slot = slots_[i];
      if (!slot.defined() || slot.numel() != elements || slot.scalar_type() != t.scalar_type() ||
          slot.device() != device_) {
        slot = at::empty({elements}, t.options().device(device_));
      }
      slot.copy_(flat);
      out.push_back(slot.as_strided(t.sizes(), t.strides(), t.storage_offset()));
    }
    return out;
  }

  void call(const message& m) {
    std::vector<at::Tensor> inputs = at_stable_addresses(m.tensors);
    std::vector<at::Tensor> out;
    const auto call_start = std::chrono::steady_clock::now();
    try {
      out = invoke(inputs, parse_scalar_type(m.header), parse_shape_variant(m.header), "during a call");
      synchronize_device(device_);
    } catch (const std::exception& e) {
      send(bj::object{{"ok", false}, {"error", e.what()}});
      return;
    }
    bj::array shares, reuses;
    for (std::size_t o = 0; o < out.size(); ++o) {
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (overlaps(out[o], inputs[i]))
          shares.push_back(bj::array{static_cast<std::int64_t>(o), static_cast<std::int64_t>(i)});
      }
      for (const auto& p : previous_) {
        if (overlaps(out[o], p)) {
          reuses.push_back(static_cast<std::int64_t>(o));
          break;
        }
      }
    }
    // Kept until the next call, as a caller holding a result would: memory the candidate hands out twice shows.
    previous_ = out;
    // The call's wall time (a first call's includes what torch.compile or Triton compile then) for the report's
    // cost line; never a verdict's input.
    send(bj::object{{"ok", true},
                    {"shares_input", std::move(shares)},
                    {"reuses_previous", std::move(reuses)},
                    {"parameters", pair_.candidate().parameters_note()},
                    {"seconds", seconds_since(call_start)}},
         out, inputs);
  }

  void hidden_work(const message& m) {
    std::vector<at::Tensor> inputs = on_device(m.tensors, device_);
    const at::ScalarType dtype = parse_scalar_type(m.header);
    const shape_variant shape = parse_shape_variant(m.header);
    hidden_work_result h;
    try {
      // The bare call: poisoning and the globals check would be timed with it (they follow the measurement).
      h = measure_hidden_work([&] { pair_.candidate().call(inputs, dtype, shape); }, device_,
                              static_cast<int>(m.header.at("calls").as_int64()));
      check_guard("during timing");
      processes_left_ += end_leftover_processes();
    } catch (const std::exception& e) {
      send(bj::object{{"ok", false}, {"error", e.what()}});
      return;
    }
    send(bj::object{{"ok", true},
                    {"measured", h.measured},
                    {"timed_stream_ms", h.timed_stream_ms},
                    {"host_ms", h.host_ms},
                    {"lingering_ms", h.lingering_ms},
                    {"hold_ms", h.hold_ms},
                    {"hold_covered", h.hold_covered},
                    {"held_calls", h.held_calls},
                    {"held_stream_ms", h.held_stream_ms},
                    {"held_lingering_ms", h.held_lingering_ms},
                    {"stream_changed", h.stream_changed},
                    {"note", h.note}});
  }

  // The fastest of `repetitions` device-synchronized calls after one warm-up, all in one request: the process
  // runs them hot, as the judge runs the reference's, rather than waking for each.
  void time(const message& m) {
    std::vector<at::Tensor> inputs = on_device(m.tensors, device_);
    const at::ScalarType dtype = parse_scalar_type(m.header);
    const shape_variant shape = parse_shape_variant(m.header);
    const std::int64_t repetitions = std::clamp<std::int64_t>(m.header.at("repetitions").as_int64(), 1, 100);
    double best = INFINITY;
    try {
      auto call = [&] { pair_.candidate().call(inputs, dtype, shape); };
      call();
      for (std::int64_t i = 0; i < repetitions; ++i) best = std::min(best, time_call_ms(call, device_));
      check_guard("during timing");
      processes_left_ += end_leftover_processes();
    } catch (const std::exception& e) {
      send(bj::object{{"ok", false}, {"error", e.what()}});
      return;
    }
    send(bj::object{{"ok", true}, {"ms", best}});
  }

  // Timing where no call sees an input twice: set 0 warms up, sets 1 .. n-2 get one timed call each (new values at
  // a new address every call, so nothing keyed on an input can be reused), then set n-1's values are written into
  // set 1's memory and called once more (changed values at an address already seen). The outputs of every timed
  // call and of that last call go back, copied after the clock stopped, for the judge to check a share of them.
  void time_fresh(const message& m) {
    const at::ScalarType dtype = parse_scalar_type(m.header);
    const shape_variant shape = parse_shape_variant(m.header);
    const std::size_t per_set = static_cast<std::size_t>(std::max<std::int64_t>(m.header.at("per_set").as_int64(), 1));
    const std::vector<at::Tensor> all = on_device(m.tensors, device_);
    const std::size_t sets = all.size() / per_set;
    if (sets < 3 || sets * per_set != all.size()) throw error(errc::internal, "time_fresh: a malformed request");
    auto set = [&](std::size_t k) {
      return std::vector<at::Tensor>(all.begin() + static_cast<std::ptrdiff_t>(k * per_set),
                                     all.begin() + static_cast<std::ptrdiff_t>((k + 1) * per_set));
    };
    double best = INFINITY;
    bj::array times, counts;
    std::vector<at::Tensor> kept;
    auto keep = [&](std::vector<at::Tensor>& out) {
      counts.push_back(static_cast<std::int64_t>(out.size()));
      for (const auto& o : out) kept.push_back(o.defined() ? o.detach().clone() : o);
      out.clear();
    };
    try {
      pair_.candidate().call(set(0), dtype, shape);
      for (std::size_t k = 1; k + 1 < sets; ++k) {
        const std::vector<at::Tensor> inputs = set(k);
        std::vector<at::Tensor> out;
        const double ms = time_call_ms([&] { out = pair_.candidate().call(inputs, dtype, shape); }, device_);
        best = std::min(best, ms);
        times.push_back(ms);
        keep(out);
      }
      const std::vector<at::Tensor> first = set(1);
      const std::vector<at::Tensor> twin = set(sets - 1);
      for (std::size_t i = 0; i < per_set; ++i) {
        if (first[i].defined() && twin[i].defined() && first[i].sizes() == twin[i].sizes()) first[i].copy_(twin[i]);
      }
      std::vector<at::Tensor> out = pair_.candidate().call(first, dtype, shape);
      synchronize_device(device_);
      keep(out);
      check_guard("during timing");
    } catch (const std::exception& e) {
      send(bj::object{{"ok", false}, {"error", e.what()}});
      return;
    }
    send(bj::object{{"ok", true}, {"ms", best}, {"times", std::move(times)}, {"counts", std::move(counts)}}, kept);
  }

  [[noreturn]] void finish() {
    sandbox::blocked_counts b = sandbox::blocked();
    const Py_ssize_t writes = writes_ ? PyList_Size(writes_.get()) : 0;
    std::string first;
    if (writes > 0) {
      if (const char* f = PyUnicode_AsUTF8(PyList_GetItem(writes_.get(), 0))) first = f;
    }
    send(bj::object{{"ok", true},
                    {"seccomp", sealed_},
                    {"why", why_},
                    {"sockets", b.sockets},
                    {"processes", b.processes + processes_left_},
                    {"io_uring", b.io_uring},
                    {"foreign_abi", b.foreign_abi},
                    {"other", b.other},
                    {"calls", b.calls},
                    {"writes_outside", static_cast<std::int64_t>(writes)},
                    {"first_write", first},
                    {"python_threads", python_threads()}});
    std::_Exit(0);
  }

  job job_;
  int in_;
  int out_;
  bool capabilities_dropped_;
  std::string why_;
  at::Device device_;
  kernel_pair pair_;
  py_ref guard_;
  double compiler_stack_s_ = 0;  // importing torch's compiler stack before the candidate (import_compiler_stack)
  py_ref writes_;
  bool sealed_ = false;
  int processes_left_ = 0;  // processes the candidate left running after a call (killed)
  std::vector<std::string> patched_;
  std::vector<at::Tensor> previous_;
  std::vector<at::Tensor> slots_;  // each input slot's memory (at_stable_addresses)
};

}  // namespace

void run_candidate_host(const std::filesystem::path& job_path, int in_fd, int out_fd) {
  // First, before anything else runs here: no capabilities (see drop_capabilities); processes the candidate
  // starts and orphans stay this process's to find and end.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  std::string why;
  const bool dropped = sandbox::drop_capabilities(why);
  try {
    runner::ensure_python();
    c10::NoGradGuard no_grad;
    host h(job_path, in_fd, out_fd, dropped, why);
    h.run();
  } catch (const std::exception& e) {
    // The judge reads this as the candidate's process failing; it decides what that means.
    try {
      send_message(
          out_fd,
          bj::object{
              {"event", to_string(candidate_event::fatal)}, {"ok", false}, {"error", e.what()}, {"message", e.what()}},
          {});
    } catch (...) {
    }
    std::_Exit(3);
  }
}

}  // namespace rnx::verify::detail
