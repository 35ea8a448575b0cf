// JSON form of worker jobs; the orchestrator writes it to a file the worker reads.
#include "worker_protocol.hpp"

#include "rnx/common/described_json.hpp"
#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"

#include <cmath>

namespace rnx::runner::detail {

namespace bj = boost::json;

bj::value to_json(const worker_job& job) { return json::to_object(job); }

worker_job job_from_json(const bj::value& v) { return json::from_object<worker_job>(v, "worker job"); }

std::string_view to_string(worker_line l) {
  switch (l) {
    case worker_line::loaded: return "loaded";
    case worker_line::contained: return "contained";
    case worker_line::log: return "log";
    case worker_line::ready: return "ready";
    case worker_line::start: return "start";
    case worker_line::result: return "result";
  }
  return "result";
}

std::optional<worker_line> worker_line_from_string(std::string_view name) {
  return enum_from_name(name, {worker_line::loaded, worker_line::contained, worker_line::log, worker_line::ready,
                               worker_line::start, worker_line::result});
}

namespace {

// A checked error (max_abs_err, rel_err) may be unbounded; the run document stores it as 1e308.
double bounded(const json::reader& r) {
  const double v = r.value().to_number<double>();
  return std::isinf(v) ? 1e308 : v;
}

// A status the orchestrator does not know is the worker's error.
result_status worker_status(const std::string& s) {
  return result_status_from_string(s).value_or(result_status::error);
}

side_outcome outcome_from(const json::reader& r) {
  side_outcome out;
  out.status = worker_status(r.string("status"));
  out.device = r.string("device");
  out.message = r.string_or("message", "");
  if (r.has("max_abs_err")) {
    out.check = side_outcome::reference_check{bounded(r.at("max_abs_err")), bounded(r.at("rel_err")),
                                              tolerance{r.number("rtol"), r.number("atol")}};
  }
  if (auto w = r.maybe("work")) {
    out.work = work_info{w->integer("flops"), w->integer("bytes"), work_source::counted,
                         w->has("elementwise") ? std::optional<std::int64_t>(w->integer("elementwise")) : std::nullopt};
  }
  if (auto b = r.maybe("bound")) out.bound = physical_bound{b->integer("output_bytes"), b->number("write_ms")};
  out.work_error = r.string_or("work_error", "");
  out.inputs_note = r.string_or("inputs_note", "");
  if (r.has("control_ms")) {
    for (const auto& v : r.at("control_ms").array()) out.control_ms.push_back(v.to_number<double>());
  }
  if (out.status != result_status::ok) return out;
  auto samples = r.at("samples_ms");
  for (const auto& s : samples.array()) out.samples_ms.push_back(s.to_number<double>());
  if (auto inputs = r.maybe("timed_inputs")) {
    const std::optional<timed_inputs> mode = timed_inputs_from_string(inputs->string());
    if (!mode) inputs->fail("\"same\" or \"fresh\"");
    out.inputs = *mode;
  }
  if (auto l2 = r.maybe("l2")) {
    const std::optional<l2_state> state = l2_state_from_string(l2->string());
    if (!state) l2->fail("\"flushed\"");
    out.l2 = *state;
  }
  if (r.has("minor_faults")) {
    out.disturbed = side_outcome::disturbances{r.at("migrations").value().to_number<std::int64_t>(),
                                               r.at("minor_faults").value().to_number<std::int64_t>(),
                                               r.at("preempted_samples").value().to_number<std::int64_t>()};
  }
  if (r.has("sm_mhz")) {
    for (const auto& c : r.at("sm_mhz").array()) out.sm_mhz.push_back(c.to_number<double>());
  }
  return out;
}

result_event result_from(const json::reader& r) {
  result_event e;
  e.index = static_cast<std::size_t>(r.integer("index"));
  if (r.has("warmup_ms")) e.warmup_ms = r.at("warmup_ms").value().to_number<double>();
  if (r.has("sampling_ms")) e.sampling_ms = r.at("sampling_ms").value().to_number<double>();
  if (r.has("phases_ms")) e.phases_ms = r.at("phases_ms").value();
  if (r.has("pair_fallback")) {
    e.pair_fallback = r.string("pair_fallback");
    return e;
  }
  e.head = outcome_from(r);
  if (r.has("base")) e.base = outcome_from(r.at("base"));
  if (r.has("first_side")) {
    e.first_side = pair_side_from_string(r.string("first_side"));
    if (!e.first_side) r.at("first_side").fail("\"head\" or \"base\"");
  }
  return e;
}

}  // namespace

std::optional<worker_event> event_from_line(const std::string& line) {
  bj::value v;
  try {
    v = json::parse(line, "worker output");
  } catch (const error&) {
    return std::nullopt;
  }
  if (!v.is_object()) return std::nullopt;
  const json::reader r(v, "worker output");
  const bj::value* kind = v.as_object().if_contains("event");
  if (!kind || !kind->is_string()) return std::nullopt;
  switch (worker_line_from_string(std::string_view(kind->as_string())).value_or(worker_line::log)) {
    case worker_line::ready:
      return worker_event{
          ready_event{r.at("environment").value(), r.has("clock") ? r.at("clock").value() : bj::value()}};
    case worker_line::start: return worker_event{start_event{static_cast<std::size_t>(r.integer("index"))}};
    case worker_line::result: return worker_event{result_from(r)};
    default: return std::nullopt;  // the other lines, and the sandbox's, are read where they matter
  }
}

}  // namespace rnx::runner::detail
