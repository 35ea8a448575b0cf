// The judge's reading of the worker's result lines: every row of the check table, the sandbox row from what the
// worker said of its layers and of what the candidate tried.
#include "orchestrator.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/secret_scan.hpp"
#include "rnx/common/text.hpp"
#include "rnx/sandbox/sandbox.hpp"

#include <boost/json.hpp>

#include <signal.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

namespace bj = boost::json;

namespace rnx::verify::detail {

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

// A "check" line whose result is a string that names no outcome: the worker's failure (one built from other
// sources than rnx), never a quiet fail nor a row the judge guesses at.
void refuse_unknown_result(const bj::object& e) {
  const bj::value* result = e.if_contains("result");
  if (!result || !result->is_string() || outcome_from_string(result->as_string())) return;
  const bj::value* name = e.if_contains("name");
  const std::string_view name_text = name && name->is_string() ? std::string_view(name->as_string()) : "";
  throw error(errc::internal, "the verify worker failed: its check row '" + message_shown(name_text, 60) +
                                  "' came with the unknown result '" + message_shown(result->as_string(), 60) +
                                  "' (not pass, fail, review or skip); rebuild rnx-verify-worker from the same "
                                  "source as rnx");
}

// `e` read as its event by `reader`; where it does not read as one, nothing, and the codec's complaint is recorded
// as tampering (the candidate runs in the worker's process and may write any line), never a crash of the judge.
template <class Event>
std::optional<Event> read_line(worker_events& ev, const bj::object& e, Event (*reader)(const bj::value&)) {
  try {
    return reader(e);
  } catch (const error& x) {
    ev.tampering.push_back("a \"" + std::string(to_string(Event{}.event)) +
                           "\" line that does not read as one: " + message_shown(x.what(), 200));
    return std::nullopt;
  }
}

// A "check" event: one row's outcome for one dtype; the row keeps the most severe outcome of its dtypes.
void read_check(worker_events& ev, const check_event& c, const verify_options& o) {
  const std::string name(to_string(c.name));
  const std::string dtype = c.dtype.value_or("");
  if (c.group != group_of(c.name)) {
    ev.tampering.push_back("check " + name + " came with the group '" + std::string(to_string(c.group)) +
                           "', not its own '" + std::string(to_string(group_of(c.name))) + "'");
  }
  if (!ev.seen.insert(name + "|" + dtype).second) ev.tampering.push_back("check " + name + " reported twice");
  check_row& r = ev.rows[name];
  if (r.name.empty()) {
    r.group = group_of(c.name);
    r.name = name;
    r.result = c.result;
  } else if (severity(c.result) > severity(r.result)) {
    r.result = c.result;
  }
  r.seconds += c.seconds;
  ev.details[name].push_back(o.reference.dtypes.size() > 1 && !dtype.empty() ? dtype + ": " + c.detail : c.detail);
  ev.last_started = name;
}

// The "sealed" event: whether the seccomp filter is on, and what the candidate tried that it refused.
void read_sealed(worker_events& ev, const sealed_event& s) {
  ev.sealed = s.seccomp;
  ev.seal_why = s.why;
  ev.sockets = s.sockets;
  ev.processes = s.processes;
  ev.io_uring = s.io_uring;
  ev.refused_calls = s.calls;
  ev.killed_by_filter = s.killed;
  for (const std::string& r : s.restarts) {
    if (ev.restarts.size() < 4) ev.restarts.push_back(r);
  }
  ev.writes_outside = s.writes_outside.count;
  ev.first_write = s.writes_outside.first;
}

// The "costs" event: what importing and calling the candidate took in its process (shown, never judged).
candidate_costs read_costs(const costs_event& e) {
  candidate_costs c;
  c.compiler_stack_s = std::max(0.0, e.compiler_stack_s);
  c.import_s = std::max(0.0, e.import_s);
  c.first_call_s = std::max(0.0, e.first_call_s);
  c.other_calls_s = std::max(0.0, e.other_calls_s);
  c.calls = std::max<std::int64_t>(0, e.calls);
  return c;
}

// A "fatal" event: the worker could not run the checks at all; its error, as rnx::error.
[[noreturn]] void throw_fatal(const fatal_event& f) {
  if (f.code == errc::internal) throw error(errc::internal, "the verify worker failed: " + f.message);
  throw error(f.code == errc::not_found ? errc::not_found : errc::invalid, f.message);
}

// The event a line names; unknown for a line without a name or with one the judge does not read.
worker_event event_of(const bj::object& e) {
  const bj::value* name = e.if_contains("event");
  if (!name || !name->is_string()) return worker_event::unknown;
  return worker_event_from_string(name->as_string()).value_or(worker_event::unknown);
}

// Reads every event line of the worker; the device and speedup go into the report. A "fatal" event throws.
worker_events read_events(const worker_outcome& w, const verify_options& o, verify_report& report) {
  worker_events ev;
  for (const auto& e : w.events) {
    const worker_event kind = event_of(e);
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
      case worker_event::ready:
        if (auto r = read_line(ev, e, ready_from_json)) report.device = r->device;
        break;
      case worker_event::fatal:
        if (auto f = read_line(ev, e, fatal_from_json)) throw_fatal(*f);
        break;
      case worker_event::check:
        refuse_unknown_result(e);
        if (auto c = read_line(ev, e, check_from_json)) read_check(ev, *c, o);
        break;
      case worker_event::speedup:
        if (auto s = read_line(ev, e, speedup_from_json)) {
          report.speedup = report.speedup ? std::max(*report.speedup, s->value) : s->value;
        }
        break;
      case worker_event::costs:
        if (auto c = read_line(ev, e, costs_from_json)) report.costs = read_costs(*c);
        break;
      case worker_event::sealed:
        if (auto s = read_line(ev, e, sealed_from_json)) read_sealed(ev, *s);
        break;
      case worker_event::done:
        if (read_line(ev, e, done_from_json)) ev.done = true;
        break;
      case worker_event::garbage:
        if (auto g = read_line(ev, e, garbage_from_json)) {
          ev.tampering.push_back("a line that is not JSON: " + g->line.substr(0, 60));
        }
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
