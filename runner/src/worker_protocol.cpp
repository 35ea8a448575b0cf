// The worker protocol's JSON: the job file the orchestrator writes and the event lines the worker writes back, all
// through the one described-type codec.
#include "worker_protocol.hpp"

#include "rnx/common/described_json.hpp"
#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"

namespace rnx::runner::detail {

namespace bj = boost::json;

bj::value to_json(const worker_job& job) { return json::to_object(job); }

worker_job job_from_json(const bj::value& v) { return json::from_object<worker_job>(v, "worker job"); }

std::string_view to_string(worker_line l) { return boost::describe::enum_to_string(l, "result"); }

std::optional<worker_line> worker_line_from_string(std::string_view name) {
  return enum_from_name(name, {worker_line::loaded, worker_line::contained, worker_line::log, worker_line::ready,
                               worker_line::start, worker_line::result});
}

bj::object to_json(const loaded_event& e) { return json::to_object(e); }
bj::object to_json(const contained_event& e) { return json::to_object(e); }
bj::object to_json(const log_event& e) { return json::to_object(e); }
bj::object to_json(const ready_event& e) { return json::to_object(e); }
bj::object to_json(const start_event& e) { return json::to_object(e); }
bj::object to_json(const result_event& e) { return json::to_object(e); }

std::optional<worker_event> event_from_line(const std::string& line) {
  bj::value v;
  try {
    v = json::parse(line, "worker output");
  } catch (const error&) {
    return std::nullopt;
  }
  const bj::object* object = v.if_object();
  const bj::value* kind = object ? object->if_contains("event") : nullptr;
  if (!kind || !kind->is_string()) return std::nullopt;
  switch (worker_line_from_string(std::string_view(kind->as_string())).value_or(worker_line::log)) {
    case worker_line::ready: return worker_event{json::from_object<ready_event>(v, "worker output (ready)")};
    case worker_line::start: return worker_event{json::from_object<start_event>(v, "worker output (start)")};
    case worker_line::result: return worker_event{json::from_object<result_event>(v, "worker output (result)")};
    default: return std::nullopt;  // the other lines, and the sandbox's, are read where they matter
  }
}

}  // namespace rnx::runner::detail
