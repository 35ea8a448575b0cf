// Shared part of rnx import: reading the files, mapping names and parameters to configurations, merging files as
// process groups, the aggregate policy and the environment.
#include "rnx/importers/import.hpp"

#include "import_detail.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace rnx::importers {

namespace bj = boost::json;

std::string_view to_string(format f) {
  switch (f) {
    case format::gbench: return "gbench";
    case format::pytest_benchmark: return "pytest-benchmark";
    case format::nvbench: return "nvbench";
  }
  return "gbench";
}

std::optional<format> format_from_string(std::string_view name) {
  return enum_from_name(name, {format::gbench, format::pytest_benchmark, format::nvbench});
}

namespace detail {

void fail(const std::string& file, const std::string& path, const std::string& what) {
  throw error(errc::invalid, file + ": " + path + ": " + what);
}

std::string recognise(const bj::value& doc) {
  const bj::object* o = doc.if_object();
  if (!o) return "";
  auto has = [&](std::string_view key) { return o->contains(key); };
  if (has("schema") && o->at("schema") == "rnx.run/v1") return "an rnx run document (rnx.run/v1), already converted";
  if (has("context") && has("benchmarks")) return "Google Benchmark JSON (--format gbench)";
  if (has("machine_info") && has("benchmarks")) return "pytest-benchmark JSON (--format pytest-benchmark)";
  if (has("devices") && has("benchmarks")) return "nvbench JSON (--format nvbench)";
  if (has("meta") && has("benchmarks")) return "nvbench JSON (--format nvbench)";
  return "";
}

void require_harness_keys(const std::string& file, const bj::value& doc, std::string_view expected,
                          std::string_view key) {
  const bj::object* top = doc.if_object();
  if (top && top->contains(key) && top->contains("benchmarks")) return;
  std::string what = "not " + std::string(expected) + " (it has no \"" + std::string(key) + "\" and \"benchmarks\")";
  const std::string looks = recognise(doc);
  if (!looks.empty()) what += "; it looks like " + looks;
  throw error(errc::invalid, file + ": $: " + what);
}

std::string param_text(const bj::value& v) {
  if (v.is_string()) return std::string(v.get_string());
  return bj::serialize(v);
}

}  // namespace detail

