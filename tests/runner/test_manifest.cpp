// rnx.toml parsing: defaults, per-kernel overrides, input order, [gate]/[service], and every bad-input message.
#include "rnx/common/error.hpp"
#include "rnx/common/drift_settings.hpp"
#include "rnx/common/explain_settings.hpp"
#include "rnx/common/manifest.hpp"
#include "rnx/common/manifest_keys.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

rnx::manifest parse(const std::string& text) { return rnx::parse_manifest(text, "rnx.toml", "/project"); }

// The message of the rnx::error that parsing throws, and its code.
std::string error_of(const std::string& text, rnx::errc expected = rnx::errc::invalid) {
  try {
    parse(text);
  } catch (const rnx::error& e) {
    CHECK(e.code() == expected);
    CHECK(e.exit_code() == 2);
    return e.what();
  }
  FAIL("no error for:\n" << text);
  return "";
}

const std::string project = "[project]\nname = \"demo\"\n";

}  // namespace

TEST_CASE("a full manifest parses with defaults, overrides and the written input order") {
  rnx::manifest m = parse(project + R"(
[defaults]
runtimes = ["eager", "compile"]
dtypes = ["float32", "float16"]
batch = [1, 8]
tolerance = { float16 = { rtol = 2e-3 } }

[bench]
processes = 4
samples = 30
threads = 1

[[kernel]]
name = "attention"
path = "kernels/attention.py"
inputs = { q = "B,8,128,64", k = "B,8,128,64", v = "B,8,128,64" }

[[kernel]]
name = "kb"
path = "kernels/kb.py"
batch = [16]
runtimes = ["torchscript"]
device = "cuda:1"
processes = 2
tolerance = { float32 = { rtol = 1e-4, atol = 1e-4 } }

[gate]
rope = 0.03
probability = 0.9
on_abstain = "block"
[gate.runners.gpu]
rope = 0.05

[service]
url = "http://127.0.0.1:8722"

[build]
cuda_arch = "sm_90"
)");
  CHECK(m.project == "demo");
  REQUIRE(m.kernels.size() == 2);
  const auto& a = m.kernels[0];
  CHECK(a.kind() == rnx::kernel_kind::python);
  CHECK(a.resolved_path == fs::path("/project/kernels/attention.py"));
  REQUIRE(a.inputs.size() == 3);
  // toml++ sorts keys; the call order must still be q, k, v as written.
  CHECK(a.inputs[0].name == "q");
  CHECK(a.inputs[1].name == "k");
  CHECK(a.inputs[2].name == "v");
  CHECK(a.inputs[0].resolve(8) == std::vector<std::int64_t>{8, 8, 128, 64});
  CHECK(a.runtimes == std::vector<std::string>{"eager", "compile"});
  CHECK(a.dtypes == std::vector<std::string>{"float32", "float16"});
  CHECK(a.batch == std::vector<std::int64_t>{1, 8});
  CHECK(a.device == "auto");
  CHECK(a.bench.processes == 4);
  CHECK(a.bench.max_samples == 30);
  CHECK(a.tolerances.at("float16").rtol == doctest::Approx(2e-3));
  CHECK(a.tolerances.at("float16").atol == doctest::Approx(1e-5));  // torch.testing's default kept
  const auto& kb = m.kernels[1];
  CHECK(kb.inputs.empty());
  CHECK(kb.batch == std::vector<std::int64_t>{16});
  CHECK(kb.runtimes == std::vector<std::string>{"torchscript"});
  CHECK(kb.device == "cuda:1");
  CHECK(kb.bench.processes == 2);
  CHECK(kb.bench.threads == 1);
  CHECK(kb.tolerances.at("float32").rtol == doctest::Approx(1e-4));
  CHECK(m.gate.rope == doctest::Approx(0.03));
  CHECK(m.gate.probability == doctest::Approx(0.9));
  CHECK(m.gate.on_abstain == rnx::overall::block);
  CHECK(m.gate_runners.at("gpu").rope == doctest::Approx(0.05));
  CHECK(m.gate_runners.at("gpu").probability == doctest::Approx(0.9));
  CHECK(m.service_url == "http://127.0.0.1:8722");
  CHECK(m.cuda_arch == "sm_90");
}

