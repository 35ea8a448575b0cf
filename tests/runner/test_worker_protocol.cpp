// The worker protocol's vocabulary: the "event" names of a worker's lines, how the orchestrator reads them, and the
// job file both sides read as one type.
#include "worker_protocol.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
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

TEST_CASE("the job file reads back as the job the orchestrator wrote, to the bit; a stray key is refused") {
  worker_job job;
  job.manifest = "/w/rnx.toml";
  job.base_manifest = "/w/base/rnx.toml";
  job.pairing_seed = 18446744073709551615ULL;  // the whole 64 bits
  job.device_override = "cuda:1";
  job.cores = {2, 3};
  job.overrides.budget_ms = 0.1 + 0.2;
  job.fresh_inputs = false;
  job_config c;
  c.index = 7;
  c.kernel = "softmax";
  c.runtime = "eager";
  c.dtype = "float16";
  c.batch = 8;
  c.base_index = 8;
  c.base_first = false;
  c.control_base = true;
  c.budget_ms = 1.0 / 3;
  c.tol = tolerance{1e-3, 1e-5};
  job.configs = {c, job_config{}};
  const worker_job back = job_from_json(json::parse(json::serialize(to_json(job)), "job"));
  CHECK(back.manifest == job.manifest);
  CHECK(back.base_manifest == job.base_manifest);
  CHECK(back.pairing_seed == job.pairing_seed);
  CHECK(back.device_override == "cuda:1");
  CHECK(back.fingerprint_device == "auto");
  CHECK(back.cores == job.cores);
  CHECK(back.overrides.budget_ms == job.overrides.budget_ms);
  CHECK_FALSE(back.overrides.min_samples);
  CHECK_FALSE(back.fresh_inputs);
  REQUIRE(back.configs.size() == 2);
  CHECK(back.configs[0].index == 7);
  CHECK(back.configs[0].dtype == "float16");
  CHECK(back.configs[0].base_index == 8u);
  CHECK_FALSE(back.configs[0].base_first);
  CHECK(back.configs[0].control_base);
  CHECK(back.configs[0].budget_ms == c.budget_ms);
  REQUIRE(back.configs[0].tol);
  CHECK(back.configs[0].tol->rtol == 1e-3);
  CHECK_FALSE(back.configs[0].base_tol);
  CHECK_FALSE(back.configs[1].base_index);

  boost::json::object stray = to_json(job).as_object();
  stray["budget"] = 3;
  try {
    job_from_json(stray);
    FAIL("a job with an unknown key was read");
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::invalid);
    CHECK(std::string(e.what()).find("worker job: unknown key \"budget\"") == 0);
  }
}
