// The events rnx-verify-worker writes on its result channel, one JSON object a line, each a described type written
// and read by the one codec (rnx/common/described_json.hpp): the worker fills them, the judge (report_rows.cpp) reads
// them, so both compile against the same type. `event` names the line (worker_event).
#pragma once

#include "rnx/common/described_json.hpp"
#include "rnx/common/error.hpp"
#include "rnx/verify/checks.hpp"

#include <boost/describe.hpp>
#include <boost/json.hpp>
#include <boost/mp11/algorithm.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The closed vocabularies the events carry travel as their names. Each list must name every enumerator: the
// static_asserts below hold each to its enum's last one.
namespace rnx {
BOOST_DESCRIBE_ENUM(errc, usage, bad_input, invalid, not_found, conflict, unauthorized, forbidden, too_large,
                    unavailable, kernel_failed, internal)
}  // namespace rnx

namespace rnx::verify {
BOOST_DESCRIBE_ENUM(outcome, pass, fail, review, skip)
BOOST_DESCRIBE_ENUM(check_group, correctness, audit, containment)
BOOST_DESCRIBE_ENUM(check_id, smoke, shape_sweep, stability, determinism, edge_cases, fresh_inputs, stale_memory,
                    input_mutation, output_aliasing, ignored_inputs, shape_specialization, precision, hidden_work,
                    extra_threads, implausible_speedup, static_scan, patched_globals, sandbox)
}  // namespace rnx::verify