TEST_CASE("torch.testing default tolerances per dtype") {
  CHECK(rnx::default_tolerance("float32").rtol == doctest::Approx(1.3e-6));
  CHECK(rnx::default_tolerance("float32").atol == doctest::Approx(1e-5));
  CHECK(rnx::default_tolerance("float16").rtol == doctest::Approx(1e-3));
  CHECK(rnx::default_tolerance("bfloat16").rtol == doctest::Approx(1.6e-2));
  CHECK(rnx::default_tolerance("float64").atol == doctest::Approx(1e-7));
}

TEST_CASE("bad manifests name the file, line and key") {
  CHECK(error_of("[project\nname = 1", rnx::errc::bad_input).rfind("rnx.toml:1:9: malformed TOML: ", 0) == 0);
  CHECK(error_of("[defaults]\n") == "rnx.toml: missing table [project] (add:  [project]  name = \"my-project\")");
  CHECK(error_of(project) == "rnx.toml: no kernels (add a [[kernel]] table with name, path and inputs)");
  CHECK(error_of("colour = 1\n" + project) ==
        "rnx.toml:1: key 'colour': unknown key (allowed here: bench, build, defaults, gate, kernel, optimize, project, "
        "service; "
        "check the spelling)");
  CHECK(error_of(project + "[[kernel]]\nname = \"a\"\npath = \"a.py\"\ninputs = { x = \"B,0\" }\n") ==
        "rnx.toml:6: key 'kernel.a.inputs.x': bad dimension '0' in shape \"B,0\" (write sizes as positive integers "
        "and the batch as B, e.g. \"B,8,128,64\")");
  CHECK(error_of(project + "[[kernel]]\nname = \"a\"\npath = \"a.py\"\ninputs = { x = \"B,N\" }\n") ==
        "rnx.toml:6: key 'kernel.a.inputs.x': bad dimension 'N' in shape \"B,N\" (write sizes as positive integers "
        "and the batch as B, e.g. \"B,8,128,64\")");
  // Unsupported dtype.
  CHECK(error_of(project + "[[kernel]]\nname = \"a\"\npath = \"a.py\"\ndtypes = [\"int8\"]\n") ==
        "rnx.toml:6: key 'kernel.a.dtypes[0]': unknown value \"int8\" (use one of: float32, float16, bfloat16, "
        "float64)");
  CHECK(error_of(project + "[defaults]\nruntimes = [\"jax\"]\n[[kernel]]\nname = \"a\"\npath = \"a.py\"\n") ==
        "rnx.toml:4: key 'defaults.runtimes[0]': unknown value \"jax\" (use one of: eager, compile, torchscript, "
        "onnxruntime, tensorrt)");
  CHECK(error_of(project + "[[kernel]]\nname = \"a\"\npath = \"a.py\"\nbatch = \"8\"\n") ==
        "rnx.toml:6: key 'kernel.a.batch': expected a non-empty array of batch sizes such as [1, 8]");
  CHECK(error_of(project + "[[kernel]]\nname = \"a\"\n") ==
        "rnx.toml:3: key 'kernel.a.path': missing (write path = \"kernels/NAME.py\", relative to rnx.toml)");
  CHECK(error_of(project + "[[kernel]]\nname = \"a\"\npath = \"a.rs\"\n") ==
        "rnx.toml:5: key 'kernel.a.path': \"a.rs\" has an unsupported extension (use .py, .pt, .cpp or .cu)");
  CHECK(error_of(project + "[[kernel]]\nname = \"a\"\npath = \"a.py\"\n[[kernel]]\nname = \"a\"\npath = \"b.py\"\n") ==
        "rnx.toml:7: key 'kernel[1].name': kernel \"a\" is defined twice; names must be unique");
  CHECK(error_of(project + "[[kernel]]\nname = \"a\"\npath = \"a.cpp\"\n") ==
        "rnx.toml:3: key 'kernel.a.inputs': a cpp kernel needs an inputs table such as inputs = { x = \"B,1024\" }");
  CHECK(error_of(project + "[[kernel]]\nname = \"a\"\npath = \"a.py\"\nbatch = [1, 8]\ninputs = { x = \"4,4\" }\n") ==
        "rnx.toml:7: key 'kernel.a.inputs': no input shape uses B, yet 2 batch sizes are configured (use B in a "
        "shape, or set batch = [1] for this kernel)");
  CHECK(error_of(project + "[[kernel]]\nname = \"a\"\npath = \"a.py\"\nprocesses = 0\n") ==
        "rnx.toml:6: key 'kernel.a.processes': value 0 is out of range (write 1 to 64)");
  CHECK(error_of(project + "[[kernel]]\nname = \"a\"\npath = \"a.py\"\ntolerance = { float8 = { rtol = 1 } }\n") ==
        "rnx.toml:6: key 'kernel.a.tolerance.float8': unknown dtype (use one of: float32, float16, bfloat16, "
        "float64)");
  CHECK(error_of(project + "[[kernel]]\nname = \"a\"\npath = \"a.py\"\n[gate]\non_abstain = \"maybe\"\n") ==
        "rnx.toml:7: key 'gate.on_abstain': unknown value \"maybe\" (use warn, pass or block)");
  CHECK(error_of(project + "[[kernel]]\nname = \"a\"\npath = \"a.py\"\n[service]\nurl = \"ftp://x\"\n") ==
        "rnx.toml:7: key 'service.url': \"ftp://x\" is not an http:// or https:// URL");
}

