// The closed vocabularies of common: each enum's names survive to_string and back, an unknown name is refused,
// and the readers at the boundary name the bad value and the allowed ones.
#include "rnx/common/drift_settings.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/manifest.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"

#include <boost/json.hpp>
#include <doctest/doctest.h>

#include <initializer_list>
#include <set>
#include <string>
#include <vector>

using namespace rnx;

namespace {

// Every value parses back from its name, the names are distinct, and none of `unknown` parses.
template <typename Enum, typename Parse>
void check_vocabulary(std::initializer_list<Enum> values, Parse parse, const std::vector<std::string>& unknown) {
  std::set<std::string> names;
  for (Enum v : values) {
    const std::string name(to_string(v));
    CAPTURE(name);
    CHECK(names.insert(name).second);
    REQUIRE(parse(name).has_value());
    CHECK(*parse(name) == v);
  }
  for (const auto& name : unknown) {
    CAPTURE(name);
    CHECK_FALSE(parse(name).has_value());
  }
}

// The message run_from_json gives for a result whose `member` is `value`.
std::string run_error(const std::string& member, const std::string& value) {
  boost::json::object result{
      {"kernel", "k"}, {"runtime", "eager"}, {"dtype", "float32"}, {"batch", 1}, {"status", "error"}};
  result[member] = value;
  const boost::json::object environment{{"env_id", "e"}, {"device", "cpu"}};
  const boost::json::value doc = boost::json::object{{"schema", "rnx.run/v1"},
                                                     {"project", "p"},
                                                     {"environment", environment},
                                                     {"results", boost::json::array{result}}};
  const std::string text = boost::json::serialize(doc);
  try {
    run_from_json(json::parse(text, "doc.json"), "doc.json");
  } catch (const error& e) {
    return e.what();
  }
  return "";
}

std::string manifest_error(const std::string& kernel_lines) {
  try {
    parse_manifest("[project]\nname = \"p\"\n[[kernel]]\nname = \"a\"\npath = \"a.py\"\n" + kernel_lines, "rnx.toml",
                   "/project");
  } catch (const error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the run document's vocabularies round trip and refuse unknown names") {
  check_vocabulary({result_status::ok, result_status::diverged, result_status::error, result_status::skipped},
                   result_status_from_string, {"", "OK", "failed"});
  check_vocabulary({pairing_mode::process, pairing_mode::in_process}, pairing_mode_from_string,
                   {"", "in_process", "none"});
  check_vocabulary({pair_side::head, pair_side::base}, pair_side_from_string, {"", "left", "HEAD"});
  check_vocabulary({timed_inputs::same, timed_inputs::fresh}, timed_inputs_from_string, {"", "Fresh", "reused"});
  check_vocabulary({l2_state::flushed}, l2_state_from_string, {"", "Flushed", "warm"});
  check_vocabulary({work_source::counted, work_source::declared}, work_source_from_string, {"", "Counted", "measured"});
  check_vocabulary({env_origin::file, env_origin::importing_machine}, env_origin_from_string,
                   {"", "importing_machine", "harness"});
  check_vocabulary({runtime_kind::eager, runtime_kind::compile, runtime_kind::torchscript, runtime_kind::onnxruntime,
                    runtime_kind::tensorrt, runtime_kind::cpp, runtime_kind::gbench, runtime_kind::pytest_benchmark,
                    runtime_kind::nvbench},
                   runtime_kind_from_string, {"", "jax", "pytest_benchmark", "Eager"});
  check_vocabulary(
      {dtype_kind::float32, dtype_kind::float16, dtype_kind::bfloat16, dtype_kind::float64, dtype_kind::none},
      dtype_kind_from_string, {"", "int8", "fp16", "float"});
  CHECK(to_string(pairing_mode::none) == "");
  CHECK(to_string(runtime_kind::pytest_benchmark) == "pytest-benchmark");
}

TEST_CASE("rnx.toml and --runtime/--dtype accept the measured runtimes and dtypes only") {
  CHECK(bench_runtime_names() ==
        std::vector<std::string>{"eager", "compile", "torchscript", "onnxruntime", "tensorrt"});
  CHECK(measured_dtype_names() == std::vector<std::string>{"float32", "float16", "bfloat16", "float64"});
}

TEST_CASE("the verdict's vocabularies round trip and refuse unknown names") {
  check_vocabulary({decision::faster, decision::slower, decision::equivalent, decision::abstain, decision::new_config,
                    decision::missing, decision::broken},
                   decision_from_string, {"", "new_config", "SLOWER"});
  check_vocabulary({overall::pass, overall::warn, overall::block}, overall_from_string, {"", "Pass", "fail"});
  check_vocabulary({statistic::median, statistic::mean}, statistic_from_string, {"", "p50"});
  check_vocabulary({baseline_kind::push, baseline_kind::accepted}, baseline_kind_from_string, {"", "pull", "Accepted"});
  CHECK(to_string(baseline_kind::unknown) == "");
  // rnx.toml's on_abstain is written in lower case.
  CHECK(overall_from_string("warn") == overall::warn);
  CHECK(overall_from_string("block") == overall::block);
}

TEST_CASE("device names: auto, cpu, cuda and cuda:N") {
  check_vocabulary({device_kind::automatic, device_kind::cpu, device_kind::cuda}, device_kind_from_string,
                   {"", "gpu", "cuda:", "cuda:x", "cuda:1a", "cpu:0", "CUDA"});
  CHECK(device_kind_from_string("cuda:0") == device_kind::cuda);
  CHECK(device_kind_from_string("cuda:12") == device_kind::cuda);
}

TEST_CASE("drift actions round trip") {
  check_vocabulary({drift_action::warn, drift_action::block}, drift_action_from_string, {"", "fail", "WARN"});
}

TEST_CASE("the readers name the bad value and the allowed ones") {
  CHECK(run_error("status", "done") ==
        "doc.json: $.results[0].status: expected one of \"ok\", \"diverged\", \"error\", \"skipped\", got \"done\"");
  CHECK(run_error("runtime", "jax") ==
        "doc.json: $.results[0].runtime: expected one of eager, compile, torchscript, onnxruntime, tensorrt, cpp, "
        "gbench, pytest-benchmark, nvbench, got \"jax\"");
  CHECK(run_error("dtype", "int8") ==
        "doc.json: $.results[0].dtype: expected one of float32, float16, bfloat16, float64, none, got \"int8\"");
  CHECK(manifest_error("device = \"gpu\"\n").find("unknown device \"gpu\" (use auto, cpu, cuda or cuda:N)") !=
        std::string::npos);
  CHECK(manifest_error("dtypes = [\"none\"]\n")
            .find("unknown value \"none\" (use one of: float32, float16, bfloat16, "
                  "float64)") != std::string::npos);
  CHECK(manifest_error("runtimes = [\"cpp\"]\n")
            .find("unknown value \"cpp\" (use one of: eager, compile, torchscript, "
                  "onnxruntime, tensorrt)") != std::string::npos);
}
