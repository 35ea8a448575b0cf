// Google Benchmark's JSON (--benchmark_out_format=json or --benchmark_format=json): every repetition's time is a
// sample; a benchmark with one repetition, or with only its mean/median/stddev rows, has only aggregates. The rows of
// ->Complexity() (BigO, RMS) are fits over a family's sizes, not measurements of one configuration: left out.
#include "import_detail.hpp"

#include "rnx/common/json.hpp"

#include <map>

namespace rnx::importers::detail {

namespace {

namespace bj = boost::json;

const char* const repetitions_hint =
    "run the benchmark with --benchmark_repetitions=10 (a verdict needs 8 a side; add "
    "--benchmark_enable_random_interleaving=true) so that every repetition is a sample";
const char* const aggregates_only_hint =
    "run the benchmark without --benchmark_report_aggregates_only (and, for JSON on standard output, without "
    "--benchmark_display_aggregates_only) so that every repetition is written";

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
  std::string unit;                                 // of the first repetition, to refuse mixed units
  std::string unit_path;                            // where that unit was read
  std::map<std::int64_t, std::string> repetitions;  // repetition_index -> path, to refuse duplicates
  std::map<std::string, double> aggregate_ms;       // mean, median, stddev, min, max
  std::int64_t aggregate_count = 0;
  std::int64_t iterations = 0;  // of a single repetition
};

// Versions before run_type (1.4 and older) named the aggregate rows of benchmark NAME "NAME_mean", "NAME_median",
// "NAME_stddev"; such a row after NAME's own rows is its aggregate.
void legacy_aggregate(const std::map<std::string, std::size_t>& seen, std::string& run_name, std::string& run_type,
                      std::string& aggregate_name) {
  for (const char* suffix : {"_mean", "_median", "_stddev"}) {
    const std::string_view tail(suffix);
    if (run_name.size() <= tail.size() || run_name.compare(run_name.size() - tail.size(), tail.size(), tail) != 0) {
      continue;
    }
    const std::string base = run_name.substr(0, run_name.size() - tail.size());
    if (!seen.count(base)) return;
    run_name = base;
    run_type = "aggregate";
    aggregate_name = std::string(tail.substr(1));
    return;
  }
}

// ->Complexity() adds a BigO row (coefficients, no times) and an RMS row (a fraction) per family; versions before
// run_type had only their big_o / rms members to tell them apart.
bool is_complexity_row(const json::reader& entry) {
  const std::string aggregate = entry.string_or("aggregate_name", "");
  return aggregate == "BigO" || aggregate == "RMS" || entry.has("big_o") || entry.has("rms");
}

std::string complexity_note(const std::string& file, const std::string& path, const std::vector<std::string>& rows) {
  std::string names;
  for (std::size_t i = 0; i < rows.size() && i < 4; ++i) names += (i ? ", " : "") + rows[i];
  if (rows.size() > 4) names += " and " + std::to_string(rows.size() - 4) + " more";
  return file + ": " + path + ": left out " + std::to_string(rows.size()) + " complexity row" +
         (rows.size() == 1 ? "" : "s") + " (" + names +
         "): ->Complexity() fits a curve over a family's sizes, which "
         "measures no one configuration; each size's own rows are imported";
}

// A benchmark without two repetitions keeps a summary: one repetition is itself a mean over its iterations, and the
// aggregate rows (--benchmark_report_aggregates_only) are summaries of repetitions that were not written.
void keep_summary(const std::string& file, gathered& g) {
  measured_case& c = g.c;
  aggregate_summary a;
  if (c.samples_ms.size() == 1) {
    a.count = std::max<std::int64_t>(1, g.iterations);
    a.mean_ms = c.samples_ms.front();
    c.aggregates_what = "a single repetition (one mean over its " + std::to_string(a.count) + " iteration" +
                        (a.count == 1 ? "" : "s") + ")";
    c.aggregates_hint = repetitions_hint;
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
    std::string names;
    for (const auto& [name, ms] : g.aggregate_ms) names += (names.empty() ? "" : ", ") + name;
    const std::string of = g.aggregate_count > 1 ? " of " + std::to_string(g.aggregate_count) + " repetitions" : "";
    c.aggregates_what = "only aggregate rows (" + names + of + ")";
    c.aggregates_hint = aggregates_only_hint;
  }
  c.samples_ms.clear();
  c.aggregates = a;
}

// A cache size as people write it: "32 KiB", "1 MiB".
std::string size_text(std::int64_t bytes) {
  constexpr std::int64_t kib = 1024;
  if (bytes >= kib * kib && bytes % (kib * kib) == 0) return std::to_string(bytes / (kib * kib)) + " MiB";
  if (bytes >= kib && bytes % kib == 0) return std::to_string(bytes / kib) + " KiB";
  return std::to_string(bytes) + " B";
}

// The context's caches ("L1d 32 KiB, L1i 32 KiB, L2 1 MiB, L3 32 MiB"): with the CPU count, what Google Benchmark
// records of a CPU, which it names no model of.
std::string caches_text(const json::reader& context) {
  auto caches = context.maybe("caches");
  if (!caches || !caches->value().is_array()) return "";
  std::string out;
  for (std::size_t i = 0; i < caches->array().size(); ++i) {
    auto cache = caches->at(i);
    const std::string type = cache.string_or("type", "");
    const char* kind = type == "Data" ? "d" : type == "Instruction" ? "i" : "";
    out += (out.empty() ? "L" : ", L") + std::to_string(cache.integer("level")) + kind + " " +
           size_text(cache.integer("size"));
  }
  return out;
}

// What the context says of the machine: its host name and caches (the CPU count is read with the timer's facts).
void read_machine(const json::reader& context, harness_context& ctx) {
  ctx.host = context.string_or("host_name", "");
  if (const std::string caches = caches_text(context); !caches.empty()) ctx.cpu_detail = "caches " + caches;
  ctx.names_machine = !ctx.host.empty() || !ctx.cpu_detail.empty();
}

}  // namespace