namespace {

using detail::measured_case;
using detail::parsed_file;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A dtype parameter's value as an rnx dtype, or "" when it names none of them.
std::string dtype_of(std::string_view value) {
  static const std::map<std::string, std::string> names = {{"float32", "float32"},
                                                           {"f32", "float32"},
                                                           {"fp32", "float32"},
                                                           {"float", "float32"},
                                                           {"torch.float32", "float32"},
                                                           {"float16", "float16"},
                                                           {"f16", "float16"},
                                                           {"fp16", "float16"},
                                                           {"half", "float16"},
                                                           {"__half", "float16"},
                                                           {"torch.float16", "float16"},
                                                           {"bfloat16", "bfloat16"},
                                                           {"bf16", "bfloat16"},
                                                           {"__nv_bfloat16", "bfloat16"},
                                                           {"torch.bfloat16", "bfloat16"},
                                                           {"float64", "float64"},
                                                           {"f64", "float64"},
                                                           {"fp64", "float64"},
                                                           {"double", "float64"},
                                                           {"torch.float64", "float64"}};
  auto it = names.find(lower(value));
  return it == names.end() ? "" : it->second;
}

bool is_dtype_param(std::string_view name) {
  static const std::set<std::string> names = {"dtype", "type", "t", "data_type", "datatype", "value_type", "valuetype"};
  return names.count(lower(name)) > 0;
}

bool is_batch_param(std::string_view name) {
  static const std::set<std::string> names = {"batch", "batch_size", "batchsize"};
  return names.count(lower(name)) > 0;
}

std::optional<std::int64_t> positive_integer(std::string_view text) {
  if (text.empty() || text.size() > 15) return std::nullopt;
  std::int64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n >= 1 ? std::optional<std::int64_t>(n) : std::nullopt;
}

// The mapping of docs/import.md: the first dtype-named parameter with a dtype value is the dtype, the first
// batch-named one with a positive integer the batch; every other parameter stays in the kernel's name, in order.
config_key key_of(const measured_case& c, std::string_view runtime) {
  config_key key{c.name, std::string(runtime), "none", 1};
  bool have_dtype = false;
  bool have_batch = false;
  std::string rest;
  for (const auto& [name, value] : c.params) {
    if (!have_dtype && is_dtype_param(name) && !dtype_of(value).empty()) {
      key.dtype = dtype_of(value);
      have_dtype = true;
      continue;
    }
    if (!have_batch && is_batch_param(name) && positive_integer(value)) {
      key.batch = *positive_integer(value);
      have_batch = true;
      continue;
    }
    if (!rest.empty()) rest += ",";
    rest.append(name).append("=").append(value);
  }
  if (!rest.empty()) key.kernel += "[" + rest + "]";
  return key;
}

struct merged {
  run_result result;
  std::string first_file;
  std::string first_path;
  std::vector<std::size_t> in_files;  // indices of the files that have this configuration
};

// Files of one import must come from one machine and one harness: a baseline compares like with like.
void check_same_context(const parsed_file& first, const parsed_file& other) {
  const auto& a = first.context;
  const auto& b = other.context;
  auto differ = [&](std::string_view what, const std::string& x, const std::string& y) {
    if (x == y) return;
    detail::fail(other.file, b.path,
                 std::string(what) + " \"" + y + "\" differs from \"" + x + "\" in " + first.file +
                     ": import the files of one machine and harness at a time");
  };
  differ("harness", a.harness, b.harness);
  differ("host", a.host, b.host);
  differ("device", a.device, b.device);
  differ("cpu", a.cpu, b.cpu);
  differ("cpu", a.cpu_detail, b.cpu_detail);
  differ("os", a.os, b.os);
  differ("python", a.python, b.python);
  differ("thread count", std::to_string(a.threads), std::to_string(b.threads));
}

std::vector<parsed_file> read_files(const import_options& options) {
  std::vector<parsed_file> files;
  for (const auto& file : options.files) {
    bj::value doc;
    try {
      doc = json::parse_file(file);
    } catch (const error& e) {
      if (e.code() != errc::bad_input) throw;
      throw error(errc::bad_input, std::string(e.what()) +
                                       " (a truncated file? the harness may have been stopped "
                                       "while writing it)");
    }
    switch (options.fmt) {
      case format::gbench: files.push_back(detail::parse_gbench(file, doc, options.gbench_cpu_time)); break;
      case format::pytest_benchmark: files.push_back(detail::parse_pytest_benchmark(file, doc)); break;
      case format::nvbench: files.push_back(detail::parse_nvbench(file, doc)); break;
    }
    if (files.back().cases.empty()) {
      detail::fail(file, "$.benchmarks", "no benchmarks in this run (an empty run: did a filter match nothing?)");
    }
    if (files.size() > 1) check_same_context(files.front(), files.back());
  }
  return files;
}

merged first_sight(const measured_case& c, const config_key& key, const parsed_file& f, bool several_files) {
  merged m;
  m.first_file = f.file;
  m.first_path = c.path;
  run_result& r = m.result;
  r.kernel = key.kernel;
  r.runtime = key.runtime;
  r.dtype = key.dtype;
  r.batch = key.batch;
  r.device = c.device;
  r.status = c.status;
  r.message = c.message;
  r.samples_ms = c.samples_ms;
  if (several_files && !c.samples_ms.empty()) r.groups.push_back(static_cast<std::int64_t>(c.samples_ms.size()));
  r.params = c.params;
  r.origin = c.origin;
  r.aggregates = c.aggregates;
  return m;
}

void add_process(merged& m, const measured_case& c, const config_key& key, const parsed_file& f) {
  run_result& r = m.result;
  if (r.aggregates || c.aggregates) {
    detail::fail(f.file, c.path,
                 key.label() + " has only aggregates here or in " + m.first_file + " (" + m.first_path +
                     "), and summaries of separate runs cannot be merged: import "
                     "per-sample output, or one file");
  }
  if (c.status != result_status::ok && r.status == result_status::ok) {
    // A failure in any process is the configuration's outcome; its samples from other processes are kept.
    r.status = c.status;
    r.message = c.message + " (in " + f.file + ")";
  }
  if (!c.samples_ms.empty()) {
    r.samples_ms.insert(r.samples_ms.end(), c.samples_ms.begin(), c.samples_ms.end());
    r.groups.push_back(static_cast<std::int64_t>(c.samples_ms.size()));
  }
}

// "FILE: PATH: NAME has WHAT, no per-sample times (and N more): HINT, or pass --allow-aggregates ...".
[[noreturn]] void refuse_aggregates(const std::vector<std::pair<std::string, const measured_case*>>& refused) {
  const auto& [file, c] = refused.front();
  const bool several = refused.size() > 1;
  throw error(errc::invalid,
              file + ": " + c->path + ": " + c->origin + " has " + c->aggregates_what + ", no per-sample times" +
                  (several ? " (and " + std::to_string(refused.size() - 1) + " more)" : "") + ": " +
                  c->aggregates_hint + ", or pass --allow-aggregates to import " + (several ? "them" : "it") +
                  " marked (the verdict abstains on " + (several ? "them" : "it") + ")");
}

// One result per configuration, in the order of first appearance; each file is one process group.
std::vector<merged> merge_files(const std::vector<parsed_file>& files, const import_options& options) {
  const std::string runtime(to_string(options.fmt));
  std::vector<merged> results;
  std::map<config_key, std::size_t> index;
  std::vector<std::pair<std::string, const measured_case*>> refused;  // configurations with only aggregates
  for (std::size_t file_index = 0; file_index < files.size(); ++file_index) {
    const parsed_file& f = files[file_index];
    std::map<config_key, std::string> in_this_file;
    for (const auto& c : f.cases) {
      const config_key key = key_of(c, runtime);
      if (auto [it, inserted] = in_this_file.emplace(key, c.path); !inserted) {
        detail::fail(f.file, c.path,
                     "duplicate configuration " + key.label() + " (also at " + it->second +
                         "): each benchmark name and parameter set may appear once per file");
      }
      if (c.aggregates && !options.allow_aggregates) refused.emplace_back(f.file, &c);
      auto found = index.find(key);
      if (found == index.end()) {
        index.emplace(key, results.size());
        results.push_back(first_sight(c, key, f, files.size() > 1));
        results.back().in_files.push_back(file_index);
        continue;
      }
      add_process(results[found->second], c, key, f);
      results[found->second].in_files.push_back(file_index);
    }
  }
  if (!refused.empty()) refuse_aggregates(refused);
  return results;
}

// Configurations that some files lack, grouped by the files they are missing from: one warning per group.
std::vector<std::string> missing_configurations(const std::vector<merged>& results,
                                                const std::vector<parsed_file>& files) {
  std::map<std::vector<std::size_t>, std::vector<std::string>> by_missing;
  std::vector<std::vector<std::size_t>> order;
  for (const auto& m : results) {
    if (m.in_files.size() == files.size()) continue;
    std::vector<std::size_t> missing;
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (std::find(m.in_files.begin(), m.in_files.end(), i) == m.in_files.end()) missing.push_back(i);
    }
    auto& labels = by_missing[missing];
    if (labels.empty()) order.push_back(missing);
    labels.push_back(m.result.key().label());
  }
  std::vector<std::string> warnings;
  for (const auto& missing : order) {
    const auto& labels = by_missing[missing];
    std::string where;
    for (std::size_t i = 0; i < missing.size(); ++i) where += (i ? ", " : "") + files[missing[i]].file;
    std::string names;
    for (std::size_t i = 0; i < labels.size() && i < 5; ++i) names += (i ? ", " : "") + labels[i];
    if (labels.size() > 5) names += " and " + std::to_string(labels.size() - 5) + " more";
    const bool one = labels.size() == 1;
    std::string warning = std::to_string(labels.size()) + " configuration";
    warning.append(one ? " is" : "s are").append(" missing from ").append(where).append(" (in ");
    warning.append(std::to_string(files.size() - missing.size())).append(" of ").append(std::to_string(files.size()));
    warning.append(" files): ").append(names).append("; ").append(one ? "its" : "each");
    warning.append(
        " result holds the samples of the files that have it, one process group each (was it filtered out "
        "or renamed there, or did the harness stop before it?)");
    warnings.push_back(std::move(warning));
  }
  return warnings;
}