TEST_CASE("a kernel file that does not exist is named with where it was looked for") {
  fs::path dir = fs::temp_directory_path() / ("rnx-manifest-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "rnx.toml");
    out << project << "\n[[kernel]]\nname = \"gone\"\npath = \"kernels/gone.py\"\ninputs = { x = \"B,4\" }\n";
  }
  try {
    rnx::load_manifest(dir / "rnx.toml");
    FAIL("expected an error");
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::not_found);
    CHECK(std::string(e.what()) == (dir / "rnx.toml").string() +
                                       ":4: kernel \"gone\": file \"kernels/gone.py\" does not "
                                       "exist (looked for " +
                                       (dir / "kernels/gone.py").string() +
                                       "; paths are relative to the manifest's folder)");
  }
  try {
    rnx::load_manifest(dir / "missing.toml");
    FAIL("expected an error");
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::not_found);
    CHECK(std::string(e.what()) == (dir / "missing.toml").string() +
                                       ": cannot read the manifest (is the path right? pass --config PATH/rnx.toml)");
  }
  fs::remove_all(dir);
}

TEST_CASE("the example project's manifest is valid") {
  rnx::manifest m = rnx::load_manifest(fs::path(RNX_SOURCE_DIR) / "examples" / "rnx.toml");
  CHECK(m.project == "rnx-examples");
  CHECK(m.find_kernel("attention") != nullptr);
  CHECK(m.find_kernel("linear_gelu")->inputs.empty());
  CHECK(m.find_kernel("saxpy")->kind() == rnx::kernel_kind::cuda);
  CHECK(m.find_kernel("relu_scale")->kind() == rnx::kernel_kind::cpp);
  CHECK(m.find_kernel("scaled_tanh")->kind() == rnx::kernel_kind::torchscript);
}

// ---- docs/manifest.md and the one list of keys (rnx/common/manifest_keys.hpp) ----

namespace {

struct doc_row {
  std::string type;
  std::string default_text;
};

std::string trim(std::string s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '`')) s.erase(s.begin());
  while (!s.empty() && (s.back() == ' ' || s.back() == '`')) s.pop_back();
  return s;
}

// The rows of the key table between the manifest-keys markers: key -> type, default.
std::map<std::string, doc_row> documented_keys() {
  std::ifstream in(std::string(RNX_SOURCE_DIR) + "/docs/manifest.md");
  REQUIRE(in.good());
  std::map<std::string, doc_row> rows;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == "<!-- manifest-keys:begin -->") inside = true;
    if (line == "<!-- manifest-keys:end -->") inside = false;
    if (!inside || line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells;
    std::size_t start = 1;
    for (std::size_t bar = line.find('|', start); bar != std::string::npos; bar = line.find('|', start)) {
      cells.push_back(trim(line.substr(start, bar - start)));
      start = bar + 1;
    }
    REQUIRE_MESSAGE(cells.size() == 4, "a row of docs/manifest.md has ", cells.size(), " cells: ", line);
    CHECK_MESSAGE(!rows.count(cells[0]), "docs/manifest.md lists ", cells[0], " twice");
    rows[cells[0]] = {cells[1], cells[2]};
  }
  return rows;
}

