// Google Benchmark's JSON (--benchmark_out_format=json or --benchmark_format=json): every repetition's time is a
// sample; a benchmark with one repetition, or with only its mean/median/stddev rows, has only aggregates.
#include "import_detail.hpp"

#include "rnx/common/json.hpp"

#include <map>

namespace rnx::importers::detail {

namespace {

namespace bj = boost::json;

const char* const repetition_hint =
    "run the benchmark with --benchmark_repetitions=10 (a verdict needs 8 a side; add "
    "--benchmark_enable_random_interleaving=true) and without --benchmark_report_aggregates_only, so every "
    "repetition is written";

std::optional<double> ms_per(std::string_view unit) {
  if (unit == "ns") return 1e-6;
  if (unit == "us") return 1e-3;
  if (unit == "ms") return 1.0;
  if (unit == "s") return 1e3;
  return std::nullopt;
}

// Splits "BM_copy/1024/align:64/threads:2/real_time" into its family and parameters. Settings of the measurement
// (iterations, repeats, min_time, min_warmup_time) are not part of what is measured, so they are dropped.
void split_name(const std::string& run_name, measured_case& c) {
  std::size_t start = 0;
  int positional = 0;
  bool first = true;
  while (start <= run_name.size()) {
    std::size_t slash = run_name.find('/', start);
    if (slash == std::string::npos) slash = run_name.size();
    const std::string part = run_name.substr(start, slash - start);
    start = slash + 1;
    if (first) {
      c.name = part;
      first = false;
      continue;
    }
    if (part == "real_time" || part == "manual_time" || part == "process_time") {
      c.params.emplace_back("timer", part);
      continue;
    }
    const auto colon = part.find(':');
    if (colon != std::string::npos) {
      const std::string key = part.substr(0, colon);
      if (key == "iterations" || key == "repeats" || key == "min_time" || key == "min_warmup_time") continue;
      c.params.emplace_back(key, part.substr(colon + 1));
      continue;
    }
    c.params.emplace_back("arg" + std::to_string(positional++), part);
  }
}

struct gathered {
  measured_case c;
  std::string unit;       // of the first repetition, to refuse mixed units
  std::string unit_path;  // where that unit was read
  std::map<std::int64_t, std::string> repetitions;  // repetition_index -> path, to refuse duplicates
  std::map<std::string, double> aggregate_ms;       // mean, median, stddev, min, max
  std::int64_t aggregate_count = 0;
  std::int64_t iterations = 0;  // of a single repetition
};

}  // namespace

parsed_file parse_gbench(const std::string& file, const bj::value& doc, bool cpu_time) {
  const bj::object* top = doc.if_object();
  if (!top || !top->contains("context") || !top->contains("benchmarks")) {
    wrong_format(file, doc, "Google Benchmark JSON", "\"context\" and \"benchmarks\"");
  }
  json::reader root(doc, file);
  parsed_file out;
  out.file = file;
  auto context = root.at("context");
  context.object();
  harness_context& ctx = out.context;
  ctx.path = "$.context";
  ctx.harness = "gbench";
  if (auto v = context.maybe("library_version")) ctx.harness += " " + v->string();
  if (auto b = context.maybe("library_build_type")) ctx.harness += " (" + b->string() + " build)";
  if (cpu_time) ctx.harness += ", cpu_time";
  if (auto n = context.maybe("num_cpus")) ctx.threads = n->integer();
  if (auto mhz = context.maybe("mhz_per_cpu")) ctx.clocks["cpu_mhz"] = mhz->number();
  if (auto date = context.maybe("date")) ctx.created_at = utc_timestamp(date->string());

  auto benchmarks = root.at("benchmarks");
  std::vector<gathered> order;
  std::map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < benchmarks.array().size(); ++i) {
    auto entry = benchmarks.at(i);
    entry.object();
    const std::string run_name = entry.has("run_name") ? entry.string("run_name") : entry.string("name");
    const std::string run_type = entry.string_or("run_type", "iteration");
    if (run_type != "iteration" && run_type != "aggregate") entry.at("run_type").fail("\"iteration\" or \"aggregate\"");
    auto [it, inserted] = by_name.emplace(run_name, order.size());
    if (inserted) {
      gathered g;
      g.c.path = entry.path();
      g.c.origin = run_name;
      split_name(run_name, g.c);
      order.push_back(std::move(g));
    }
    gathered& g = order[it->second];

    const bool errored = entry.has("error_occurred") && entry.at("error_occurred").boolean();
    const bool skipped = entry.has("skipped") && entry.at("skipped").boolean();
    if (errored || skipped) {
      g.c.status = errored ? result_status::error : result_status::skipped;
      g.c.message = entry.string_or(errored ? "error_message" : "skip_message", "");
      if (g.c.message.empty()) g.c.message = errored ? "the benchmark reported an error" : "the benchmark skipped itself";
      continue;
    }
    if (run_type == "aggregate" && entry.string_or("aggregate_unit", "time") != "time") continue;  // cv: a fraction
    auto unit_reader = entry.at("time_unit");
    const std::string unit = unit_reader.string();
    const auto factor = ms_per(unit);
    if (!factor) unit_reader.fail("a time unit ns, us, ms or s");
    if (g.unit.empty()) {
      g.unit = unit;
      g.unit_path = unit_reader.path();
    } else if (unit != g.unit) {
      fail(file, unit_reader.path(), "\"" + unit + "\" where " + g.unit_path + " of the same benchmark " + run_name +
                                         " says \"" + g.unit + "\": mixed units in one benchmark (were two outputs "
                                         "joined into one file?)");
    }
    auto time = entry.at(cpu_time ? "cpu_time" : "real_time");
    const double ms = time.number() * *factor;
    if (!(ms >= 0)) time.fail("a non-negative time");
    if (run_type == "aggregate") {
      g.aggregate_ms[entry.string("aggregate_name")] = ms;
      if (auto reps = entry.maybe("repetitions")) g.aggregate_count = reps->integer();
      continue;
    }
    const std::int64_t repetition = entry.has("repetition_index") ? entry.integer("repetition_index") : -1;
    if (auto [rep, fresh] = g.repetitions.emplace(repetition, entry.path()); !fresh) {
      fail(file, entry.path(), "duplicate benchmark " + run_name + " (repetition " + std::to_string(repetition) +
                                   " also at " + rep->second + "): each name appears once per repetition");
    }
    g.c.samples_ms.push_back(ms);
    if (auto n = entry.maybe("iterations")) g.iterations = n->integer();
  }

