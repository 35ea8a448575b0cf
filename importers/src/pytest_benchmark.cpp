// pytest-benchmark's JSON (--benchmark-json, or a file saved by --benchmark-autosave): each round's time from
// stats.data (kept with --benchmark-save-data) is a sample; without it only the summary statistics exist.
#include "import_detail.hpp"

#include "rnx/common/json.hpp"

namespace rnx::importers::detail {

namespace {

namespace bj = boost::json;

const char* const save_data_hint =
    "run pytest with --benchmark-save-data beside --benchmark-json so pytest-benchmark writes every round's time";

}  // namespace

parsed_file parse_pytest_benchmark(const std::string& file, const bj::value& doc) {
  const bj::object* top = doc.if_object();
  if (!top || !top->contains("machine_info") || !top->contains("benchmarks")) {
    wrong_format(file, doc, "pytest-benchmark JSON", "\"machine_info\" and \"benchmarks\"");
  }
  json::reader root(doc, file);
  parsed_file out;
  out.file = file;
  harness_context& ctx = out.context;
  ctx.path = "$.machine_info";
  ctx.harness = "pytest-benchmark";
  if (auto v = root.maybe("version")) ctx.harness += " " + v->string();
  auto machine = root.at("machine_info");
  ctx.python = machine.string_or("python_version", "");
  if (auto cpu = machine.maybe("cpu")) {
    ctx.cpu = cpu->string_or("brand_raw", "");
    if (auto count = cpu->maybe("count")) ctx.threads = count->integer();
    if (auto hz = cpu->maybe("hz_actual"); hz && hz->value().is_array() && !hz->array().empty()) {
      ctx.clocks["cpu_mhz"] = hz->at(0).number() / 1e6;
    }
  }
  if (auto commit = root.maybe("commit_info")) {
    // pytest-benchmark writes placeholders where it found no repository.
    const std::string id = commit->string_or("id", "");
    if (id != "unversioned") ctx.commit = id;
    const std::string branch = commit->string_or("branch", "");
    if (branch != "(unknown)") ctx.branch = branch;
  }
  if (auto when = root.maybe("datetime")) ctx.created_at = utc_timestamp(when->string());

  auto benchmarks = root.at("benchmarks");
  for (std::size_t i = 0; i < benchmarks.array().size(); ++i) {
    auto entry = benchmarks.at(i);
    measured_case c;
    c.path = entry.path();
    c.origin = entry.has("fullname") ? entry.string("fullname") : entry.string("name");
    c.name = c.origin;
    const std::string param = entry.string_or("param", "");
    if (c.name.size() > 2 && c.name.back() == ']') {
      const auto bracket = c.name.rfind('[');
      if (bracket != std::string::npos) c.name.resize(bracket);
    }
    if (auto params = entry.maybe("params")) {
      for (const auto& [key, value] : params->object()) {
        c.params.emplace_back(std::string(key), param_text(value));
        if (key == "device") c.device = param_text(value);
      }
    } else if (!param.empty()) {
      // Parametrized with ids only: the id is all there is.
      c.params.emplace_back("id", param);
    }
    if (i == 0) {
      // A timer other than the default wall clock measures something else: runs with different timers never compare.
      if (auto options = entry.maybe("options")) {
        const std::string timer = options->string_or("timer", "perf_counter");
        if (timer != "perf_counter" && timer != "time.perf_counter") ctx.harness += ", timer " + timer;
      }
    }
    auto stats = entry.at("stats");
    if (auto data = stats.maybe("data")) {
      const auto& rounds = data->array();
      if (rounds.empty()) data->fail("the rounds' times (an empty list)");
      for (std::size_t k = 0; k < rounds.size(); ++k) {
        auto round = data->at(k);
        const double seconds = round.number();
        if (!(seconds >= 0)) round.fail("a non-negative time in seconds");
        c.samples_ms.push_back(seconds * 1e3);
      }
    } else {
      aggregate_summary a;
      auto rounds = stats.at("rounds");
      a.count = rounds.integer();
      if (a.count < 1) rounds.fail("a positive number of rounds");
      auto seconds = [&](const char* key) -> std::optional<double> {
        auto v = stats.maybe(key);
        if (!v) return std::nullopt;
        const double s = v->number();
        if (!(s >= 0)) v->fail("a non-negative time in seconds");
        return s * 1e3;
      };
      a.mean_ms = seconds("mean");
      a.median_ms = seconds("median");
      a.stddev_ms = seconds("stddev");
      a.min_ms = seconds("min");
      a.max_ms = seconds("max");
      if (!a.mean_ms && !a.median_ms) stats.at("median");  // neither: name the missing member
      c.aggregates = a;
      c.aggregates_hint = save_data_hint;
    }
    out.cases.push_back(std::move(c));
  }
  return out;
}

}  // namespace rnx::importers::detail