std::string number_text(double v) {
  std::ostringstream os;
  os.precision(15);
  os << v;
  return os.str();
}

template <typename T>
std::string list_text(const std::vector<T>& items) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    os << (i ? ", " : "");
    if constexpr (std::is_same_v<T, std::string>) {
      os << '"' << items[i] << '"';
    } else {
      os << items[i];
    }
  }
  os << "]";
  return os.str();
}

// A manifest that sets `key` of its table to `value` (TOML text), with whatever else the key needs.
std::string manifest_setting(const rnx::manifest_key& key, const std::string& value) {
  const std::string kernel = "[[kernel]]\nname = \"a\"\npath = \"a.py\"\n";
  const std::string name(key.name);
  // samples must stay at or above min_samples: move the other one out of the way.
  std::string partner = name == "min_samples" ? "samples = 100000\n" : name == "samples" ? "min_samples = 1\n" : "";
  if (key.table == "bench") return project + kernel + "[bench]\n" + name + " = " + value + "\n" + partner;
  if (key.table == "kernel") return project + kernel + name + " = " + value + "\n" + partner;
  if (key.table == "defaults") return project + "[defaults]\n" + name + " = " + value + "\n" + kernel;
  if (key.table == "tolerance.DTYPE") {
    return project + "[defaults]\ntolerance = { float32 = { " + name + " = " + value + " } }\n" + kernel;
  }
  if (key.table == "gate") return project + kernel + "[gate]\n" + name + " = " + value + "\n";
  if (key.table == "gate.runners.LABEL") return project + kernel + "[gate.runners.x]\n" + name + " = " + value + "\n";
  return "";
}

// Whether the parser (and the policy check the gate applies to it) accepts the value.
bool accepted(const rnx::manifest_key& key, const std::string& value) {
  try {
    rnx::manifest m = parse(manifest_setting(key, value));
    rnx::validate(m.gate);
    for (const auto& [label, policy] : m.gate_runners) rnx::validate(policy);
    return true;
  } catch (const rnx::error&) {
    return false;
  }
}

}  // namespace

TEST_CASE("docs/manifest.md lists every key the parser accepts, with its type, range and default") {
  const auto documented = documented_keys();
  REQUIRE(!documented.empty());
  std::set<std::string> known;
  for (const auto& key : rnx::manifest_keys()) {
    const std::string path = rnx::manifest_key_path(key);
    known.insert(path);
    auto row = documented.find(path);
    if (row == documented.end()) {
      FAIL_CHECK("docs/manifest.md does not list the key ", path, " that the parser accepts");
      continue;
    }
    CHECK_MESSAGE(row->second.type == rnx::manifest_key_type_text(key), path, ": the docs say type '", row->second.type,
                  "', the parser '", rnx::manifest_key_type_text(key), "'");
    CHECK_MESSAGE(row->second.default_text == std::string(key.default_text), path, ": the docs say default '",
                  row->second.default_text, "', the parser '", std::string(key.default_text), "'");
  }
  for (const auto& row : documented) {
    const std::string& path = row.first;
    CHECK_MESSAGE(known.count(path), "docs/manifest.md lists ", path, ", which the parser does not accept");
  }
}

TEST_CASE("a configuration on CUDA takes the CUDA defaults only where the manifest left the key to its default") {
  const rnx::manifest m = parse(project +
                                "[bench]\nwarmup_ms = 50\n[[kernel]]\nname = \"a\"\npath = \"a.py\"\n"
                                "[[kernel]]\nname = \"b\"\npath = \"b.py\"\nbudget_ms = 900\n");
  const rnx::bench_settings& a = m.kernels.at(0).bench;
  const rnx::bench_settings& b = m.kernels.at(1).bench;
  CHECK(a.given == std::set<std::string>{"warmup_ms"});
  CHECK(b.given == std::set<std::string>{"warmup_ms", "budget_ms"});
  const rnx::bench_settings cpu = rnx::settings_for(a, false);
  CHECK(cpu.budget_ms == 1500);
  CHECK(cpu.total_budget_s == 20);
  const rnx::bench_settings gpu_a = rnx::settings_for(a, true);
  CHECK(gpu_a.budget_ms == rnx::cuda_bench_defaults::budget_ms);
  CHECK(gpu_a.total_budget_s == rnx::cuda_bench_defaults::total_budget_s);
  CHECK(gpu_a.warmup_ms == 50);  // set in [bench]
  const rnx::bench_settings gpu_b = rnx::settings_for(b, true);
  CHECK(gpu_b.budget_ms == 900);  // set in the kernel's table
  CHECK(gpu_b.warmup_ms == 50);
  CHECK(gpu_b.total_budget_s == rnx::cuda_bench_defaults::total_budget_s);
  CHECK(gpu_b.processes == b.processes);  // not a key the CUDA defaults change
}

