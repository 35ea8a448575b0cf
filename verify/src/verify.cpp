// The verify orchestrator: resolves reference and candidate, runs the sandboxed worker, assembles the report.
#include "rnx/verify/verify.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/process.hpp"
#include "rnx/common/text.hpp"
#include "rnx/sandbox/sandbox.hpp"

#include <boost/json.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

namespace bj = boost::json;
namespace fs = std::filesystem;

namespace rnx::verify {

namespace {

// Every row a complete verification reports, in report order.
const std::vector<std::pair<check_group, std::string>> expected_rows = {
    {check_group::correctness, "smoke"},          {check_group::correctness, "shape_sweep"},
    {check_group::correctness, "stability"},      {check_group::correctness, "determinism"},
    {check_group::correctness, "edge_cases"},     {check_group::audit, "fresh_inputs"},
    {check_group::audit, "stale_memory"},         {check_group::audit, "input_mutation"},
    {check_group::audit, "output_aliasing"},      {check_group::audit, "ignored_inputs"},
    {check_group::audit, "shape_specialization"}, {check_group::audit, "precision"},
    {check_group::audit, "hidden_work"},          {check_group::audit, "extra_threads"},
    {check_group::audit, "implausible_speedup"},  {check_group::audit, "static_scan"},
    {check_group::audit, "patched_globals"},      {check_group::containment, "sandbox"},
};

int severity(outcome o) {
  switch (o) {
    case outcome::fail: return 3;
    case outcome::review: return 2;
    case outcome::pass: return 1;
    case outcome::skip: return 0;
  }
  return 3;
}

// A result the judge does not know counts as a failure.
outcome parse_outcome(std::string_view s) {
  for (auto o : {outcome::pass, outcome::review, outcome::skip, outcome::fail}) {
    if (to_string(o) == s) return o;
  }
  return outcome::fail;
}

std::vector<input_spec> parse_inputs(const std::string& text) {
  std::vector<input_spec> out;
  std::stringstream ss(text);
  std::string item;
  std::set<std::string> seen;
  while (std::getline(ss, item, ';')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw error(errc::usage,
                  "--inputs: \"" + item + "\" is not NAME=SHAPE; write e.g. \"q=B,8,128,64;k=B,8,128,64\"");
    }
    input_spec in;
    in.name = item.substr(0, eq);
    in.text = item.substr(eq + 1);
    if (!seen.insert(in.name).second) throw error(errc::usage, "--inputs: input \"" + in.name + "\" is given twice");
    try {
      in.dims = parse_shape(in.text, "--inputs " + in.name);
    } catch (const error& e) {
      throw error(errc::usage, e.what());
    }
    out.push_back(in);
  }
  return out;
}

std::string signal_text(int sig) {
  const char* t = ::strsignal(sig);
  return t ? t : "signal " + std::to_string(sig);
}

}  // namespace

std::string_view to_string(check_group g) {
  switch (g) {
    case check_group::correctness: return "correctness";
    case check_group::audit: return "audit";
    case check_group::containment: return "containment";
  }
  return "audit";
}

std::optional<check_group> check_group_from_string(std::string_view name) {
  return enum_from_name(name, {check_group::correctness, check_group::audit, check_group::containment});
}

std::string_view to_string(outcome o) {
  switch (o) {
    case outcome::pass: return "pass";
    case outcome::fail: return "fail";
    case outcome::review: return "review";
    case outcome::skip: return "skip";
  }
  return "fail";
}

bool verify_report::accepted() const {
  if (checks.empty()) return false;
  for (const auto& c : checks) {
    if (c.result == outcome::fail) return false;
    if (c.result == outcome::review && review_rejects) return false;
  }
  return true;
}

bool verify_report::needs_review() const {
  return std::any_of(checks.begin(), checks.end(), [](const check_row& c) { return c.result == outcome::review; });
}