// The run's time: the earliest of the files' own time stamps in UTC; the time of the import only where no file has
// one it can read, and then said.
std::string created_at(const std::vector<parsed_file>& files, std::vector<std::string>& notes) {
  std::string earliest;
  std::string naive_first;
  std::size_t naive_count = 0;
  for (const auto& f : files) {
    const auto& ctx = f.context;
    if (ctx.timestamp.empty()) continue;
    const auto stamp = detail::read_timestamp(ctx.timestamp);
    if (!stamp) {
      notes.push_back(f.file + ": " + ctx.timestamp_path + ": \"" + ctx.timestamp +
                      "\" is no date and time rnx "
                      "reads (ISO 8601, e.g. 2026-12-03T09:27:05+02:00); left out of created_at");
      continue;
    }
    if (stamp->naive && naive_count++ == 0) {
      naive_first = f.file + ": " + ctx.timestamp_path + ": \"" + ctx.timestamp + "\" has no UTC offset";
    }
    if (earliest.empty() || stamp->utc < earliest) earliest = stamp->utc;
  }
  if (naive_count > 0) {
    const std::size_t more = naive_count - 1;
    const std::string likewise =
        more ? " (likewise in " + std::to_string(more) + " more file" + (more == 1 ? "" : "s") + ")" : "";
    notes.push_back(naive_first + likewise + ": taken as UTC (" + files.front().context.naive_timestamp_rule + ")");
  }
  if (!earliest.empty()) return earliest;
  std::string now = utc_now_rfc3339();
  for (const auto& f : files) {
    if (f.context.timestamp.empty()) continue;
    notes.push_back("created_at is the time of the import, " + now + ": no file has a time stamp rnx reads");
    break;
  }
  return now;
}