TEST_CASE("the defaults in the list of keys are the parser's") {
  const rnx::manifest m = parse(project + "[[kernel]]\nname = \"a\"\npath = \"a.py\"\n");
  const rnx::kernel_spec& k = m.kernels.front();
  const rnx::bench_settings& b = k.bench;
  const rnx::gate_policy& g = m.gate;
  const rnx::drift_settings drift = rnx::parse_drift_settings(project + "[[kernel]]\nname = \"a\"\n", "rnx.toml");
  const rnx::explain_settings explain = rnx::parse_explain_settings(project + "[[kernel]]\nname = \"a\"\n", "rnx.toml");
  std::string on_abstain(rnx::to_string(g.on_abstain));
  for (auto& c : on_abstain) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::map<std::string, std::string> actual = {
      {"defaults.runtimes", list_text(k.runtimes)},
      {"defaults.dtypes", list_text(k.dtypes)},
      {"defaults.batch", list_text(k.batch)},
      {"defaults.device", "\"" + k.device + "\""},
      {"bench.processes", number_text(b.processes)},
      {"bench.max_processes", number_text(b.max_processes)},
      {"bench.min_samples", number_text(b.min_samples)},
      {"bench.samples", number_text(b.max_samples)},
      {"bench.budget_ms", number_text(b.budget_ms)},
      {"bench.total_budget_s", number_text(b.total_budget_s)},
      {"bench.warmup_ms", number_text(b.warmup_ms)},
      {"bench.min_sample_ms", number_text(b.min_sample_ms)},
      {"bench.noise", number_text(b.noise)},
      {"bench.timeout_s", number_text(b.timeout_s)},
      {"bench.threads", number_text(b.threads)},
      {"bench.seed", number_text(static_cast<double>(b.seed))},
      {"gate.rope", number_text(g.rope)},
      {"gate.probability", number_text(g.probability)},
      {"gate.min_samples", number_text(g.min_samples)},
      {"gate.resamples", number_text(g.resamples)},
      {"gate.statistic", "\"" + std::string(rnx::to_string(g.stat)) + "\""},
      {"gate.on_abstain", "\"" + on_abstain + "\""},
      {"gate.report_only", g.report_only ? "true" : "false"},
      {"gate.anchor", "\"" + rnx::to_string(drift.anchor) + "\""},
      {"gate.drift_action", "\"" + std::string(rnx::to_string(drift.action)) + "\""},
      {"gate.on_service_error", "\"" + std::string(rnx::to_string(m.on_service_error)) + "\""},
      {"gate.explain", "\"" + std::string(rnx::to_string(explain.scope)) + "\""},
      {"gate.explain_budget_s", number_text(explain.budget_s)},
      {"gate.explain_ncu", explain.ncu ? "true" : "false"},
      {"gate.explain_count_threshold", number_text(explain.count_threshold)},
  };
  for (const auto& key : rnx::manifest_keys()) {
    const std::string path = rnx::manifest_key_path(key);
    if (key.table != "defaults" && key.table != "bench" && key.table != "gate") continue;
    const char first = key.default_text.empty() ? ' ' : key.default_text.front();
    const bool literal = std::isdigit(static_cast<unsigned char>(first)) || first == '"' || first == '[' ||
                         key.default_text == "true" || key.default_text == "false";
    if (!literal) continue;
    REQUIRE_MESSAGE(actual.count(path), path, " has a literal default that this test does not check");
    CHECK_MESSAGE(actual.at(path) == std::string(key.default_text), path, ": the list says ",
                  std::string(key.default_text), ", the parser gives ", actual.at(path));
  }
}

