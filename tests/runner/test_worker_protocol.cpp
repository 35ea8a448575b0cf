// The worker protocol's vocabulary: the "event" names of a worker's lines, and how the orchestrator reads them.
#include "worker_protocol.hpp"

#include "rnx/common/error.hpp"
#include "rnx/sandbox/sandbox.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <variant>

using namespace rnx;
using namespace rnx::runner::detail;

TEST_CASE("worker line names round trip and refuse unknown names") {
  std::set<std::string> names;
  for (auto l : {worker_line::loaded, worker_line::contained, worker_line::log, worker_line::ready, worker_line::start,
                 worker_line::result}) {
    const std::string name(to_string(l));
    CAPTURE(name);
    CHECK(names.insert(name).second);
    CHECK(worker_line_from_string(name) == l);
  }
  for (const char* unknown : {"", "Ready", "sandbox", "results"}) {
    CAPTURE(unknown);
    CHECK_FALSE(worker_line_from_string(unknown).has_value());
  }
}

TEST_CASE("the sandbox's launch lines and network cuts round trip and refuse unknown names") {
  for (auto e : {sandbox::launch_event::sandbox, sandbox::launch_event::sandbox_proc, sandbox::launch_event::sandbox_fs,
                 sandbox::launch_event::sandbox_layer}) {
    CHECK(sandbox::launch_event_from_string(to_string(e)) == e);
  }
  CHECK(to_string(sandbox::launch_event::sandbox_layer) == "sandbox_layer");
  CHECK_FALSE(sandbox::launch_event_from_string("sandbox_net").has_value());
  for (auto c : {sandbox::network_cut::own_namespace, sandbox::network_cut::seccomp}) {
    CHECK(sandbox::network_cut_from_string(to_string(c)) == c);
  }
  CHECK(to_string(sandbox::network_cut::own_namespace) == "namespace");
  CHECK_FALSE(sandbox::network_cut_from_string("none").has_value());
}

TEST_CASE("the orchestrator reads the events it knows, skips the others and names a bad side") {
  auto start = event_from_line(R"({"event": "start", "index": 3})");
  REQUIRE(start.has_value());
  CHECK(std::get<start_event>(*start).index == 3);
  CHECK_FALSE(event_from_line(R"({"event": "loaded", "clock": {}})").has_value());
  CHECK_FALSE(event_from_line(R"({"event": "sandbox_layer", "layer": "dev"})").has_value());
  CHECK_FALSE(event_from_line("not json").has_value());
  const std::string result = R"({"event": "result", "index": 0, "status": "ok", "device": "cpu", "samples_ms": [1.0])";
  auto read = event_from_line(result + R"(, "first_side": "base"})");
  REQUIRE(read.has_value());
  CHECK(std::get<result_event>(*read).first_side == pair_side::base);
  CHECK(std::get<result_event>(*read).head.status == result_status::ok);
  auto counted = event_from_line(result + R"(, "work": {"flops": 64, "bytes": 48}, "work_error": ""})");
  REQUIRE(counted.has_value());
  const side_outcome& head = std::get<result_event>(*counted).head;
  REQUIRE(head.work);
  CHECK(*head.work->flops == 64);
  CHECK(*head.work->bytes == 48);
  CHECK(head.work->source == work_source::counted);
  auto uncounted = event_from_line(result + R"(, "work_error": "KernelError: no"})");
  CHECK_FALSE(std::get<result_event>(*uncounted).head.work);
  CHECK(std::get<result_event>(*uncounted).head.work_error == "KernelError: no");
  auto unknown_status = event_from_line(R"({"event": "result", "index": 0, "status": "odd", "device": "cpu"})");
  REQUIRE(unknown_status.has_value());
  CHECK(std::get<result_event>(*unknown_status).head.status == result_status::error);
  try {
    event_from_line(result + R"(, "first_side": "left"})");
    FAIL("a first_side of \"left\" was read");
  } catch (const error& e) {
    CHECK(std::string(e.what()) == "worker output: $.first_side: expected \"head\" or \"base\", got \"left\"");
  }
}
