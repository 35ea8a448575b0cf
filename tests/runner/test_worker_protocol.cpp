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

TEST_CASE("the orchestrator reads the events it knows, skips the others and names a bad key") {
  auto start = event_from_line(json::serialize(to_json(start_event{.index = 3})));
  REQUIRE(start.has_value());
  CHECK(std::get<start_event>(*start).index == 3);
  CHECK_FALSE(event_from_line(R"({"event": "loaded", "clock": {}})").has_value());
  CHECK_FALSE(event_from_line(R"({"event": "sandbox_layer", "layer": "dev"})").has_value());
  CHECK_FALSE(event_from_line("not json").has_value());
  CHECK_FALSE(event_from_line("[1, 2]").has_value());

  ready_event ready;
  ready.environment = boost::json::object{{"hostname", "h"}};
  ready.clock = {1.0, 2.5, 2.5, 3.0, 3.25};
  auto ready_back = event_from_line(json::serialize(to_json(ready)));
  REQUIRE(ready_back.has_value());
  CHECK(std::get<ready_event>(*ready_back).clock.python == 2.5);
  CHECK(std::get<ready_event>(*ready_back).environment.at("hostname") == "h");
}

TEST_CASE("a result event reads back as the worker wrote it, both sides of a pair, enums by name") {
  result_event e;
  e.index = 5;
  e.warmup_ms = 12.5;
  e.sampling_ms = 300;
  e.head.status = result_status::ok;
  e.head.device = "cuda:0";
  e.head.samples_ms = {1.0, 1.25};
  e.head.inputs = timed_inputs::fresh;
  e.head.l2 = l2_state::flushed;
  e.head.check = reference_check{1e-6, 1e308, tolerance{1e-3, 1e-5}};
  e.head.work = work_info{64, 48, work_source::counted, 0};
  e.head.disturbed = disturbances{1, 2, 0, 3};
  side_outcome base;
  base.status = result_status::diverged;
  base.message = "differs";
  base.control_ms = {0.5};
  e.base = base;
  e.first_side = pair_side::base;
  e.shared_inputs = true;
  e.phases_ms.bind = 40;
  const boost::json::object line = to_json(e);
  CHECK(line.at("event") == "result");
  CHECK(line.at("head").at("inputs") == "fresh");
  auto read = event_from_line(json::serialize(line));
  REQUIRE(read.has_value());
  const result_event& back = std::get<result_event>(*read);
  CHECK(back.index == 5);
  CHECK(back.warmup_ms == 12.5);
  CHECK(back.head.status == result_status::ok);
  CHECK(back.head.samples_ms == e.head.samples_ms);
  CHECK(back.head.inputs == timed_inputs::fresh);
  CHECK(back.head.l2 == l2_state::flushed);
  REQUIRE(back.head.check);
  CHECK(back.head.check->rel_err == 1e308);
  CHECK(back.head.check->tol.atol == 1e-5);
  REQUIRE(back.head.work);
  CHECK(*back.head.work->flops == 64);
  CHECK(back.head.work->source == work_source::counted);
  REQUIRE(back.head.disturbed);
  CHECK(back.head.disturbed->preempted_samples == 3);
  REQUIRE(back.base);
  CHECK(back.base->status == result_status::diverged);
  CHECK(back.base->control_ms == base.control_ms);
  CHECK_FALSE(back.base->check);
  CHECK(back.first_side == pair_side::base);
  CHECK(back.shared_inputs);
  CHECK(back.phases_ms.bind == 40);
  CHECK_FALSE(back.pair_fallback);

  // A name outside an enum's vocabulary, and a key that is no member, are refused naming the key.
  boost::json::object odd = line;
  odd["first_side"] = "left";
  try {
    event_from_line(json::serialize(odd));
    FAIL("a first_side of \"left\" was read");
  } catch (const error& err) {
    CHECK(err.code() == errc::invalid);
    CHECK(std::string(err.what()).find("worker output (result): key \"first_side\"") == 0);
  }
  boost::json::object stray = line;
  stray["samples"] = boost::json::array{1.0};
  try {
    event_from_line(json::serialize(stray));
    FAIL("a result with an unknown key was read");
  } catch (const error& err) {
    CHECK(std::string(err.what()).find("worker output (result): unknown key \"samples\"") == 0);
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