TEST_CASE("the ranges in the list of keys are the ones the parser enforces") {
  int checked = 0;
  for (const auto& key : rnx::manifest_keys()) {
    if (!key.range || manifest_setting(key, "1").empty()) continue;
    const std::string path = rnx::manifest_key_path(key);
    const auto& r = *key.range;
    const bool whole = key.type.find("integer") != std::string_view::npos;
    const double step = whole ? 1 : std::max(1e-6, std::abs(r.hi) * 1e-9);
    auto text = [&](double v) { return whole ? std::to_string(static_cast<long long>(v)) : number_text(v); };
    CHECK_MESSAGE(accepted(key, text(r.lo)) == !r.open, path, " = ", text(r.lo));
    CHECK_MESSAGE(accepted(key, text(r.hi)) == !r.open, path, " = ", text(r.hi));
    CHECK_MESSAGE(!accepted(key, text(r.lo - step)), path, " = ", text(r.lo - step), " is accepted");
    CHECK_MESSAGE(!accepted(key, text(r.hi + step)), path, " = ", text(r.hi + step), " is accepted");
    if (r.open) {
      CHECK_MESSAGE(accepted(key, text(r.lo + step)), path, " = ", text(r.lo + step), " is refused");
      CHECK_MESSAGE(accepted(key, text(r.hi - step)), path, " = ", text(r.hi - step), " is refused");
    }
    ++checked;
  }
  CHECK(checked >= 30);
}

TEST_CASE("[gate] on_service_error: warn or fail; another value names the key") {
  const std::string kernel = "[[kernel]]\nname = \"a\"\npath = \"a.py\"\n";
  CHECK(parse(project + kernel).on_service_error == rnx::service_error_action::warn);
  CHECK(parse(project + kernel + "[gate]\non_service_error = \"fail\"\n").on_service_error ==
        rnx::service_error_action::fail);
  CHECK_THROWS_WITH_AS(parse(project + kernel + "[gate]\non_service_error = \"block\"\n"),
                       doctest::Contains("key 'gate.on_service_error': unknown value \"block\" (use warn or fail)"),
                       rnx::error);
}

TEST_CASE("[gate] drift keys: read with their one spelling; bad values name the key and the line") {
  const std::string kernel = "[[kernel]]\nname = \"a\"\npath = \"a.py\"\n";
  const std::string good =
      project + kernel + "[gate]\ndrift_budget = 0.05\nanchor = \"tag:v*\"\ndrift_action = \"block\"\n";
  (void)parse(good);
  const rnx::drift_settings d = rnx::parse_drift_settings(good, "rnx.toml");
  REQUIRE(d.budget);
  CHECK(*d.budget == doctest::Approx(0.05));
  CHECK(d.anchor.kind == rnx::anchor_kind::tag);
  CHECK(d.action == rnx::drift_action::block);
  CHECK_THROWS_WITH_AS(parse(project + kernel + "[gate]\ndrift_budget = 0.05\nanchor = \"newest\"\n"),
                       doctest::Contains("key 'gate.anchor': \"newest\" is not an anchor"), rnx::error);
  CHECK_THROWS_WITH_AS(parse(project + kernel + "[gate]\ndrift_budget = 1.5\n"),
                       doctest::Contains("key 'gate.drift_budget'"), rnx::error);
  CHECK_THROWS_WITH_AS(parse(project + kernel + "[gate]\ndrift_budget = 0.05\ndrift_action = \"fail\"\n"),
                       doctest::Contains("key 'gate.drift_action': unknown value \"fail\""), rnx::error);
  CHECK_THROWS_WITH_AS(parse(project + kernel + "[gate]\nanchor = \"days:30\"\n"), doctest::Contains("need a budget"),
                       rnx::error);
}

