// The judge's reading of the worker's result lines: every row of the check table, the sandbox row from what the
// worker said of its layers and of what the candidate tried.
#include "orchestrator.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/secret_scan.hpp"
#include "rnx/common/text.hpp"
#include "rnx/sandbox/sandbox.hpp"

#include <boost/json.hpp>

#include <signal.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

namespace bj = boost::json;

namespace rnx::verify::detail {

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
    case worker_event::costs: return "costs";
    case worker_event::sealed: return "sealed";
    case worker_event::done: return "done";
    case worker_event::garbage: return "garbage";
  }
  return "";
}

std::optional<worker_event> worker_event_from_string(std::string_view text) {
  return enum_from_name(text, {worker_event::sandbox, worker_event::sandbox_proc, worker_event::sandbox_fs,
                               worker_event::ready, worker_event::fatal, worker_event::check, worker_event::speedup,
                               worker_event::costs, worker_event::sealed, worker_event::done, worker_event::garbage});
}

namespace {

int severity(outcome o) {
  switch (o) {
    case outcome::fail: return 3;
    case outcome::review: return 2;
    case outcome::pass: return 1;
    case outcome::skip: return 0;
  }
  return 3;
}

std::string signal_text(int sig) {
  const char* t = ::strsignal(sig);
  return t ? t : "signal " + std::to_string(sig);
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
  std::vector<std::string> restarts;  // the candidate's processes that ended during a case and were replaced
};

// The result of a "check" event; text that is not an outcome's name is the worker's failure, never a quiet fail.
outcome read_outcome(const bj::object& e, const std::string& name) {
  const std::string_view text = e.at("result").as_string();
  if (const std::optional<outcome> o = outcome_from_string(text)) return *o;
  throw error(errc::internal, "the verify worker failed: its check row '" + message_shown(name, 60) +
                                  "' came with the unknown result '" + message_shown(text, 60) +
                                  "' (not pass, fail, review or skip); rebuild rnx-verify-worker from the same "
                                  "source as rnx");
}

// A "check" event: one row's outcome for one dtype; the row keeps the most severe outcome of its dtypes.
void read_check(worker_events& ev, const bj::object& e, const verify_options& o) {
  std::string name(e.at("name").as_string());
  const std::string group_text(e.at("group").as_string());
  const std::optional<check_group> group = check_group_from_string(group_text);
  if (!group) ev.tampering.push_back("check " + name + " came with the unknown group '" + group_text + "'");
  std::string dtype = e.contains("dtype") ? std::string(e.at("dtype").as_string()) : "";
  if (!ev.seen.insert(name + "|" + dtype).second) ev.tampering.push_back("check " + name + " reported twice");
  const outcome now = read_outcome(e, name);
  check_row& r = ev.rows[name];
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
  if (const auto* r = e.if_contains("restarts"); r && r->is_array()) {
    for (const auto& v : r->as_array()) {
      if (v.is_string() && ev.restarts.size() < 4) ev.restarts.emplace_back(v.as_string());
    }
  }
  if (e.contains("writes_outside")) {
    const auto& attempts = e.at("writes_outside").as_object();
    ev.writes_outside = attempts.at("count").to_number<std::int64_t>();
    ev.first_write = std::string(attempts.at("first").as_string());
  }
}

// The "costs" event: what importing and calling the candidate took in its process (shown, never judged).
candidate_costs read_costs(const bj::object& e) {
  auto seconds = [&e](const char* key) {
    const bj::value* v = e.if_contains(key);
    return v && v->is_number() ? std::max(0.0, v->to_number<double>()) : 0.0;
  };
  candidate_costs c;
  c.compiler_stack_s = seconds("compiler_stack_s");
  c.import_s = seconds("import_s");
  c.first_call_s = seconds("first_call_s");
  c.other_calls_s = seconds("other_calls_s");
  c.calls = static_cast<std::int64_t>(seconds("calls"));
  return c;
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
      case worker_event::costs: report.costs = read_costs(e); break;
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
    if (credential_name(n)) secrets.push_back(n);
  }
  if (!secrets.empty()) os << " (" << join_names(secrets, 6) << ")";
  os << "; its own temporary folder";
  if (!ev.restarts.empty()) {
    os << "; the candidate's process ended during a case and was restarted " << ev.restarts.size() << " time(s) ("
       << join_names(ev.restarts, 3) << ")";
  }
  r.detail = os.str();
  return r;
}

}  // namespace

void add_rows(verify_report& report, const worker_outcome& w, const verify_options& o,
              const std::vector<std::string>& withheld) {
  const worker_events ev = read_events(w, o, report);
  // How the worker ended decides what the missing rows say.
  const std::string ended = how_it_ended(w, ev, o);
  for (const check_entry& c : check_table) {
    const std::string name(to_string(c.id));
    if (c.id == check_id::sandbox) {
      report.checks.push_back(sandbox_row(c.group, name, ev, w, o, ended, withheld));
      continue;
    }
    auto it = ev.rows.find(name);
    if (it != ev.rows.end()) {
      report.checks.push_back(it->second);
    } else {
      report.checks.push_back(
          {c.group, name, outcome::fail, "not run: " + (ended.empty() ? "the candidate did not load" : ended), 0});
    }
  }
}

}  // namespace rnx::verify::detail