  for (auto& g : order) {
    measured_case& c = g.c;
    if (c.status != result_status::ok) {
      c.samples_ms.clear();
    } else if (c.samples_ms.size() < 2) {
      // One repetition is itself a mean over its iterations; so are the aggregate rows.
      aggregate_summary a;
      if (c.samples_ms.size() == 1) {
        a.count = std::max<std::int64_t>(1, g.iterations);
        a.mean_ms = c.samples_ms.front();
      } else {
        a.count = std::max<std::int64_t>(1, g.aggregate_count);
        auto pick = [&](const char* name) -> std::optional<double> {
          auto it = g.aggregate_ms.find(name);
          return it == g.aggregate_ms.end() ? std::nullopt : std::optional<double>(it->second);
        };
        a.mean_ms = pick("mean");
        a.median_ms = pick("median");
        a.stddev_ms = pick("stddev");
        a.min_ms = pick("min");
        a.max_ms = pick("max");
        if (!a.mean_ms && !a.median_ms) fail(file, c.path, c.origin + " has neither repetitions nor a mean or median");
      }
      c.samples_ms.clear();
      c.aggregates = a;
      c.aggregates_hint = repetition_hint;
    }
    out.cases.push_back(std::move(c));
  }
  return out;
}

}  // namespace rnx::importers::detail