const check_row* verify_report::find(std::string_view name) const {
  for (const auto& c : checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::vector<std::string> verify_report::failed() const {
  std::vector<std::string> out;
  for (const auto& c : checks) {
    if (c.result == outcome::fail) out.push_back(c.name);
  }
  return out;
}

reference_spec reference_from_manifest(const fs::path& manifest_path, const std::string& kernel) {
  manifest m = load_manifest(manifest_path);
  const kernel_spec* k = m.find_kernel(kernel);
  if (!k) {
    std::string names;
    for (const auto& s : m.kernels) names += (names.empty() ? "" : ", ") + s.name;
    throw error(errc::usage, "--kernel \"" + kernel + "\" is not in " + m.source + " (it has: " + names + ")");
  }
  reference_spec r;
  r.name = k->name;
  r.path = k->resolved_path;
  r.entry = k->entry;
  r.inputs = k->inputs;
  if (!k->batch.empty()) r.batches = k->batch;
  if (!k->dtypes.empty()) r.dtypes = k->dtypes;
  r.device = k->device.empty() ? "auto" : k->device;
  r.tolerances = k->tolerances;
  return r;
}

reference_spec reference_from_file(const fs::path& path, const std::string& inputs, const std::string& entry) {
  if (!fs::exists(path)) {
    throw error(errc::not_found,
                "reference " + path.string() + " does not exist; pass the file the candidate rewrites");
  }
  reference_spec r;
  r.name = path.stem().string();
  r.path = fs::absolute(path);
  r.entry = entry;
  r.inputs = parse_inputs(inputs);
  return r;
}

fs::path default_worker_path() { return helper_program_path("RNX_VERIFY_WORKER", "rnx-verify-worker"); }

namespace {

void validate(const verify_options& o) {
  if (o.reference.path.empty()) throw error(errc::usage, "no reference: pass --config and --kernel, or --reference");
  if (!fs::exists(o.reference.path)) {
    throw error(errc::not_found, "reference " + o.reference.path.string() + " does not exist");
  }
  if (o.candidate.empty()) throw error(errc::usage, "no candidate: pass --candidate FILE");
  if (!fs::exists(o.candidate)) {
    throw error(errc::not_found,
                "candidate " + o.candidate.string() + " does not exist; pass the rewritten kernel file");
  }
  for (const auto& b : o.reference.batches) {
    if (b < 1) throw error(errc::usage, "batch sizes must be at least 1 (got " + std::to_string(b) + ")");
  }
  for (const auto& d : o.reference.dtypes) {
    const auto named = dtype_kind_from_string(d);
    if (!named || *named == dtype_kind::none) {
      throw error(errc::usage, "unsupported dtype \"" + d + "\" (use float32, float16, bfloat16 or float64)");
    }
  }
  if (!(o.speedup_limit > 1)) throw error(errc::usage, "--speedup-limit must be above 1");
  if (o.limits.wall_s <= 0 || o.limits.cpu_s <= 0 || o.limits.memory_mb <= 0) {
    throw error(errc::usage, "sandbox limits (--timeout, --cpu-limit, --memory-limit) must be positive");
  }
}

bj::object job_json(const verify_options& o) {
  bj::array inputs;
  for (const auto& in : o.reference.inputs) inputs.push_back(bj::object{{"name", in.name}, {"shape", in.text}});
  bj::array batches;
  for (auto b : o.reference.batches) batches.push_back(b);
  bj::array dtypes;
  for (const auto& d : o.reference.dtypes) dtypes.push_back(bj::string(d));
  bj::object tolerances;
  for (const auto& [d, t] : o.reference.tolerances) tolerances[d] = bj::object{{"rtol", t.rtol}, {"atol", t.atol}};
  return bj::object{
      {"name", o.reference.name},
      {"reference", bj::object{{"path", fs::absolute(o.reference.path).string()}, {"entry", o.reference.entry}}},
      {"candidate", bj::object{{"path", fs::absolute(o.candidate).string()}, {"entry", o.candidate_entry}}},
      {"inputs", inputs},
      {"batches", batches},
      {"dtypes", dtypes},
      {"device", o.reference.device},
      {"tolerances", tolerances},
      {"seed", static_cast<std::int64_t>(o.seed & 0x7fffffffffffffffULL)},
      {"speedup_limit", o.speedup_limit},
      {"implausible_speedup", o.speedup_review ? "review" : "reject"},
      {"cache_dir", o.cache_dir.string()},
  };
}

// The "event" names of the worker's result lines (the sandbox's launch lines under their names in
// rnx::sandbox; its "sandbox_layer" lines are read by sandbox::layer_report), and garbage for a line that was not
// JSON; unknown for any other name.
enum class worker_event {
  unknown,
  sandbox,
  sandbox_proc,
  sandbox_fs,
  ready,
  fatal,
  check,
  speedup,
  sealed,
  done,
  garbage
};

std::string_view to_string(worker_event k) {
  switch (k) {
    case worker_event::unknown: return "";
    case worker_event::sandbox: return to_string(sandbox::launch_event::sandbox);
    case worker_event::sandbox_proc: return to_string(sandbox::launch_event::sandbox_proc);
    case worker_event::sandbox_fs: return to_string(sandbox::launch_event::sandbox_fs);
    case worker_event::ready: return "ready";
    case worker_event::fatal: return "fatal";
    case worker_event::check: return "check";
    case worker_event::speedup: return "speedup";
    case worker_event::sealed: return "sealed";
    case worker_event::done: return "done";
    case worker_event::garbage: return "garbage";
  }
  return "";
}

std::optional<worker_event> worker_event_from_string(std::string_view text) {
  return enum_from_name(text, {worker_event::sandbox, worker_event::sandbox_proc, worker_event::sandbox_fs,
                               worker_event::ready, worker_event::fatal, worker_event::check, worker_event::speedup,
                               worker_event::sealed, worker_event::done, worker_event::garbage});
}

// A temporary folder removed with everything the candidate wrote into it.
struct worker_outcome {
  std::vector<bj::object> events;
  std::string stderr_tail;
  int exit_code = 0;
  int signal = 0;
  std::string killed_for;  // wall-clock or memory, when the parent killed it
  bool address_space_limited = false;
};

worker_outcome run_worker(const verify_options& o, const fs::path& dir, const std::vector<std::string>& env) {
  fs::path job = dir / "job.json";
  {
    std::ofstream out(job);
    // The worker may write only inside its scratch folder (Landlock), so compiled kernels are cached there: a
    // candidate must not be able to plant a library in the shared cache that a later run would load unsandboxed.
    verify_options with_cache = o;
    if (with_cache.cache_dir.empty()) with_cache.cache_dir = dir / "kernel-cache";
    out << json::serialize(job_json(with_cache));
    if (!out) throw error(errc::internal, job.string() + ": cannot write the verify job");
  }
  fs::path worker = o.worker.empty() ? default_worker_path() : o.worker;
  if (worker.has_parent_path() && !fs::exists(worker)) {
    throw error(errc::not_found, "the verify worker " + worker.string() +
                                     " does not exist; build the "
                                     "rnx-verify-worker target or set RNX_VERIFY_WORKER");
  }
  if (!worker.has_parent_path()) {
    throw error(errc::not_found,
                "rnx-verify-worker was not found beside this program; build it or set RNX_VERIFY_WORKER");
  }
  // The worker must not read this process's environment (and its secrets) through /proc/PID/environ.
  ::prctl(PR_SET_DUMPABLE, 0);
  // An address-space limit breaks CUDA (the driver reserves huge virtual ranges): only where no GPU can be used.
  const auto device = device_kind_from_string(o.reference.device);
  const bool cpu_only =
      device == device_kind::cpu || (device == device_kind::automatic && !fs::exists("/dev/nvidiactl"));
  // The worker reads nothing of the host but the installed files and the job's: the two kernels, the folders of
  // their helper modules (each file's folder is on sys.path) and a kernel cache the caller named.
  sandbox::sandbox_limits limits = o.limits;
  limits.confine_reads = true;
  for (const fs::path& kernel : {o.reference.path, o.candidate}) {
    limits.readable.push_back(fs::absolute(kernel));
    limits.readable.push_back(fs::absolute(kernel).parent_path());
  }
  if (!o.cache_dir.empty()) limits.readable.push_back(fs::absolute(o.cache_dir));
  sandbox::sandboxed_process p =
      sandbox::spawn_sandboxed({fs::absolute(worker).string(), "--job", job.string()}, env, dir, limits, cpu_only);
  worker_outcome w;
  w.address_space_limited = cpu_only;
  std::string buffer;
  const auto start = std::chrono::steady_clock::now();
  bool open = true;
  while (open) {
    pollfd pfd{p.read_fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, 100);
    if (ready > 0) {
      char chunk[8192];
      ssize_t n = ::read(p.read_fd, chunk, sizeof chunk);
      if (n > 0) {
        buffer.append(chunk, static_cast<std::size_t>(n));
        std::size_t nl;
        while ((nl = buffer.find('\n')) != std::string::npos) {
          std::string line = buffer.substr(0, nl);
          buffer.erase(0, nl + 1);
          try {
            bj::value v = json::parse(line, "verify worker output");
            if (v.is_object()) w.events.push_back(v.as_object());
          } catch (const std::exception&) {
            const std::string_view garbage = to_string(worker_event::garbage);
            w.events.push_back(bj::object{{"event", garbage}, {"line", line.substr(0, 200)}});
          }
        }
        if (buffer.size() > (1 << 20)) buffer.clear();  // a flood of unterminated output is dropped, not kept
      } else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        open = false;
      }
    } else if (ready < 0 && errno != EINTR) {
      open = false;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (w.killed_for.empty() && elapsed > o.limits.wall_s) {
      w.killed_for = "it ran past the " + std::to_string(static_cast<int>(o.limits.wall_s)) + " s wall-clock limit";
    } else if (w.killed_for.empty() && sandbox::resident_mb(p.pid) > o.limits.memory_mb) {
      w.killed_for = "it used more than " + std::to_string(o.limits.memory_mb) + " MiB of memory";
    }
    if (!w.killed_for.empty()) {
      ::kill(-p.pid, SIGKILL);
      ::kill(p.pid, SIGKILL);
      open = false;
    }
  }
  ::close(p.read_fd);
  int status = 0;
  while (::waitpid(p.pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::kill(-p.pid, SIGKILL);  // anything it left behind in its process group
  if (WIFSIGNALED(status)) w.signal = WTERMSIG(status);
  if (WIFEXITED(status)) w.exit_code = WEXITSTATUS(status);
  return w;
}

std::string join_names(const std::vector<std::string>& names, std::size_t most) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < most; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > most) out += ", ...";
  return out;
}

// What the worker's event lines said, read in order.
struct worker_events {
  std::map<std::string, check_row> rows;
  std::map<std::string, std::vector<std::string>> details;
  std::set<std::string> seen;
  std::vector<std::string> tampering;
  bool done = false;
  std::string network = "unknown (the worker said nothing)";
  bool network_namespace = false;
  int landlock = -1;  // -1: the worker never said; 0: no Landlock; else its ABI
  std::string filesystem = "unknown (the worker said nothing)";
  std::int64_t writes_outside = 0;
  bool own_processes = false;
  std::string processes_how = "unknown (the worker said nothing)";
  std::string first_write;
  bool sealed = false;
  std::string seal_why;
  std::int64_t sockets = 0, processes = 0, io_uring = 0;
  std::string refused_calls;     // every call the candidate's seccomp filter refused, by name and count
  std::string killed_by_filter;  // the candidate's process, killed by its seccomp filter (a foreign-ABI call)
  sandbox::layer_report layers;  // never root, session, /proc/sys, /dev, scratch, process limit
  std::string last_started;
};

// A "check" event: one row's outcome for one dtype; the row keeps the most severe outcome of its dtypes.
void read_check(worker_events& ev, const bj::object& e, const verify_options& o) {
  std::string name(e.at("name").as_string());
  const std::string group_text(e.at("group").as_string());
  const std::optional<check_group> group = check_group_from_string(group_text);
  if (!group) ev.tampering.push_back("check " + name + " came with the unknown group '" + group_text + "'");
  std::string dtype = e.contains("dtype") ? std::string(e.at("dtype").as_string()) : "";
  if (!ev.seen.insert(name + "|" + dtype).second) ev.tampering.push_back("check " + name + " reported twice");
  check_row& r = ev.rows[name];
  outcome now = parse_outcome(e.at("result").as_string());
  if (r.name.empty()) {
    r.group = group.value_or(check_group::audit);
    r.name = name;
    r.result = now;
  } else if (severity(now) > severity(r.result)) {
    r.result = now;
  }
  r.seconds += e.at("seconds").to_number<double>();
  std::string detail(e.at("detail").as_string());
  ev.details[name].push_back(o.reference.dtypes.size() > 1 && !dtype.empty() ? dtype + ": " + detail : detail);
  ev.last_started = name;
}

// The "sealed" event: whether the seccomp filter is on, and what the candidate tried that it refused.
void read_sealed(worker_events& ev, const bj::object& e) {
  ev.sealed = e.at("seccomp").as_bool();
  ev.seal_why = std::string(e.at("why").as_string());
  ev.sockets = e.at("sockets").as_int64();
  ev.processes = e.at("processes").as_int64();
  ev.io_uring = e.at("io_uring").as_int64();
  if (const auto* c = e.if_contains("calls"); c && c->is_string()) ev.refused_calls = std::string(c->as_string());
  if (const auto* k = e.if_contains("killed"); k && k->is_string()) ev.killed_by_filter = std::string(k->as_string());
  if (e.contains("writes_outside")) {
    const auto& attempts = e.at("writes_outside").as_object();
    ev.writes_outside = attempts.at("count").to_number<std::int64_t>();
    ev.first_write = std::string(attempts.at("first").as_string());
  }
}

// A "fatal" event: the worker could not run the checks at all; its error, as rnx::error.
[[noreturn]] void throw_fatal(const bj::object& e) {
  const errc code =
      e.contains("code") ? errc_from_name(e.at("code").as_string()).value_or(errc::invalid) : errc::internal;
  std::string message = std::string(e.at("message").as_string());
  if (code == errc::internal) throw error(errc::internal, "the verify worker failed: " + message);
  throw error(code == errc::not_found ? errc::not_found : errc::invalid, message);
}

// Reads every event line of the worker; the device and speedup go into the report. A "fatal" event throws.
worker_events read_events(const worker_outcome& w, const verify_options& o, verify_report& report) {
  worker_events ev;
  for (const auto& e : w.events) {
    const worker_event kind = e.contains("event") && e.at("event").is_string()
                                  ? worker_event_from_string(e.at("event").as_string()).value_or(worker_event::unknown)
                                  : worker_event::unknown;
    if (ev.done && kind != worker_event::garbage) ev.tampering.push_back("output after the final line");
    if (ev.layers.read(e)) continue;
    switch (kind) {
      case worker_event::sandbox:
        ev.network = std::string(e.at("how").as_string());
        ev.network_namespace = e.contains("network") && e.at("network").is_string() &&
                               sandbox::network_cut_from_string(std::string_view(e.at("network").as_string())) ==
                                   sandbox::network_cut::own_namespace;
        break;
      case worker_event::sandbox_proc:
        ev.own_processes = e.at("own").as_bool();
        ev.processes_how = std::string(e.at("how").as_string());
        break;
      case worker_event::sandbox_fs:
        ev.landlock = static_cast<int>(e.at("landlock").to_number<std::int64_t>());
        ev.filesystem = std::string(e.at("how").as_string());
        break;
      case worker_event::ready: report.device = std::string(e.at("device").as_string()); break;
      case worker_event::fatal: throw_fatal(e);
      case worker_event::check: read_check(ev, e, o); break;
      case worker_event::speedup: {
        const double v = e.at("value").to_number<double>();
        report.speedup = report.speedup ? std::max(*report.speedup, v) : v;
        break;
      }
      case worker_event::sealed: read_sealed(ev, e); break;
      case worker_event::done: ev.done = true; break;
      case worker_event::garbage:
        ev.tampering.push_back("a line that is not JSON: " + std::string(e.at("line").as_string()).substr(0, 60));
        break;
      case worker_event::unknown: break;
    }
  }
  for (auto& [name, r] : ev.rows) {
    for (const auto& d : ev.details[name]) r.detail += (r.detail.empty() ? "" : " | ") + d;
  }
  return ev;
}

// How the worker ended, when that is why rows are missing ("" when it finished normally).
std::string how_it_ended(const worker_outcome& w, const worker_events& ev, const verify_options& o) {
  std::string ended;
  if (!w.killed_for.empty()) {
    ended = "the worker was killed because " + w.killed_for;
  } else if (w.signal) {
    ended = "the worker died of " + signal_text(w.signal) +
            (w.signal == SIGXCPU ? " (the CPU-time limit of " + std::to_string(static_cast<int>(o.limits.cpu_s)) + " s)"
                                 : "");
  } else if (!ev.done) {
    ended = "the worker exited (status " + std::to_string(w.exit_code) + ") before finishing";
  } else if (w.exit_code != 0) {
    ended = "the worker exited with status " + std::to_string(w.exit_code);
  }
  if (!ended.empty() && !ev.last_started.empty()) ended += " after the " + ev.last_started + " check";
  return ended;
}

// What the candidate did that the sandbox stopped, and how the worker's run went wrong.
std::vector<std::string> sandbox_problems(const worker_events& ev, const std::string& ended) {
  std::vector<std::string> problems;
  if (ev.sockets) {
    problems.push_back("the candidate tried to open " + std::to_string(ev.sockets) + " network socket(s)");
  }
  if (ev.processes) {
    problems.push_back("the candidate left " + std::to_string(ev.processes) + " process(es) running after its calls");
  }
  if (ev.io_uring) {
    problems.push_back("the candidate tried to set up io_uring " + std::to_string(ev.io_uring) + " time(s)");
  }
  if (!ev.refused_calls.empty()) problems.push_back("its seccomp filter refused " + ev.refused_calls);
  if (!ev.killed_by_filter.empty()) problems.push_back(ev.killed_by_filter);
  if (ev.writes_outside) {
    problems.push_back("the candidate tried " + std::to_string(ev.writes_outside) +
                       " time(s) to write outside its scratch folder or to open another process's /proc entries "
                       "(first: " +
                       ev.first_write + ")");
  }
  if (!ended.empty()) problems.push_back(ended);
  if (!ev.tampering.empty()) problems.push_back("the worker's report was tampered with (" + ev.tampering.front() + ")");
  return problems;
}

// The sandbox layers that could not be applied (fail closed: a missing layer is a failed stage, not a quieter pass).
std::vector<std::string> missing_layers(const worker_events& ev) {
  std::vector<std::string> missing;
  if (!ev.network_namespace) missing.push_back("no network namespace (" + ev.network + ")");
  if (ev.landlock <= 0) missing.push_back("no filesystem confinement (" + ev.filesystem + ")");
  if (!ev.own_processes) missing.push_back("no process isolation (" + ev.processes_how + ")");
  for (const auto& m : ev.layers.missing()) missing.push_back(m);
  if (!ev.sealed) {
    missing.push_back("no seccomp filter (" +
                      (ev.seal_why.empty() ? std::string("the worker ended before reporting it") : ev.seal_why) + ")");
  }
  return missing;
}

// The sandbox row: failed when the candidate was stopped or a layer is missing (unless weaker was allowed); its
// detail names every layer and limit that held.
check_row sandbox_row(check_group group, const std::string& name, const worker_events& ev, const worker_outcome& w,
                      const verify_options& o, const std::string& ended, const std::vector<std::string>& withheld) {
  check_row r{group, name, outcome::pass, "", 0};
  std::vector<std::string> problems = sandbox_problems(ev, ended);
  const std::vector<std::string> missing = missing_layers(ev);
  if (!missing.empty() && !o.limits.allow_weaker) {
    problems.push_back("the sandbox could not apply every layer: " + join_names(missing, 10) +
                       "; run where unprivileged user namespaces and seccomp are allowed, or pass "
                       "--allow-weaker-sandbox to accept the weaker containment");
  }
  std::ostringstream os;
  if (!problems.empty()) {
    os << "stopped: " << join_names(problems, 5) << ". ";
    r.result = outcome::fail;
  }
  if (o.limits.allow_weaker) {
    os << "WEAKER SANDBOX ALLOWED (--allow-weaker-sandbox)"
       << (missing.empty() ? ", though every layer was applied" : ": " + join_names(missing, 10)) << ". ";
  }
  const std::string applied = ev.layers.describe();
  os << "network: " << (ev.network_namespace ? ev.network : "not isolated: " + ev.network)
     << "; files: " << ev.filesystem << "; processes: " << ev.processes_how << (applied.empty() ? "" : "; " + applied)
     << "; seccomp: "
     << (ev.sealed ? "sockets (Unix ones too), io_uring, ptrace, TIOCSTI and foreign ABIs refused; programs only "
                     "from the system's and Python's folders"
         : ev.seal_why.empty() ? "unknown (the worker ended before reporting it)"
                               : "not applied (" + ev.seal_why + ")")
     << "; limits: " << static_cast<int>(o.limits.cpu_s) << " s CPU, " << static_cast<int>(o.limits.wall_s)
     << " s wall, " << o.limits.memory_mb << " MiB memory" << (w.address_space_limited ? "" : " (resident, watched)")
     << ", " << o.limits.file_mb << " MiB files, " << o.limits.processes << " tasks; environment: " << withheld.size()
     << " variable(s) withheld";
  std::vector<std::string> secrets;
  for (const auto& n : withheld) {
    if (sandbox::looks_secret(n)) secrets.push_back(n);
  }
  if (!secrets.empty()) os << " (" << join_names(secrets, 6) << ")";
  os << "; its own temporary folder";
  r.detail = os.str();
  return r;
}

}  // namespace

verify_report verify_candidate(const verify_options& o) {
  validate(o);
  const auto started = std::chrono::steady_clock::now();
  verify_report report;
  report.reference = o.reference.path.string() + (o.reference.entry.empty() ? "" : ":" + o.reference.entry);
  report.candidate = o.candidate.string() + (o.candidate_entry.empty() ? "" : ":" + o.candidate_entry);
  report.dtypes = o.reference.dtypes;
  report.review_rejects = o.review_rejects;

  sandbox::scratch_folder dir("rnx-verify-");
  std::vector<std::string> withheld;
  std::vector<std::string> env = sandbox::sandbox_environment(o.limits, dir.path(), &withheld);
  worker_outcome w = run_worker(o, dir.path(), env);
  const worker_events ev = read_events(w, o, report);
  // How the worker ended decides what the missing rows say.
  const std::string ended = how_it_ended(w, ev, o);
  for (const auto& [group, name] : expected_rows) {
    if (name == "sandbox") {
      report.checks.push_back(sandbox_row(group, name, ev, w, o, ended, withheld));
      continue;
    }
    auto it = ev.rows.find(name);
    if (it != ev.rows.end()) {
      report.checks.push_back(it->second);
    } else {
      report.checks.push_back(
          {group, name, outcome::fail, "not run: " + (ended.empty() ? "the candidate did not load" : ended), 0});
    }
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

bj::object to_json(const verify_report& r) {
  bj::array checks;
  for (const auto& c : r.checks) {
    checks.push_back(bj::object{{"group", to_string(c.group)},
                                {"name", c.name},
                                {"result", std::string(to_string(c.result))},
                                {"detail", c.detail},
                                {"seconds", c.seconds}});
  }
  bj::array dtypes;
  for (const auto& d : r.dtypes) dtypes.push_back(bj::string(d));
  bj::object o{{"schema", "rnx.verify/v1"},
               {"verdict", r.accepted() ? "accepted" : "rejected"},
               {"needs_review", r.needs_review()},
               {"reference", r.reference},
               {"candidate", r.candidate},
               {"device", r.device},
               {"dtypes", dtypes},
               {"seconds", r.seconds},
               {"checks", checks}};
  if (r.speedup)
    o["speedup"] = *r.speedup;
  else
    o["speedup"] = nullptr;
  bj::array failed;
  for (const auto& f : r.failed()) failed.push_back(bj::string(f));
  o["failed"] = failed;
  return o;
}

namespace {

std::string one_line(std::string s, std::size_t most) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > most) s = s.substr(0, most - 3) + "...";
  return s;
}

std::string summary(const verify_report& r) {
  std::ostringstream os;
  os << (r.accepted() ? "ACCEPTED" : "REJECTED");
  if (!r.accepted()) os << " (failed: " << join_names(r.failed(), 8) << ")";
  if (r.needs_review()) os << "; marked for review";
  if (r.speedup) os << "; speedup " << std::fixed << std::setprecision(2) << *r.speedup << "x";
  os << "; " << std::fixed << std::setprecision(1) << r.seconds << " s on " << (r.device.empty() ? "?" : r.device);
  return os.str();
}

}  // namespace

std::string render_text(const verify_report& r) {
  std::ostringstream os;
  os << "rnx verify: " << terminal_safe(r.candidate, false) << " against " << terminal_safe(r.reference, false) << "\n";
  std::size_t width = 5;
  for (const auto& c : r.checks) width = std::max(width, to_string(c.group).size() + 1 + c.name.size());
  for (const auto& c : r.checks) {
    std::string label = std::string(to_string(c.group)) + "/" + c.name;
    os << "  " << label << std::string(width - label.size() + 2, ' ') << std::left << std::setw(7)
       << to_string(c.result) << terminal_safe(one_line(c.detail, 400), false) << "\n";
  }
  os << terminal_safe(summary(r), false) << "\n";
  return os.str();
}

std::string render_markdown(const verify_report& r) {
  auto cell = [](std::string s) { return markdown_escape(one_line(std::move(s), 600)); };
  std::ostringstream os;
  os << "### rnx verify: " << (r.accepted() ? "accepted" : "rejected") << "\n\n";
  os << markdown_code(one_line(r.candidate, 600)) << " against " << markdown_code(one_line(r.reference, 600)) << " on "
     << markdown_escape(r.device) << "\n\n";
  os << "| stage / check | result | detail |\n| --- | --- | --- |\n";
  for (const auto& c : r.checks) {
    const char* mark = c.result == outcome::pass     ? "pass"
                       : c.result == outcome::fail   ? "**FAIL**"
                       : c.result == outcome::review ? "*review*"
                                                     : "skip";
    os << "| " << to_string(c.group) << " / " << c.name << " | " << mark << " | " << cell(c.detail) << " |\n";
  }
  os << "\n" << markdown_escape(summary(r)) << "\n";
  return os.str();
}

}  // namespace rnx::verify