// --project, else a project the harness recorded; a run must belong to one.
std::string run_project(const import_options& options, const std::vector<parsed_file>& files,
                        std::vector<std::string>& notes) {
  if (!options.project.empty()) return options.project;
  for (const auto& f : files) {
    if (f.context.project.empty()) continue;
    notes.push_back("project \"" + f.context.project + "\" from " + f.file + ": " + f.context.project_path +
                    " (no --project given)");
    return f.context.project;
  }
  std::string names = files.front().file;
  if (files.size() > 1) names += " and the other files";
  throw error(errc::usage,
              "no project to file the run under: pass --project NAME, or run rnx import beside the "
              "rnx.toml that names it ([project] name); " +
                  names + " name" + (files.size() > 1 ? "" : "s") +
                  " none (of the harnesses only pytest-benchmark records "
                  "one, in commit_info.project)");
}

// The facts a file records of its machine, beside the same facts of this machine, in the same order: "host
// \"maya-mbp\", Apple M3 Pro, 12 threads, Darwin 23.4.0 arm64". Only the facts the file has are compared.
struct machine_views {
  std::string file;
  std::string here;
  bool differ = false;
};

machine_views compare_machines(const detail::harness_context& ctx, const detail::machine_facts& here) {
  machine_views out;
  auto add = [&](const std::string& file_fact, const std::string& here_fact) {
    if (file_fact.empty()) return;
    out.file += (out.file.empty() ? "" : ", ") + file_fact;
    out.here += (out.here.empty() ? "" : ", ") + here_fact;
    out.differ = out.differ || file_fact != here_fact;
  };
  if (!ctx.host.empty()) add("host \"" + ctx.host + "\"", "host \"" + here.host + "\"");
  add(ctx.cpu, here.cpu);
  if (ctx.threads > 0) add(std::to_string(ctx.threads) + " threads", std::to_string(here.threads) + " threads");
  add(ctx.os, here.kernel);
  return out;
}