TEST_CASE("[gate] explain keys: read with their one spelling; bad values name the key") {
  const std::string kernel = "[[kernel]]\nname = \"a\"\npath = \"a.py\"\n";
  const std::string good = project + kernel +
                           "[gate]\nexplain = \"all\"\nexplain_budget_s = 30\nexplain_ncu = true\n"
                           "explain_count_threshold = 0.05\n";
  (void)parse(good);
  const rnx::explain_settings e = rnx::parse_explain_settings(good, "rnx.toml");
  CHECK(e.scope == rnx::explain_scope::all);
  CHECK(e.budget_s == 30);
  CHECK(e.ncu);
  CHECK(e.count_threshold == doctest::Approx(0.05));
  CHECK_THROWS_WITH_AS(parse(project + kernel + "[gate]\nexplain = \"slower\"\n"),
                       doctest::Contains("key 'gate.explain': unknown value \"slower\""), rnx::error);
  CHECK_THROWS_WITH_AS(parse(project + kernel + "[gate]\nexplain_ncu = \"yes\"\n"),
                       doctest::Contains("key 'gate.explain_ncu': expected true or false"), rnx::error);
  CHECK_THROWS_WITH_AS(parse(project + kernel + "[gate]\nexplain_budget_s = -1\n"),
                       doctest::Contains("key 'gate.explain_budget_s'"), rnx::error);
}

TEST_CASE("kernel kind: each kind's text parses back to it; the unknown kind and other text do not parse") {
  for (rnx::kernel_kind k :
       {rnx::kernel_kind::python, rnx::kernel_kind::torchscript, rnx::kernel_kind::cpp, rnx::kernel_kind::cuda}) {
    CHECK(rnx::kernel_kind_from_string(rnx::to_string(k)) == k);
  }
  CHECK(rnx::to_string(rnx::kernel_kind::cuda) == "cuda");
  CHECK_FALSE(rnx::kernel_kind_from_string("").has_value());
  CHECK_FALSE(rnx::kernel_kind_from_string("kernelbench").has_value());
}

// ---- declared work: flops / bytes as arithmetic of the shape symbols ----

TEST_CASE("a kernel's declared flops and bytes are expressions of B, evaluated at each batch") {
  rnx::manifest m = parse(project + R"toml(
[[kernel]]
name = "gemm"
path = "gemm.py"
inputs = { a = "B,256,512", b = "512,512" }
flops = "2*B*256*512*512"
bytes = "4 * (B*256*512 + 512*512 + B*256*512)"

[[kernel]]
name = "halves"
path = "halves.py"
inputs = { x = "B,7" }
flops = "(B + 1) / 2 - 0.5"
)toml");
  const rnx::kernel_spec& gemm = *m.find_kernel("gemm");
  REQUIRE(gemm.flops);
  REQUIRE(gemm.bytes);
  CHECK(gemm.flops->text() == "2*B*256*512*512");
  CHECK(gemm.flops->evaluate(8) == 2.0 * 8 * 256 * 512 * 512);
  CHECK(gemm.bytes->evaluate(1) == 4.0 * (256 * 512 + 512 * 512 + 256 * 512));
  const rnx::kernel_spec& halves = *m.find_kernel("halves");
  CHECK(halves.flops->evaluate(4) == 2.0);  // division is exact; precedence and parentheses as written
  CHECK_FALSE(halves.bytes);
}

TEST_CASE("a bad work expression names the kernel, the key and the unknown symbol") {
  const std::string kernel = project + "[[kernel]]\nname = \"gemm\"\npath = \"gemm.py\"\ninputs = { a = \"B,4\" }\n";
  CHECK(error_of(kernel + "flops = \"2*B*M*N\"\n") ==
        "rnx.toml:7: key 'kernel.gemm.flops': \"2*B*M*N\": unknown symbol 'M' (the one symbol shapes use is B, the "
        "batch size; write other sizes as numbers, e.g. \"2*B*256*512*512\")");
  CHECK(error_of(kernel + "bytes = \"4*(B+1\"\n") ==
        "rnx.toml:7: key 'kernel.gemm.bytes': \"4*(B+1\": it ends too early (write arithmetic of numbers and B with "
        "+ - * / and parentheses)");
  CHECK(error_of(kernel + "flops = \"2^B\"\n") ==
        "rnx.toml:7: key 'kernel.gemm.flops': \"2^B\": unexpected '^' at character 2 (write arithmetic of numbers and "
        "B with + - * / and parentheses)");
  CHECK(error_of(kernel + "flops = \"\"\n").find("\"\": it is empty") != std::string::npos);
  CHECK(error_of(kernel + "flops = 12\n") == "rnx.toml:7: key 'kernel.gemm.flops': expected a string, got an integer");
}