parsed_file parse_gbench(const std::string& file, const bj::value& doc, bool cpu_time) {
  require_harness_keys(file, doc, "Google Benchmark JSON", "context");
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
  read_machine(context, ctx);
  if (auto date = context.maybe("date")) {
    ctx.timestamp = date->string();
    ctx.timestamp_path = date->path();
    ctx.naive_timestamp_rule =
        "older Google Benchmark versions wrote the local time of the machine that ran it, "
        "without its offset";
  }

  auto benchmarks = root.at("benchmarks");
  std::vector<gathered> order;
  std::map<std::string, std::size_t> by_name;
  std::vector<std::string> complexity_rows;
  std::string complexity_path;
  for (std::size_t i = 0; i < benchmarks.array().size(); ++i) {
    auto entry = benchmarks.at(i);
    entry.object();
    std::string run_name = entry.has("run_name") ? entry.string("run_name") : entry.string("name");
    if (is_complexity_row(entry)) {
      if (complexity_rows.empty()) complexity_path = entry.path();
      complexity_rows.push_back(entry.string_or("name", run_name));
      continue;
    }
    std::string run_type = entry.string_or("run_type", "iteration");
    std::string aggregate_name = entry.string_or("aggregate_name", "");
    if (!entry.has("run_type")) legacy_aggregate(by_name, run_name, run_type, aggregate_name);
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
      if (g.c.message.empty())
        g.c.message = errored ? "the benchmark reported an error" : "the benchmark skipped itself";
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
      fail(file, unit_reader.path(),
           "\"" + unit + "\" where " + g.unit_path + " of the same benchmark " + run_name + " says \"" + g.unit +
               "\": mixed units in one benchmark (were two outputs "
               "joined into one file?)");
    }
    auto time = entry.at(cpu_time ? "cpu_time" : "real_time");
    const double ms = time.number() * *factor;
    if (!(ms >= 0)) time.fail("a non-negative time");
    if (run_type == "aggregate") {
      if (aggregate_name.empty()) entry.at("aggregate_name").fail("the aggregate's name (mean, median, ...)");
      g.aggregate_ms[aggregate_name] = ms;
      if (auto reps = entry.maybe("repetitions")) g.aggregate_count = reps->integer();
      continue;
    }
    // Versions before repetition_index wrote the repetitions one after another under one name.
    const std::int64_t repetition = entry.has("repetition_index") ? entry.integer("repetition_index")
                                                                  : static_cast<std::int64_t>(g.c.samples_ms.size());
    if (auto [rep, fresh] = g.repetitions.emplace(repetition, entry.path()); !fresh) {
      fail(file, entry.path(),
           "duplicate benchmark " + run_name + " (repetition " + std::to_string(repetition) + " also at " +
               rep->second + "): each name appears once per repetition");
    }
    g.c.samples_ms.push_back(ms);
    if (auto n = entry.maybe("iterations")) g.iterations = n->integer();
  }

  for (auto& g : order) {
    if (g.c.status != result_status::ok) {
      g.c.samples_ms.clear();
    } else if (g.c.samples_ms.size() < 2) {
      keep_summary(file, g);
    }
    out.cases.push_back(std::move(g.c));
  }
  if (!complexity_rows.empty()) out.notes.push_back(complexity_note(file, complexity_path, complexity_rows));
  return out;
}

}  // namespace rnx::importers::detail
