// Reading, validating and writing rnx.run/v1 documents.
#include "rnx/common/run_document.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/files.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/shard.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

namespace rnx {

namespace bj = boost::json;

std::string_view to_string(result_status s) {
  switch (s) {
    case result_status::ok: return "ok";
    case result_status::diverged: return "diverged";
    case result_status::error: return "error";
    case result_status::skipped: return "skipped";
  }
  return "error";
}

std::optional<result_status> result_status_from_string(std::string_view s) {
  return enum_from_name(s, {result_status::ok, result_status::diverged, result_status::error, result_status::skipped});
}

std::string_view to_string(runtime_kind r) {
  switch (r) {
    case runtime_kind::eager: return "eager";
    case runtime_kind::compile: return "compile";
    case runtime_kind::torchscript: return "torchscript";
    case runtime_kind::onnxruntime: return "onnxruntime";
    case runtime_kind::tensorrt: return "tensorrt";
    case runtime_kind::cpp: return "cpp";
    case runtime_kind::gbench: return "gbench";
    case runtime_kind::pytest_benchmark: return "pytest-benchmark";
    case runtime_kind::nvbench: return "nvbench";
  }
  return "eager";
}

std::optional<runtime_kind> runtime_kind_from_string(std::string_view name) {
  return enum_from_name(name, {runtime_kind::eager, runtime_kind::compile, runtime_kind::torchscript,
                               runtime_kind::onnxruntime, runtime_kind::tensorrt, runtime_kind::cpp,
                               runtime_kind::gbench, runtime_kind::pytest_benchmark, runtime_kind::nvbench});
}

const std::vector<std::string>& bench_runtime_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (auto r : {runtime_kind::eager, runtime_kind::compile, runtime_kind::torchscript, runtime_kind::onnxruntime,
                   runtime_kind::tensorrt}) {
      out.emplace_back(to_string(r));
    }
    return out;
  }();
  return names;
}

std::string_view to_string(dtype_kind d) {
  switch (d) {
    case dtype_kind::float32: return "float32";
    case dtype_kind::float16: return "float16";
    case dtype_kind::bfloat16: return "bfloat16";
    case dtype_kind::float64: return "float64";
    case dtype_kind::none: return "none";
  }
  return "none";
}

std::optional<dtype_kind> dtype_kind_from_string(std::string_view name) {
  return enum_from_name(
      name, {dtype_kind::float32, dtype_kind::float16, dtype_kind::bfloat16, dtype_kind::float64, dtype_kind::none});
}

const std::vector<std::string>& measured_dtype_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (auto d : {dtype_kind::float32, dtype_kind::float16, dtype_kind::bfloat16, dtype_kind::float64}) {
      out.emplace_back(to_string(d));
    }
    return out;
  }();
  return names;
}

std::string_view to_string(pairing_mode p) {
  switch (p) {
    case pairing_mode::none: return "";
    case pairing_mode::process: return "process";
    case pairing_mode::in_process: return "in-process";
  }
  return "";
}

std::optional<pairing_mode> pairing_mode_from_string(std::string_view text) {
  return enum_from_name(text, {pairing_mode::process, pairing_mode::in_process});
}

std::string_view to_string(work_source s) { return s == work_source::declared ? "declared" : "counted"; }

std::optional<work_source> work_source_from_string(std::string_view text) {
  return enum_from_name(text, {work_source::counted, work_source::declared});
}

std::string_view to_string(timed_inputs t) { return t == timed_inputs::fresh ? "fresh" : "same"; }

std::optional<timed_inputs> timed_inputs_from_string(std::string_view text) {
  return enum_from_name(text, {timed_inputs::same, timed_inputs::fresh});
}

std::string_view to_string(l2_state s) { return s == l2_state::flushed ? "flushed" : ""; }

std::optional<l2_state> l2_state_from_string(std::string_view text) {
  if (text == to_string(l2_state::flushed)) return l2_state::flushed;
  return std::nullopt;
}

std::string_view to_string(env_origin o) {
  switch (o) {
    case env_origin::file: return "file";
    case env_origin::importing_machine: return "importing-machine";
  }
  return "file";
}

std::optional<env_origin> env_origin_from_string(std::string_view text) {
  return enum_from_name(text, {env_origin::file, env_origin::importing_machine});
}

std::string_view to_string(pair_side s) { return s == pair_side::base ? "base" : "head"; }

