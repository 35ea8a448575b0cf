// The judge's side of the candidate's process: starting it, asking it to call or time the candidate, and reading
// its answers as untrusted data.
#include "candidate_remote.hpp"

#include "candidate_channel.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/process.hpp"

#include <boost/json.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstring>

namespace bj = boost::json;

namespace rnx::verify::detail {

namespace {

// A reply holds the outputs and the inputs as the call left them: far below this for any kernel the verifier
// can run, and a bound on what a hostile process can make the judge allocate.
constexpr std::uint64_t max_reply_bytes = std::uint64_t{16} << 30;
// Once a reply has begun, the rest of it comes straight away (the candidate's process copies every tensor to the
// CPU before it writes the first byte): a reply that stops this long is cut short, and the channel is broken.
constexpr int reply_stall_ms = 20'000;
// The candidate's text (an exception message) is shown, not trusted: bounded.
constexpr std::size_t max_text = 2000;

// The descriptors the candidate's process reads requests from and writes replies to. Descriptor 3, the judge's
// result channel, is closed there: nothing the candidate writes can reach the report except through the judge.
constexpr int host_in_fd = 4;
constexpr int host_out_fd = 5;

std::string text_field(const bj::object& o, const char* key) {
  const bj::value* v = o.if_contains(key);
  if (!v || !v->is_string()) return "";
  std::string s(v->as_string());
  if (s.size() > max_text) s = s.substr(0, max_text) + "...";
  return s;
}

double number_field(const bj::object& o, const char* key) {
  const bj::value* v = o.if_contains(key);
  if (!v || !(v->is_number())) {
    throw error(errc::kernel_failed, std::string("the candidate's process broke the verifier's protocol (no number '") +
                                         key + "' in its reply)");
  }
  return v->to_number<double>();
}

bool bool_field(const bj::object& o, const char* key) {
  const bj::value* v = o.if_contains(key);
  return v && v->is_bool() && v->as_bool();
}

bj::object shape_json(const shape_variant& shape) {
  bj::object dims;
  for (const auto& [name, size] : shape.dims) dims[name] = size;
  bj::object o{{"batch", shape.batch}, {"dims", std::move(dims)}};
  if (shape.parameters_seed) o["parameters_seed"] = static_cast<std::int64_t>(shape.parameters_seed & 0x7fffffff);
  return o;
}

std::string status_text(int status) {
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) {
    return "was killed by SIGSYS (a call its seccomp filter refused while SIGSYS was blocked, or a signal sent "
           "to it)";
  }
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

}  // namespace

remote_candidate::remote_candidate(const std::filesystem::path& job_path, at::Device device) : device_(device) {
  char exe[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    throw error(errc::internal, std::string("cannot find this program (/proc/self/exe): ") + std::strerror(errno));
  program_start start;
  start.argv = {exe,         "--candidate-host",
                "--job",     job_path.string(),
                "--channel", std::to_string(host_in_fd) + "," + std::to_string(host_out_fd)};
  start.close_others = true;  // the channel alone: no other descriptor of the judge reaches the candidate
  start.die_with_parent = true;
  int requests[2], replies[2];
  if (::pipe2(requests, O_CLOEXEC) != 0)
    throw error(errc::internal, std::string("pipe failed: ") + std::strerror(errno));
  if (::pipe2(replies, O_CLOEXEC) != 0) {
    const int failed = errno;
    ::close(requests[0]);
    ::close(requests[1]);
    throw error(errc::internal, std::string("pipe failed: ") + std::strerror(failed));
  }
  start.descriptors = {{requests[0], host_in_fd}, {replies[1], host_out_fd}};
  try {
    pid_ = start_program(start);
  } catch (...) {
    for (int fd : {requests[0], requests[1], replies[0], replies[1]}) ::close(fd);
    throw;
  }
  ::close(requests[0]);
  ::close(replies[1]);
  to_host_ = requests[1];
  from_host_ = replies[0];
  // A write to a process that died must be an error here, not a SIGPIPE that ends the judge.
  ::signal(SIGPIPE, SIG_IGN);
  message ready;
  try {
    ready = receive_message(from_host_, max_reply_bytes, reply_stall_ms);
  } catch (const error& e) {
    throw error(errc::internal, std::string("the candidate's process did not start: ") + e.what());
  }
  if (candidate_event_from_string(text_field(ready.header, "event")) != candidate_event::ready) {
    throw error(errc::internal, "the candidate's process did not start: " + text_field(ready.header, "message"));
  }
  python_threads_before_ = static_cast<int>(number_field(ready.header, "python_threads"));
  costs_.compiler_stack_s = number_field(ready.header, "compiler_stack_s");
}

remote_candidate::~remote_candidate() {
  if (to_host_ >= 0) ::close(to_host_);
  if (from_host_ >= 0) ::close(from_host_);
  if (pid_ > 0 && gone_.empty()) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

void remote_candidate::fail_if_gone() const {
  if (!gone_.empty()) throw error(errc::kernel_failed, gone_);
}

std::string remote_candidate::ended() const { return gone_; }

int remote_candidate::native_threads() const {
  int n = 0;
  const std::string dir = "/proc/" + std::to_string(pid_) + "/task";
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
    ::closedir(d);
  }
  return n;
}

remote_candidate::reply remote_candidate::request(bj::object header, const std::vector<at::Tensor>& tensors) {
  fail_if_gone();
  message m;
  try {
    send_message(to_host_, std::move(header), {}, tensors);
    m = receive_message(from_host_, max_reply_bytes, reply_stall_ms);
  } catch (const error& e) {
    abandon(e.what());
  }
  // One reply per request: anything more was written by something other than the candidate's process's loop.
  if (has_unread_bytes(from_host_)) {
    abandon(
        "its channel to the verifier broke (bytes after a whole reply): something in that process wrote to the "
        "channel");
  }
  note_patched(m.header);
  if (!bool_field(m.header, "ok")) {
    std::string why = text_field(m.header, "error");
    throw error(errc::kernel_failed, why.empty() ? "the candidate failed without a message" : why);
  }
  return {std::move(m.header), std::move(m.tensors)};
}

void remote_candidate::abandon(const std::string& why) {
  // A process that closed its channel, or broke the protocol, is ended here and fails every later request the
  // same way: nothing more it says is read.
  // A closed channel usually means the process is ending: give it a moment to be reaped, so the report says how
  // it ended (a seccomp kill, say) rather than that it was ended here.
  int status = 0;
  pid_t reaped = 0;
  for (int i = 0; i < 100 && (reaped = ::waitpid(pid_, &status, WNOHANG)) == 0; ++i) ::usleep(10'000);
  if (reaped == pid_) {
    if (WIFSIGNALED(status)) signal_ = WTERMSIG(status);
    gone_ = "the candidate's process " + status_text(status) + ": " + why;
  } else {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    gone_ = "the candidate's process was ended by the verifier: " + why;
  }
  throw error(errc::kernel_failed, gone_);
}

void remote_candidate::note_patched(const bj::object& header) {
  const bj::value* list = header.if_contains("patched");
  if (!list || !list->is_array()) return;
  for (const auto& v : list->as_array()) {
    if (!v.is_string()) continue;
    std::string what(v.as_string());
    if (what.size() > 200) what = what.substr(0, 200);
    if (patched_.size() < 8 && std::find(patched_.begin(), patched_.end(), what) == patched_.end()) {
      patched_.push_back(what);
    }
  }
}

void remote_candidate::note_call_seconds(double seconds) {
  // The candidate's own figure: only ever shown, so a lie costs it nothing but a wrong cost line.
  if (!std::isfinite(seconds) || seconds < 0) return;
  (costs_.calls == 0 ? costs_.first_call_s : costs_.other_calls_s) += seconds;
  ++costs_.calls;
}

std::string remote_candidate::load() {
  try {
    reply r = request(bj::object{{"op", to_string(candidate_op::load)}}, {});
    const std::string kind = text_field(r.header, "kind");
    auto form = runner::kernel_form_from_string(kind);
    if (!form) throw error(errc::internal, "the candidate's process named an unknown kernel form '" + kind + "'");
    kind_ = *form;
    sealed_at_load_ = bool_field(r.header, "seccomp");
    why_at_load_ = text_field(r.header, "why");
    costs_.import_s = number_field(r.header, "import_s");
    return "";
  } catch (const error& e) {
    // Whether the filter was installed is unknown when the process was ended before it said so; the report
    // must name the real cause, not blame the machine's seccomp.
    if (!gone_.empty()) why_at_load_ = "unknown: " + gone_;
    return e.what();
  }
}

std::vector<at::Tensor> remote_candidate::call(const std::vector<at::Tensor>& inputs, at::ScalarType dtype,
                                               const shape_variant& shape) {
  notes_ = {};
  reply r = request(
      bj::object{{"op", to_string(candidate_op::call)}, {"dtype", c10::toString(dtype)}, {"shape", shape_json(shape)}},
      inputs);
  const std::int64_t outputs = static_cast<std::int64_t>(number_field(r.header, "outputs"));
  if (outputs < 0 || static_cast<std::size_t>(outputs) + inputs.size() != r.tensors.size()) {
    abandon("it broke the verifier's protocol (a reply with the wrong number of tensors)");
  }
  note_call_seconds(number_field(r.header, "seconds"));
  std::vector<at::Tensor> out;
  for (std::int64_t i = 0; i < outputs; ++i) {
    at::Tensor t = r.tensors[static_cast<std::size_t>(i)];
    // Where the candidate put it: a GPU output comes back to this process's GPU, a CPU output stays on the CPU,
    // so the form check sees a wrong device.
    if (t.defined() && sent_device(r.header, static_cast<std::size_t>(i)).rfind("cuda", 0) == 0 && device_.is_cuda()) {
      t = t.to(device_);
    }
    out.push_back(std::move(t));
  }
  // What the call left in its inputs, written back into the caller's tensors (which the judge compares with a
  // copy taken before the call).
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& after = r.tensors[static_cast<std::size_t>(outputs) + i];
    if (!after.defined() || !inputs[i].defined() || after.sizes() != inputs[i].sizes() ||
        after.scalar_type() != inputs[i].scalar_type()) {
      abandon("it broke the verifier's protocol (an input came back in another form)");
    }
    inputs[i].copy_(after.to(inputs[i].device()));
  }
  auto pairs = [&](const char* key) {
    std::vector<std::vector<std::int64_t>> found;
    const bj::value* v = r.header.if_contains(key);
    if (!v || !v->is_array()) return found;
    for (const auto& item : v->as_array()) {
      std::vector<std::int64_t> ints;
      if (item.is_array()) {
        for (const auto& x : item.as_array()) {
          if (x.is_int64()) ints.push_back(x.as_int64());
        }
      } else if (item.is_int64()) {
        ints.push_back(item.as_int64());
      }
      found.push_back(std::move(ints));
    }
    return found;
  };
  for (const auto& p : pairs("shares_input")) {
    if (p.size() == 2) notes_.shares_input.emplace_back(static_cast<int>(p[0]), static_cast<int>(p[1]));
  }
  for (const auto& p : pairs("reuses_previous")) {
    if (p.size() == 1) notes_.reuses_previous.push_back(static_cast<int>(p[0]));
  }
  notes_.parameters = text_field(r.header, "parameters");
  if (notes_.parameters.size() > 300) notes_.parameters.resize(300);
  return out;
}

hidden_work_result remote_candidate::hidden_work(const std::vector<at::Tensor>& inputs, at::ScalarType dtype,
                                                 const shape_variant& shape, int calls) {
  reply r = request(bj::object{{"op", to_string(candidate_op::hidden_work)},
                               {"dtype", c10::toString(dtype)},
                               {"shape", shape_json(shape)},
                               {"calls", calls}},
                    inputs);
  hidden_work_result h;
  h.measured = bool_field(r.header, "measured");
  h.timed_stream_ms = number_field(r.header, "timed_stream_ms");
  h.host_ms = number_field(r.header, "host_ms");
  h.lingering_ms = number_field(r.header, "lingering_ms");
  h.hold_ms = number_field(r.header, "hold_ms");
  h.hold_covered = bool_field(r.header, "hold_covered");
  h.held_calls = static_cast<int>(number_field(r.header, "held_calls"));
  h.held_stream_ms = number_field(r.header, "held_stream_ms");
  h.held_lingering_ms = number_field(r.header, "held_lingering_ms");
  h.stream_changed = bool_field(r.header, "stream_changed");
  h.note = text_field(r.header, "note");
  return h;
}

double remote_candidate::fastest_call_ms(const std::vector<at::Tensor>& inputs, at::ScalarType dtype,
                                         const shape_variant& shape, int repetitions) {
  reply r = request(bj::object{{"op", to_string(candidate_op::time)},
                               {"dtype", c10::toString(dtype)},
                               {"shape", shape_json(shape)},
                               {"repetitions", repetitions}},
                    inputs);
  const double ms = number_field(r.header, "ms");
  if (!(ms >= 0)) throw error(errc::kernel_failed, "the candidate's process reported a negative time");
  return ms;
}

remote_candidate::fresh_timing remote_candidate::time_fresh(const std::vector<std::vector<at::Tensor>>& sets,
                                                            at::ScalarType dtype, const shape_variant& shape) {
  if (sets.size() < 3) throw error(errc::internal, "time_fresh needs a warm-up set, a timed set and a rewrite");
  std::vector<at::Tensor> flat;
  for (const auto& s : sets) {
    if (s.size() != sets.front().size()) throw error(errc::internal, "time_fresh: input sets of different sizes");
    flat.insert(flat.end(), s.begin(), s.end());
  }
  reply r = request(bj::object{{"op", to_string(candidate_op::time_fresh)},
                               {"dtype", c10::toString(dtype)},
                               {"shape", shape_json(shape)},
                               {"per_set", static_cast<std::int64_t>(sets.front().size())}},
                    flat);
  fresh_timing f;
  f.fastest_ms = number_field(r.header, "ms");
  if (!(f.fastest_ms >= 0)) abandon("it broke the verifier's protocol (a negative time)");
  const bj::value* times = r.header.if_contains("times");
  const bj::value* counts = r.header.if_contains("counts");
  if (!times || !times->is_array() || !counts || !counts->is_array() || times->as_array().size() != sets.size() - 2 ||
      counts->as_array().size() != sets.size() - 1) {
    abandon("it broke the verifier's protocol (a timing reply of the wrong form)");
  }
  for (const auto& t : times->as_array()) f.ms.push_back(t.is_number() ? t.to_number<double>() : -1);
  std::size_t next = 0;
  for (const auto& c : counts->as_array()) {
    const std::int64_t n = c.is_int64() ? c.as_int64() : -1;
    if (n < 0 || next + static_cast<std::size_t>(n) > r.tensors.size()) {
      abandon("it broke the verifier's protocol (a timing reply with the wrong number of tensors)");
    }
    std::vector<at::Tensor> out;
    for (std::int64_t i = 0; i < n; ++i, ++next) {
      at::Tensor t = r.tensors[next];
      if (t.defined() && sent_device(r.header, next).rfind("cuda", 0) == 0 && device_.is_cuda()) t = t.to(device_);
      out.push_back(std::move(t));
    }
    f.outputs.push_back(std::move(out));
  }
  if (next != r.tensors.size()) abandon("it broke the verifier's protocol (a timing reply with extra tensors)");
  return f;
}

host_report remote_candidate::finish() {
  reply r = request(bj::object{{"op", to_string(candidate_op::finish)}}, {});
  host_report h;
  h.sealed = bool_field(r.header, "seccomp");
  h.why = text_field(r.header, "why");
  h.blocked.sockets = static_cast<int>(number_field(r.header, "sockets"));
  h.blocked.processes = static_cast<int>(number_field(r.header, "processes"));
  h.blocked.io_uring = static_cast<int>(number_field(r.header, "io_uring"));
  h.blocked.foreign_abi = static_cast<int>(number_field(r.header, "foreign_abi"));
  h.blocked.other = static_cast<int>(number_field(r.header, "other"));
  h.blocked.calls = text_field(r.header, "calls");
  h.writes_outside = static_cast<std::int64_t>(number_field(r.header, "writes_outside"));
  h.first_write = text_field(r.header, "first_write");
  h.python_threads = static_cast<int>(number_field(r.header, "python_threads"));
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  gone_ = "the candidate's process has finished (" + status_text(status) + ")";
  return h;
}

}  // namespace rnx::verify::detail