// The machine the first file names is the run's environment (the files of one import name one machine, checked
// when they are read); fields it does not record stay empty rather than take the importing machine's, so one file
// gives one env_id wherever it is imported. A file that names no machine gets the importing machine's, and a note.
environment run_environment(const parsed_file& first, std::string& note) {
  const detail::harness_context& ctx = first.context;
  const detail::machine_facts here = detail::this_machine();
  environment env;
  env.compute_capability = ctx.compute_capability;
  env.python = ctx.python;
  env.harness = ctx.harness;
  env.clocks = ctx.clocks;
  if (ctx.names_machine) {
    env.cpu = !ctx.cpu.empty() || ctx.cpu_detail.empty() ? ctx.cpu : "unknown model, " + ctx.cpu_detail;
    env.threads = ctx.threads;
    env.os = ctx.os;
    env.host = ctx.host;
    env.source = env_source{env_origin::file, first.file + ": " + ctx.path, ""};
    if (const machine_views views = compare_machines(ctx, here); views.differ) {
      env.source->imported_on = views.here;
      note = first.file + ": " + ctx.path + ": measured on " + views.file + ", not on this machine (" + views.here +
             "): the environment is the one the file names";
    }
  } else {
    env.cpu = here.cpu;
    env.threads = ctx.threads > 0 ? ctx.threads : here.threads;
    env.os = here.os;
    env.image = here.image;
    env.source = env_source{env_origin::importing_machine, "", ""};
    note = first.file + ": " + ctx.path + ": the file names no machine (" + ctx.harness +
           " recorded no host, CPU or OS here), so the environment is this one, where rnx import ran (" + here.cpu +
           ", " + here.os + "): import on the machine that ran the benchmarks";
  }
  env.device = !ctx.device.empty() ? ctx.device : "cpu: " + (env.cpu.empty() ? std::string("unknown") : env.cpu);
  env.env_id = compute_env_id(env);
  return env;
}

}  // namespace

run_document import_run(const import_options& options, import_summary* summary) {
  if (options.files.empty()) throw error(errc::usage, "rnx import needs at least one FILE");
  const std::string runtime(to_string(options.fmt));
  if (options.gbench_cpu_time && options.fmt != format::gbench) {
    throw error(errc::usage, "--gbench-time cpu applies to --format gbench only (" + runtime +
                                 " output has one timer per file; see docs/import.md)");
  }
  const std::vector<parsed_file> files = read_files(options);
  std::vector<merged> results = merge_files(files, options);

  import_summary counts;
  for (const auto& f : files) counts.notes.insert(counts.notes.end(), f.notes.begin(), f.notes.end());
  counts.warnings = missing_configurations(results, files);
  const detail::harness_context& ctx = files.front().context;
  run_document run;
  run.project = run_project(options, files, counts.notes);
  run.commit = !options.commit.empty() ? options.commit : ctx.commit;
  run.branch = !options.branch.empty() ? options.branch : ctx.branch;
  run.base_branch = options.base_branch;
  run.pull_request = options.pull_request;
  run.created_at = created_at(files, counts.notes);
  run.env = run_environment(files.front(), counts.environment_note);

  for (auto& m : results) {
    run_result& r = m.result;
    if (r.status != result_status::ok) {
      ++counts.not_ok;
    } else if (r.aggregates) {
      ++counts.aggregates_only;
    } else {
      ++counts.with_samples;
      if (r.samples_ms.size() < 8) counts.few_samples.push_back(r.key().label());
    }
    // A single group says nothing more than none.
    if (r.groups.size() == 1) r.groups.clear();
    run.results.push_back(std::move(r));
  }
  counts.configurations = run.results.size();
  if (summary) *summary = counts;
  // What rnx import writes must read back under the run document's own rules (every reader validates).
  return run_from_json(to_json(run), "the imported run");
}

}  // namespace rnx::importers