std::optional<pair_side> pair_side_from_string(std::string_view text) {
  return enum_from_name(text, {pair_side::head, pair_side::base});
}

std::string config_key::label() const { return kernel + "/" + runtime + "/" + dtype + "/b" + std::to_string(batch); }

std::string compute_env_id(const environment& env) {
  // Clocks are left out on purpose: boost clocks move between runs on one machine.
  std::string canonical;
  for (const std::string* field : {&env.device, &env.compute_capability, &env.driver, &env.cuda, &env.torch,
                                   &env.python, &env.cpu, &env.os, &env.image}) {
    canonical += *field;
    canonical += '\x1f';
  }
  canonical += std::to_string(env.threads);
  if (!env.harness.empty()) canonical += '\x1f' + env.harness;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(canonical.data(), canonical.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < 8 && i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

std::string kernel_name_problem(std::string_view name, bool imported) {
  if (imported) {
    const bool printable = !name.empty() && name.size() <= 512 && std::none_of(name.begin(), name.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == '\x7f';
    });
    return printable ? "" : "a non-empty harness name of at most 512 characters without control characters";
  }
  const bool ok = !name.empty() && name.size() <= 128 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  return ok ? "" : "1 to 128 letters, digits, '_', '-' or '.' (the rule of rnx.toml's [[kernel]] name)";
}

namespace {

result_status status_from(const json::reader& r) {
  if (auto s = result_status_from_string(r.string())) return *s;
  r.fail("one of \"ok\", \"diverged\", \"error\", \"skipped\"");
}

std::string non_empty(const json::reader& r) {
  std::string s = r.string();
  if (s.empty()) r.fail("a non-empty string");
  return s;
}

env_source env_source_from(const json::reader& r) {
  r.only_keys({"from", "path", "imported_on"});
  env_source source;
  auto from = r.at("from");
  const auto origin = env_origin_from_string(from.string());
  if (!origin) from.fail("\"file\" or \"importing-machine\"");
  source.from = *origin;
  source.path = r.string_or("path", "");
  source.imported_on = r.string_or("imported_on", "");
  return source;
}

peak_measurement peak_measurement_from(const json::reader& r) {
  r.only_keys({"error", "measured_at", "how"});
  peak_measurement m;
  auto error = r.at("error");
  m.error = error.number();
  if (!(m.error >= 0 && m.error < 1)) error.fail("a fraction in [0, 1) (1 - best / lower quartile of the timed calls)");
  m.measured_at = r.string_or("measured_at", "");
  m.how = r.string_or("how", "");
  return m;
}

environment environment_from(const json::reader& r) {
  r.only_keys({"env_id", "device", "compute_capability", "driver", "cuda", "torch", "python", "cpu", "threads", "os",
               "image", "harness", "clocks", "peaks", "peak_measurements", "host", "source"});
  environment env;
  env.env_id = non_empty(r.at("env_id"));
  env.device = non_empty(r.at("device"));
  env.compute_capability = r.string_or("compute_capability", "");
  env.driver = r.string_or("driver", "");
  env.cuda = r.string_or("cuda", "");
  env.torch = r.string_or("torch", "");
  env.python = r.string_or("python", "");
  env.cpu = r.string_or("cpu", "");
  if (auto t = r.maybe("threads")) {
    env.threads = t->integer();
    if (env.threads < 0) t->fail("a non-negative integer");
  }
  env.os = r.string_or("os", "");
  env.image = r.string_or("image", "none");
  env.harness = r.string_or("harness", "");
  if (auto clocks = r.maybe("clocks")) {
    for (const auto& [name, value] : clocks->object()) {
      env.clocks[std::string(name)] = clocks->at(std::string_view(name)).number();
    }
  }
  if (auto peaks = r.maybe("peaks")) {
    for (const auto& [name, value] : peaks->object()) {
      const auto peak = peaks->at(std::string_view(name));
      const double v = peak.number();
      if (!(v > 0)) peak.fail("a positive number (a peak rate)");
      env.peaks[std::string(name)] = v;
    }
  }
  if (auto measured = r.maybe("peak_measurements")) {
    for (const auto& [name, value] : measured->object()) {
      env.peak_measurements[std::string(name)] = peak_measurement_from(measured->at(std::string_view(name)));
    }
  }
  env.host = r.string_or("host", "");
  if (auto source = r.maybe("source")) env.source = env_source_from(*source);
  return env;
}

// A result's work: flops and bytes (non-negative counts, at least one of them) and where they came from.
work_info work_from(const json::reader& r) {
  r.only_keys({"flops", "bytes", "source", "elementwise"});
  work_info w;
  auto source = r.at("source");
  const std::optional<work_source> from = work_source_from_string(source.string());
  if (!from) source.fail("\"counted\" or \"declared\"");
  w.source = *from;
  auto count = [&](std::string_view key) -> std::optional<std::int64_t> {
    auto member = r.maybe(key);
    if (!member) return std::nullopt;
    const std::int64_t n = member->integer();
    if (n < 0) member->fail("a non-negative count");
    return n;
  };
  w.flops = count("flops");
  w.bytes = count("bytes");
  w.elementwise = count("elementwise");
  if (!w.flops && !w.bytes) r.fail("flops, bytes or both (a result whose work is unknown has no work)");
  return w;
}

// A result's physical bound: the output's bytes and the fill time of that many bytes (both non-negative).
physical_bound bound_from(const json::reader& r) {
  r.only_keys({"output_bytes", "write_ms"});
  physical_bound b;
  auto bytes = r.at("output_bytes");
  b.output_bytes = bytes.integer();
  if (b.output_bytes < 0) bytes.fail("a non-negative count");
  auto ms = r.at("write_ms");
  b.write_ms = ms.number();
  if (b.write_ms < 0) ms.fail("a non-negative time in milliseconds");
  return b;
}

}  // namespace

bool beyond_physics(const physical_bound& b, double median_ms) { return median_ms * physics_margin < b.write_ms; }

std::string physics_text(const physical_bound& b, double median_ms) {
  std::ostringstream os;
  os.precision(3);
  os << "a call returns " << static_cast<double>(b.output_bytes) / 1048576.0
     << " MiB of output, which this device cannot write in less than " << b.write_ms << " ms, yet its median call took "
     << median_ms << " ms (a result kept from an earlier call is returned, not computed)";
  return os.str();
}

namespace {

// An in-process result's side loaded first per process group: one "head" or "base" per group, or none at all.
std::vector<pair_side> first_sides_from(const json::reader& r, std::size_t groups) {
  std::vector<pair_side> out;
  auto sides = r.maybe("first_sides");
  if (!sides) return out;
  for (std::size_t i = 0; i < sides->array().size(); ++i) {
    auto side = sides->at(i);
    const std::optional<pair_side> s = pair_side_from_string(side.string());
    if (!s) side.fail("\"head\" or \"base\"");
    out.push_back(*s);
  }
  if (!out.empty() && out.size() != groups) {
    sides->fail("one side per process group (" + std::to_string(groups) + " groups, " + std::to_string(out.size()) +
                " given)");
  }
  return out;
}

run_result result_from(const json::reader& r, kernel_names names) {
  r.only_keys({"kernel",  "runtime",    "dtype",      "batch",        "device",
               "status",  "samples_ms", "groups",     "unstable",     "max_abs_err",
               "rel_err", "tolerance",  "message",    "pairing",      "pairing_reason",
               "params",  "origin",     "aggregates", "measured_on",  "timed_inputs",
               "work",    "l2",         "bound",      "base_control", "first_sides"});
  run_result res;
  res.kernel = non_empty(r.at("kernel"));
  auto runtime = r.at("runtime");
  res.runtime = runtime.string();
  if (!runtime_kind_from_string(res.runtime)) {
    runtime.fail("one of eager, compile, torchscript, onnxruntime, tensorrt, cpp, gbench, pytest-benchmark, nvbench");
  }
  auto dtype = r.at("dtype");
  res.dtype = dtype.string();
  if (!dtype_kind_from_string(res.dtype)) dtype.fail("one of float32, float16, bfloat16, float64, none");
  auto batch = r.at("batch");
  res.batch = batch.integer();
  if (res.batch < 1) batch.fail("a batch size of at least 1");
  res.device = r.string_or("device", "cpu");
  res.status = status_from(r.at("status"));
  if (auto samples = r.maybe("samples_ms")) {
    const auto& arr = samples->array();
    res.samples_ms.reserve(arr.size());
    for (std::size_t i = 0; i < arr.size(); ++i) {
      auto sample = samples->at(i);
      double ms = sample.number();
      if (!(ms >= 0)) sample.fail("a non-negative time in milliseconds");
      res.samples_ms.push_back(ms);
    }
  }
  if (auto groups = r.maybe("groups")) {
    const auto& arr = groups->array();
    std::int64_t total = 0;
    for (std::size_t i = 0; i < arr.size(); ++i) {
      auto g = groups->at(i);
      std::int64_t count = g.integer();
      if (count < 1) g.fail("a positive sample count");
      res.groups.push_back(count);
      total += count;
    }
    if (!res.groups.empty() && total != static_cast<std::int64_t>(res.samples_ms.size())) {
      groups->fail("counts summing to the " + std::to_string(res.samples_ms.size()) +
                   " samples in samples_ms (sum is " + std::to_string(total) + ")");
    }
  }
  res.first_sides = first_sides_from(r, res.groups.size());
  if (auto u = r.maybe("unstable")) res.unstable = u->boolean();
  if (auto e = r.maybe("max_abs_err")) res.max_abs_err = e->number();
  if (auto e = r.maybe("rel_err")) res.rel_err = e->number();
  if (auto t = r.maybe("tolerance")) {
    t->only_keys({"rtol", "atol"});
    res.tol = tolerance{t->number("rtol"), t->number("atol")};
  }
  res.message = r.string_or("message", "");
  if (res.status != result_status::ok && res.message.empty()) {
    r.at("message").fail("a message explaining the non-ok status");
  }
  if (auto p = r.maybe("pairing")) {
    const std::optional<pairing_mode> mode = pairing_mode_from_string(p->string());
    if (!mode) p->fail("\"in-process\" or \"process\"");
    res.pairing = *mode;
  }
  res.pairing_reason = r.string_or("pairing_reason", "");
  if (auto c = r.maybe("base_control")) {
    c->only_keys({"ratio", "limit", "steered"});
    res.base_control = base_control_check{c->number("ratio"), c->number("limit"), c->at("steered").boolean()};
  }
  if (auto t = r.maybe("timed_inputs")) {
    const std::optional<timed_inputs> inputs = timed_inputs_from_string(t->string());
    if (!inputs) t->fail("\"same\" or \"fresh\"");
    res.inputs = *inputs;
  }
  if (auto l2 = r.maybe("l2")) {
    const std::optional<l2_state> state = l2_state_from_string(l2->string());
    if (!state) l2->fail("\"flushed\"");
    res.l2 = *state;
  }
  res.measured_on = r.string_or("measured_on", "");
  if (auto params = r.maybe("params")) {
    for (const auto& [name, value] : params->object()) {
      res.params.emplace_back(std::string(name), params->at(std::string_view(name)).string());
    }
  }
  res.origin = r.string_or("origin", "");
  if (names == kernel_names::checked) {
    if (auto problem = kernel_name_problem(res.kernel, !res.origin.empty()); !problem.empty()) {
      r.at("kernel").fail(problem);
    }
  }
  if (auto w = r.maybe("work")) res.work = work_from(*w);
  if (auto b = r.maybe("bound")) res.bound = bound_from(*b);
  if (auto a = r.maybe("aggregates")) {
    a->only_keys({"count", "mean_ms", "median_ms", "stddev_ms", "min_ms", "max_ms"});
    aggregate_summary summary;
    auto count = a->at("count");
    summary.count = count.integer();
    if (summary.count < 1) count.fail("a positive number of summarized samples");
    auto time = [&](std::string_view key) -> std::optional<double> {
      auto member = a->maybe(key);
      if (!member) return std::nullopt;
      const double ms = member->number();
      if (!(ms >= 0)) member->fail("a non-negative time in milliseconds");
      return ms;
    };
    summary.mean_ms = time("mean_ms");
    summary.median_ms = time("median_ms");
    summary.stddev_ms = time("stddev_ms");
    summary.min_ms = time("min_ms");
    summary.max_ms = time("max_ms");
    if (!res.samples_ms.empty()) {
      throw error(errc::invalid, a->source() + ": " + a->path() +
                                     ": a result has samples_ms or aggregates, not both "
                                     "(aggregates stand in for samples a harness did not keep)");
    }
    res.aggregates = summary;
  }
  return res;
}

}  // namespace

run_document run_from_json(const bj::value& v, std::string_view source, kernel_names names) {
  json::reader r(v, std::string(source));
  r.only_keys({"schema", "project", "commit", "branch", "base_branch", "pull_request", "created_at", "environment",
               "results", "pairing", "shard"});
  auto schema = r.at("schema");
  if (schema.string() != run_schema_id) schema.fail("\"rnx.run/v1\"");
  run_document run;
  run.project = non_empty(r.at("project"));
  run.commit = r.string_or("commit", "");
  run.branch = r.string_or("branch", "");
  run.base_branch = r.string_or("base_branch", "");
  if (auto pr = r.maybe("pull_request")) {
    run.pull_request = pr->integer();
    if (*run.pull_request < 1) pr->fail("a pull request number of at least 1");
  }
  run.created_at = r.string_or("created_at", "");
  run.env = environment_from(r.at("environment"));
  if (auto p = r.maybe("pairing")) {
    p->only_keys({"id", "side", "partner_commit", "block", "looks"});
    pairing_info info;
    info.id = non_empty(p->at("id"));
    auto side = p->at("side");
    const std::optional<pair_side> which = pair_side_from_string(side.string());
    if (!which) side.fail("\"head\" or \"base\"");
    info.side = *which;
    info.partner_commit = p->string_or("partner_commit", "");
    if (auto b = p->maybe("block")) {
      info.block = b->integer();
      if (info.block < 1 || info.block > 1024) b->fail("a block size from 1 to 1024 samples a side");
    }
    if (auto l = p->maybe("looks")) {
      info.looks = l->integer();
      if (info.looks < 1 || info.looks > 64) l->fail("a number of looks from 1 to 64");
    }
    run.pairing = std::move(info);
  }
  if (auto sh = r.maybe("shard")) run.shard = shard_from_json(*sh);
  const std::int64_t block = run.pairing ? run.pairing->block : in_process_block;
  auto results = r.at("results");
  std::set<config_key> seen;
  for (std::size_t i = 0; i < results.array().size(); ++i) {
    auto item = results.at(i);
    run.results.push_back(result_from(item, names));
    const run_result& res = run.results.back();
    if (res.pairing == pairing_mode::in_process) {
      const bool whole = std::all_of(res.groups.begin(), res.groups.end(), [&](auto g) { return g % block == 0; }) &&
                         static_cast<std::int64_t>(res.samples_ms.size()) % block == 0;
      if (!whole) {
        throw error(errc::invalid, std::string(source) + ": " + item.path() +
                                       ".groups: in-process samples come in "
                                       "blocks of " +
                                       std::to_string(block) +
                                       " per process, and these do not (or mark "
                                       "the result \"pairing\": \"process\")");
      }
    }
    if (!seen.insert(run.results.back().key()).second) {
      throw error(errc::invalid, std::string(source) + ": " + item.path() + ": duplicate configuration " +
                                     run.results.back().key().label() + " (each configuration appears once)");
    }
  }
  if (run.shard) check_shard_results(run, source);
  return run;
}

run_document read_run_file(const std::string& path) { return run_from_json(json::parse_file(path), path); }

namespace {

bj::array first_sides_json(const std::vector<pair_side>& sides) {
  bj::array out;
  for (pair_side f : sides) out.push_back(bj::string(to_string(f)));
  return out;
}

}  // namespace

bj::value to_json(const run_document& run) {
  bj::object env;
  env["env_id"] = run.env.env_id;
  env["device"] = run.env.device;
  env["compute_capability"] = run.env.compute_capability;
  env["driver"] = run.env.driver;
  env["cuda"] = run.env.cuda;
  env["torch"] = run.env.torch;
  env["python"] = run.env.python;
  env["cpu"] = run.env.cpu;
  env["threads"] = run.env.threads;
  env["os"] = run.env.os;
  env["image"] = run.env.image;
  if (!run.env.harness.empty()) env["harness"] = run.env.harness;
  bj::object clocks;
  for (const auto& [name, value] : run.env.clocks) clocks[name] = value;
  env["clocks"] = std::move(clocks);
  if (!run.env.peaks.empty()) {
    bj::object peaks;
    for (const auto& [name, value] : run.env.peaks) peaks[name] = value;
    env["peaks"] = std::move(peaks);
  }
  if (!run.env.peak_measurements.empty()) {
    bj::object measured;
    for (const auto& [name, m] : run.env.peak_measurements) {
      measured[name] = bj::object{{"error", m.error}, {"measured_at", m.measured_at}, {"how", m.how}};
    }
    env["peak_measurements"] = std::move(measured);
  }
  if (!run.env.host.empty()) env["host"] = run.env.host;
  if (run.env.source) {
    bj::object source{{"from", to_string(run.env.source->from)}};
    if (!run.env.source->path.empty()) source["path"] = run.env.source->path;
    if (!run.env.source->imported_on.empty()) source["imported_on"] = run.env.source->imported_on;
    env["source"] = std::move(source);
  }

  bj::array results;
  for (const auto& res : run.results) {
    bj::object o;
    o["kernel"] = res.kernel;
    o["runtime"] = res.runtime;
    o["dtype"] = res.dtype;
    o["batch"] = res.batch;
    o["device"] = res.device;
    o["status"] = to_string(res.status);
    bj::array samples;
    for (double s : res.samples_ms) samples.push_back(s);
    o["samples_ms"] = std::move(samples);
    bj::array groups;
    for (auto g : res.groups) groups.push_back(g);
    o["groups"] = std::move(groups);
    if (!res.first_sides.empty()) o["first_sides"] = first_sides_json(res.first_sides);
    o["unstable"] = res.unstable;
    if (res.max_abs_err) o["max_abs_err"] = *res.max_abs_err;
    if (res.rel_err) o["rel_err"] = *res.rel_err;
    if (res.tol) o["tolerance"] = bj::object{{"rtol", res.tol->rtol}, {"atol", res.tol->atol}};
    o["message"] = res.message;
    if (res.pairing != pairing_mode::none) o["pairing"] = to_string(res.pairing);
    if (!res.pairing_reason.empty()) o["pairing_reason"] = res.pairing_reason;
    if (const auto& c = res.base_control) {
      o["base_control"] = bj::object{{"ratio", c->ratio}, {"limit", c->limit}, {"steered", c->steered}};
    }
    if (res.inputs != timed_inputs::same) o["timed_inputs"] = to_string(res.inputs);
    if (res.l2 != l2_state::unstated) o["l2"] = to_string(res.l2);
    if (!res.measured_on.empty()) o["measured_on"] = res.measured_on;
    if (res.work) {
      bj::object w{{"source", to_string(res.work->source)}};
      if (res.work->flops) w["flops"] = *res.work->flops;
      if (res.work->bytes) w["bytes"] = *res.work->bytes;
      if (res.work->elementwise) w["elementwise"] = *res.work->elementwise;
      o["work"] = std::move(w);
    }
    if (res.bound) {
      o["bound"] = bj::object{{"output_bytes", res.bound->output_bytes}, {"write_ms", res.bound->write_ms}};
    }
    if (!res.params.empty()) {
      bj::object params;
      for (const auto& [name, value] : res.params) params[name] = value;
      o["params"] = std::move(params);
    }
    if (!res.origin.empty()) o["origin"] = res.origin;
    if (res.aggregates) {
      bj::object a;
      a["count"] = res.aggregates->count;
      const std::pair<const char*, const std::optional<double>*> times[] = {{"mean_ms", &res.aggregates->mean_ms},
                                                                            {"median_ms", &res.aggregates->median_ms},
                                                                            {"stddev_ms", &res.aggregates->stddev_ms},
                                                                            {"min_ms", &res.aggregates->min_ms},
                                                                            {"max_ms", &res.aggregates->max_ms}};
      for (const auto& [name, value] : times) {
        if (*value) a[name] = **value;
      }
      o["aggregates"] = std::move(a);
    }
    results.push_back(std::move(o));
  }

  bj::object doc;
  doc["schema"] = run_schema_id;
  doc["project"] = run.project;
  // An unknown commit (rnx bench outside git) is left out: "" would read as a commit.
  if (!run.commit.empty()) doc["commit"] = run.commit;
  doc["branch"] = run.branch;
  doc["base_branch"] = run.base_branch;
  if (run.pull_request) doc["pull_request"] = *run.pull_request;
  doc["created_at"] = run.created_at;
  doc["environment"] = std::move(env);
  doc["results"] = std::move(results);
  if (run.pairing) {
    doc["pairing"] = bj::object{{"id", run.pairing->id},
                                {"side", to_string(run.pairing->side)},
                                {"partner_commit", run.pairing->partner_commit},
                                {"block", run.pairing->block},
                                {"looks", run.pairing->looks}};
  }
  if (run.shard) doc["shard"] = to_json(*run.shard);
  return doc;
}

void write_run_file(const run_document& run, const std::string& path) {
  write_file_atomically(path, json::serialize(to_json(run), true));
}

std::string utc_now_rfc3339() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

}  // namespace rnx
