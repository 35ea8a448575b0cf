// pytest-benchmark's JSON (--benchmark-json, or a file saved by --benchmark-save / --benchmark-autosave): each round's
// time in stats.data is a sample. --benchmark-json always writes stats.data; saved files have it only with
// --benchmark-save-data, and without it only the summary statistics exist.
#include "import_detail.hpp"

#include "rnx/common/json.hpp"

#include <cctype>

namespace rnx::importers::detail {

namespace {

namespace bj = boost::json;

const char* const save_data_hint =
    "import the file that --benchmark-json=FILE writes (it always holds every round's time), or save with "
    "--benchmark-save-data beside --benchmark-save / --benchmark-autosave (saved files hold the rounds only then)";

// A value pytest-benchmark could not write as JSON: its encoder writes "UNSERIALIZABLE[repr]", and a repr holds the
// object's memory address ("<Foo object at 0x7f...>"), which differs from run to run. A list or mapping is unstable
// when anything inside it is.
bool unstable_value(const bj::value& v) {
  const std::string text = param_text(v);
  if (text.find("UNSERIALIZABLE[") != std::string::npos) return true;
  const auto at = text.find(" at 0x");
  return at != std::string::npos && at + 6 < text.size() && std::isxdigit(static_cast<unsigned char>(text[at + 6]));
}

// pytest joins the ids of a test's parameters with "-"; the id of a parameter it cannot show (an object) is the
// argument's name and its index ("obj0"), a function's or class's its name, the same every run. When the test id
// splits into one part per parameter, in the order of params, the unstable parameters take their part of it;
// otherwise the whole id stands in for them.
void name_params(const std::string& file, const json::reader& params, const std::string& id, measured_case& c,
                 std::vector<std::pair<std::string, std::string>>& renamed) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const auto dash = id.find('-', start);
    parts.push_back(id.substr(start, dash == std::string::npos ? std::string::npos : dash - start));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  const auto& object = params.object();
  // The parts line up with the parameters when there is one each and every string or integer parameter reads as its
  // own part (pytest writes those as they are); a fixture's parameters can come in another order than params.
  bool one_part_each = !id.empty() && parts.size() == object.size();
  std::size_t checked = 0;
  for (const auto& [key, value] : object) {
    const bool plain = value.is_string() || value.is_int64() || value.is_uint64();
    if (one_part_each && plain && !unstable_value(value) && parts[checked] != param_text(value)) {
      one_part_each = false;
    }
    ++checked;
  }
  bool whole_id_used = false;
  std::size_t index = 0;
  for (const auto& [key, value] : object) {
    const std::size_t position = index++;
    if (!unstable_value(value)) {
      c.params.emplace_back(std::string(key), param_text(value));
      if (key == "device") c.device = param_text(value);
      continue;
    }
    const std::string where = file + ": " + params.path() + "." + std::string(key) + ": " + param_text(value);
    if (one_part_each) {
      c.params.emplace_back(std::string(key), parts[position]);
      renamed.emplace_back(where, std::string(key) + "=" + parts[position]);
    } else if (!whole_id_used) {
      c.params.emplace_back("id", id.empty() ? std::string(key) : id);
      renamed.emplace_back(where, c.params.back().first + "=" + c.params.back().second);
      whole_id_used = true;
    }
  }
}

std::string unstable_note(const std::vector<std::pair<std::string, std::string>>& renamed) {
  const std::size_t more = renamed.size() - 1;
  return renamed.front().first + " is named " + renamed.front().second + ", from the test id" +
         (more ? " (and " + std::to_string(more) + " more parameter" + (more == 1 ? "" : "s") + " like it)" : "") +
         ": pytest-benchmark writes the repr of a value it cannot write as JSON, and the memory address in it "
         "changes every run; the test id does not, so runs of one suite share configurations";
}

}  // namespace

parsed_file parse_pytest_benchmark(const std::string& file, const bj::value& doc) {
  require_harness_keys(file, doc, "pytest-benchmark JSON", "machine_info");
  json::reader root(doc, file);
  parsed_file out;
  out.file = file;
  harness_context& ctx = out.context;
  ctx.path = "$.machine_info";
  ctx.harness = "pytest-benchmark";
  if (auto v = root.maybe("version")) ctx.harness += " " + v->string();
  auto machine = root.at("machine_info");
  ctx.python = machine.string_or("python_version", "");
  // platform.node(), platform.system() / release() / machine() of the machine that ran the suite.
  ctx.host = machine.string_or("node", "");
  for (const char* part : {"system", "release", "machine"}) {
    const std::string text = machine.string_or(part, "");
    if (!text.empty()) ctx.os += (ctx.os.empty() ? "" : " ") + text;
  }
  if (const std::string processor = machine.string_or("processor", ""); !processor.empty()) {
    ctx.cpu_detail = "processor " + processor;
  }
  if (auto cpu = machine.maybe("cpu")) {
    ctx.cpu = cpu->string_or("brand_raw", "");
    if (auto count = cpu->maybe("count")) ctx.threads = count->integer();
    if (auto hz = cpu->maybe("hz_actual"); hz && hz->value().is_array() && !hz->array().empty()) {
      ctx.clocks["cpu_mhz"] = hz->at(0).number() / 1e6;
    }
  }
  ctx.names_machine = !ctx.host.empty() || !ctx.os.empty() || !ctx.cpu.empty();
  if (auto commit = root.maybe("commit_info")) {
    // pytest-benchmark writes placeholders where it found no repository.
    const std::string id = commit->string_or("id", "");
    if (id != "unversioned") ctx.commit = id;
    const std::string branch = commit->string_or("branch", "");
    if (branch != "(unknown)") ctx.branch = branch;
  }
  if (auto project = root.maybe("commit_info"); project && project->has("project")) {
    ctx.project = project->string_or("project", "");
    ctx.project_path = project->path() + ".project";
  }
  if (auto when = root.maybe("datetime")) {
    ctx.timestamp = when->string();
    ctx.timestamp_path = when->path();
    ctx.naive_timestamp_rule = "pytest-benchmark before 5.0 wrote datetime.utcnow(), UTC without an offset";
  }

  auto benchmarks = root.at("benchmarks");
  std::vector<std::pair<std::string, std::string>> renamed;  // where an unstable value was, and what names it now
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
      name_params(file, *params, param, c, renamed);
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
      c.aggregates_what = "only the summary statistics of its " + std::to_string(a.count) + " round" +
                          (a.count == 1 ? "" : "s") + " (no stats.data)";
      c.aggregates_hint = save_data_hint;
    }
    out.cases.push_back(std::move(c));
  }
  if (!renamed.empty()) out.notes.push_back(unstable_note(renamed));
  return out;
}

}  // namespace rnx::importers::detail