namespace rnx::verify::detail {

// The "event" names of the worker's result lines (the sandbox's launch lines under their names in rnx::sandbox, which
// a test holds these to; its "sandbox_layer" lines are read by sandbox::layer_report), and garbage for a line that
// was not JSON; unknown for any other name.
enum class worker_event {
  unknown,
  sandbox,
  sandbox_proc,
  sandbox_fs,
  ready,
  fatal,
  check,
  speedup,
  costs,
  sealed,
  done,
  garbage
};
// `unknown` is left out: it is no name on the wire (to_string gives "", and no text reads as it).
BOOST_DESCRIBE_ENUM(worker_event, sandbox, sandbox_proc, sandbox_fs, ready, fatal, check, speedup, costs, sealed, done,
                    garbage)

namespace events_detail {
template <class E>
constexpr std::size_t described_count() {
  return boost::mp11::mp_size<boost::describe::describe_enumerators<E>>::value;
}
}  // namespace events_detail

static_assert(events_detail::described_count<errc>() == static_cast<std::size_t>(errc::internal) + 1);
static_assert(events_detail::described_count<outcome>() == static_cast<std::size_t>(outcome::skip) + 1);
static_assert(events_detail::described_count<check_group>() == static_cast<std::size_t>(check_group::containment) + 1);
static_assert(events_detail::described_count<check_id>() == static_cast<std::size_t>(check_id::sandbox) + 1);
static_assert(events_detail::described_count<worker_event>() == static_cast<std::size_t>(worker_event::garbage));

inline std::string_view to_string(worker_event k) { return boost::describe::enum_to_string(k, ""); }

inline std::optional<worker_event> worker_event_from_string(std::string_view text) {
  std::optional<worker_event> found;
  boost::mp11::mp_for_each<boost::describe::describe_enumerators<worker_event>>([&](auto e) {
    if (!found && text == e.name) found = e.value;
  });
  return found;
}

// The worker has its device.
struct ready_event {
  worker_event event = worker_event::ready;
  std::string device;
};

// The worker could not run the checks at all: its error's kind and message (the judge throws it as rnx::error).
struct fatal_event {
  worker_event event = worker_event::fatal;
  errc code = errc::internal;
  std::string message;
};

// One row's outcome for one dtype (`dtype` unset for a row of the whole run); `group` is the row's in the check
// table.
struct check_event {
  worker_event event = worker_event::check;
  check_group group = check_group::audit;
  check_id name = check_id::smoke;
  outcome result = outcome::fail;
  std::string detail;
  std::optional<std::string> dtype;
  double seconds = 0;
};

// The candidate's speedup over the eager reference in one dtype.
struct speedup_event {
  worker_event event = worker_event::speedup;
  std::string dtype;
  double value = 0;
};

// What importing and calling the candidate took in its own process (verify::candidate_costs; shown, never judged).
struct costs_event {
  worker_event event = worker_event::costs;
  double compiler_stack_s = 0;
  double import_s = 0;
  double first_call_s = 0;
  double other_calls_s = 0;
  std::int64_t calls = 0;
};

// Writes the candidate tried outside its scratch folder (or into another process's /proc entries), and the first.
struct write_attempts {
  std::int64_t count = 0;
  std::string first;
};

// Both processes' seccomp filters (`seccomp`: on in both; `why` where not) and what the candidate's refused
// (sandbox::blocked_counts), the candidate's process killed by its filter, and the candidate's processes that ended
// during a case and were restarted.
struct sealed_event {
  worker_event event = worker_event::sealed;
  bool seccomp = false;
  std::string why;
  std::string killed;
  std::int64_t sockets = 0;
  std::int64_t processes = 0;
  std::int64_t io_uring = 0;
  std::int64_t foreign_abi = 0;
  std::int64_t other = 0;
  std::string calls;
  write_attempts writes_outside;
  std::vector<std::string> restarts;
};

// The worker's last line: every row it will write is written.
struct done_event {
  worker_event event = worker_event::done;
};

// Not the worker's: the judge's launch (launch.cpp) stands this in for a line that was not JSON (its first bytes).
struct garbage_event {
  worker_event event = worker_event::garbage;
  std::string line;
};

BOOST_DESCRIBE_STRUCT(ready_event, (), (event, device))
BOOST_DESCRIBE_STRUCT(fatal_event, (), (event, code, message))
BOOST_DESCRIBE_STRUCT(check_event, (), (event, group, name, result, detail, dtype, seconds))
BOOST_DESCRIBE_STRUCT(speedup_event, (), (event, dtype, value))
BOOST_DESCRIBE_STRUCT(costs_event, (), (event, compiler_stack_s, import_s, first_call_s, other_calls_s, calls))
BOOST_DESCRIBE_STRUCT(write_attempts, (), (count, first))
BOOST_DESCRIBE_STRUCT(sealed_event, (),
                      (event, seccomp, why, killed, sockets, processes, io_uring, foreign_abi, other, calls,
                       writes_outside, restarts))
BOOST_DESCRIBE_STRUCT(done_event, (), (event))
BOOST_DESCRIBE_STRUCT(garbage_event, (), (event, line))

// An event as the one line written for it.
inline boost::json::object to_json(const ready_event& e) { return rnx::json::to_object(e); }
inline boost::json::object to_json(const fatal_event& e) { return rnx::json::to_object(e); }
inline boost::json::object to_json(const check_event& e) { return rnx::json::to_object(e); }
inline boost::json::object to_json(const speedup_event& e) { return rnx::json::to_object(e); }
inline boost::json::object to_json(const costs_event& e) { return rnx::json::to_object(e); }
inline boost::json::object to_json(const sealed_event& e) { return rnx::json::to_object(e); }
inline boost::json::object to_json(const done_event& e) { return rnx::json::to_object(e); }
inline boost::json::object to_json(const garbage_event& e) { return rnx::json::to_object(e); }

namespace events_detail {
// `line` as the event E; throws rnx::error(invalid) "verify worker output (NAME): ..." naming the key at fault, or
// the event it names where that is another one.
template <class E>
E read_event(const boost::json::value& line) {
  const worker_event expected = E{}.event;
  const std::string where = "verify worker output (" + std::string(to_string(expected)) + ")";
  E out = rnx::json::from_object<E>(line, where);
  if (out.event != expected) {
    throw error(errc::invalid, where + ": the line is a \"" + std::string(to_string(out.event)) + "\" event");
  }
  return out;
}
}  // namespace events_detail

// One line read as its event (the judge dispatches on "event" first); each throws rnx::error(invalid) naming the key
// for a line that does not read as that event.
inline ready_event ready_from_json(const boost::json::value& v) { return events_detail::read_event<ready_event>(v); }
inline fatal_event fatal_from_json(const boost::json::value& v) { return events_detail::read_event<fatal_event>(v); }
inline check_event check_from_json(const boost::json::value& v) { return events_detail::read_event<check_event>(v); }
inline speedup_event speedup_from_json(const boost::json::value& v) {
  return events_detail::read_event<speedup_event>(v);
}
inline costs_event costs_from_json(const boost::json::value& v) { return events_detail::read_event<costs_event>(v); }
inline sealed_event sealed_from_json(const boost::json::value& v) { return events_detail::read_event<sealed_event>(v); }
inline done_event done_from_json(const boost::json::value& v) { return events_detail::read_event<done_event>(v); }
inline garbage_event garbage_from_json(const boost::json::value& v) {
  return events_detail::read_event<garbage_event>(v);
}

}  // namespace rnx::verify::detail
