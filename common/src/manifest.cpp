// Parsing and validating rnx.toml with toml++; every error names the file, line and key and says what to write.
#include "rnx/common/manifest.hpp"

#include "rnx/common/drift_settings.hpp"
#include "rnx/common/explain_settings.hpp"
#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/files.hpp"
#include "rnx/common/manifest_keys.hpp"
#include "rnx/common/run_document.hpp"

// Debian's toml++ 3.3 ships toml.h; newer releases and the carried copy ship toml.hpp.
#if __has_include(<toml++/toml.hpp>)
#include <toml++/toml.hpp>
#else
#include <toml++/toml.h>
#endif

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

namespace rnx {

namespace fs = std::filesystem;

std::vector<std::int64_t> input_spec::resolve(std::int64_t batch) const {
  std::vector<std::int64_t> out;
  out.reserve(dims.size());
  for (const auto& d : dims) out.push_back(d.is_batch ? batch : d.size);
  return out;
}

std::vector<shape_dim> parse_shape(std::string_view text, std::string_view where) {
  std::vector<shape_dim> dims;
  std::string_view rest = text;
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  if (trim(rest).empty()) return dims;  // a scalar
  while (true) {
    auto comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    if (item == "B") {
      dims.push_back({0, true});
    } else {
      bool digits = !item.empty() && std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || item.size() > 12 || std::stoll(std::string(item)) < 1) {
        throw error(errc::invalid, std::string(where) + ": bad dimension '" + std::string(item) + "' in shape \"" +
                                       std::string(text) +
                                       "\" (write sizes as positive integers and the batch as B, e.g. \"B,8,128,64\")");
      }
      dims.push_back({std::stoll(std::string(item)), false});
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return dims;
}

std::string_view to_string(kernel_kind k) {
  switch (k) {
    case kernel_kind::unknown: return "";
    case kernel_kind::python: return "python";
    case kernel_kind::torchscript: return "torchscript";
    case kernel_kind::cpp: return "cpp";
    case kernel_kind::cuda: return "cuda";
  }
  return "";
}

std::optional<kernel_kind> kernel_kind_from_string(std::string_view text) {
  return enum_from_name(text, {kernel_kind::python, kernel_kind::torchscript, kernel_kind::cpp, kernel_kind::cuda});
}

kernel_kind kernel_spec::kind() const {
  const std::string ext = resolved_path.extension().string();
  if (ext == ".py") return kernel_kind::python;
  if (ext == ".pt") return kernel_kind::torchscript;
  if (ext == ".cpp" || ext == ".cc") return kernel_kind::cpp;
  if (ext == ".cu") return kernel_kind::cuda;
  return kernel_kind::unknown;
}

const kernel_spec* manifest::find_kernel(std::string_view name) const {
  for (const auto& k : kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

tolerance default_tolerance(dtype_kind dtype) {
  // torch.testing.assert_close defaults (torch/testing/_comparison.py).
  switch (dtype) {
    case dtype_kind::float16: return {1e-3, 1e-5};
    case dtype_kind::bfloat16: return {1.6e-2, 1e-5};
    case dtype_kind::float64: return {1e-7, 1e-7};
    case dtype_kind::float32:
    case dtype_kind::none: return {1.3e-6, 1e-5};
  }
  return {1.3e-6, 1e-5};
}

tolerance default_tolerance(std::string_view dtype) {
  return default_tolerance(dtype_kind_from_string(dtype).value_or(dtype_kind::none));
}

std::string_view to_string(service_error_action a) { return a == service_error_action::fail ? "fail" : "warn"; }

std::optional<service_error_action> service_error_action_from_string(std::string_view text) {
  return enum_from_name(text, {service_error_action::warn, service_error_action::fail});
}

std::string_view to_string(device_kind d) {
  switch (d) {
    case device_kind::automatic: return "auto";
    case device_kind::cpu: return "cpu";
    case device_kind::cuda: return "cuda";
  }
  return "auto";
}

std::optional<device_kind> device_kind_from_string(std::string_view name) {
  for (auto d : {device_kind::automatic, device_kind::cpu, device_kind::cuda}) {
    if (to_string(d) == name) return d;
  }
  const std::string_view cuda_index = "cuda:";
  if (name.substr(0, cuda_index.size()) != cuda_index || name.size() == cuda_index.size()) return std::nullopt;
  const bool digits =
      std::all_of(name.begin() + cuda_index.size(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
  return digits ? std::optional<device_kind>(device_kind::cuda) : std::nullopt;
}

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// The accepted values of a numeric key, from the one list of keys (rnx/common/manifest_keys.hpp).
key_range range_of(std::string_view table, std::string_view name) { return manifest_key_range(table, name); }

// Walks the parsed document, remembering the key path so messages can say "kernel[2].batch".
class walker {
 public:
  explicit walker(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const toml::node* node, std::string_view key, std::string_view problem) const {
    std::string where = source_;
    if (node && node->source().begin.line > 0) where += ":" + std::to_string(node->source().begin.line);
    throw error(errc::invalid, where + ": key '" + std::string(key) + "': " + std::string(problem));
  }

  void only_keys(const toml::table& t, std::string_view table_name, const std::set<std::string>& allowed) const {
    for (const auto& [k, v] : t) {
      if (!allowed.count(std::string(k.str()))) {
        std::vector<std::string> names(allowed.begin(), allowed.end());
        std::string full =
            table_name.empty() ? std::string(k.str()) : std::string(table_name) + "." + std::string(k.str());
        fail(&v, full, "unknown key (allowed here: " + join(names) + "; check the spelling)");
      }
    }
  }

  // The top-level table [name] with its keys checked against the key reference; nullptr when the manifest has none.
  const toml::table* section(const toml::table& doc, std::string_view name) const {
    auto n = doc.get(name);
    if (!n) return nullptr;
    auto t = n->as_table();
    if (!t) fail(n, name, "expected a table [" + std::string(name) + "]");
    only_keys(*t, name, manifest_key_names(name));
    return t;
  }

  std::string string(const toml::node& n, std::string_view key) const {
    if (auto s = n.as_string()) return s->get();
    fail(&n, key, std::string("expected a string, got ") + type_name(n));
  }

  // A string of arithmetic over the shape symbols (a kernel's declared flops or bytes).
  shape_expression expression(const toml::node& n, const std::string& key) const {
    const std::string text = string(n, key);
    return shape_expression::parse(text, source_ + ":" + std::to_string(n.source().begin.line) + ": key '" + key + "'");
  }

  std::int64_t integer(const toml::node& n, std::string_view key, const key_range& r) const {
    return integer(n, key, static_cast<std::int64_t>(r.lo), static_cast<std::int64_t>(r.hi));
  }

  std::int64_t integer(const toml::node& n, std::string_view key, std::int64_t lo, std::int64_t hi) const {
    auto i = n.as_integer();
    if (!i) fail(&n, key, std::string("expected an integer, got ") + type_name(n));
    if (i->get() < lo || i->get() > hi) {
      fail(&n, key,
           "value " + std::to_string(i->get()) + " is out of range (write " + std::to_string(lo) + " to " +
               std::to_string(hi) + ")");
    }
    return i->get();
  }

  double number(const toml::node& n, std::string_view key, const key_range& r) const {
    if (!r.open) return number(n, key, r.lo, r.hi);
    double v = number(n, key, r.lo, r.hi);
    if (v <= r.lo || v >= r.hi) {
      std::ostringstream os;
      os << "value " << v << " is out of range (write a number above " << r.lo << " and below " << r.hi << ")";
      fail(&n, key, os.str());
    }
    return v;
  }

  double number(const toml::node& n, std::string_view key, double lo, double hi) const {
    double v = 0;
    if (auto f = n.as_floating_point()) {
      v = f->get();
    } else if (auto i = n.as_integer()) {
      v = static_cast<double>(i->get());
    } else {
      fail(&n, key, std::string("expected a number, got ") + type_name(n));
    }
    if (!(v >= lo && v <= hi)) {
      std::ostringstream os;
      os << "value " << v << " is out of range (write a number from " << lo << " to " << hi << ")";
      fail(&n, key, os.str());
    }
    return v;
  }

  bool boolean(const toml::node& n, std::string_view key) const {
    if (auto b = n.as_boolean()) return b->get();
    fail(&n, key, std::string("expected true or false, got ") + type_name(n));
  }

  std::vector<std::string> choices(const toml::node& n, std::string_view key,
                                   const std::vector<std::string>& allowed) const {
    auto arr = n.as_array();
    if (!arr)
      fail(&n, key,
           std::string("expected an array of strings such as [\"") + allowed.front() + "\"], got " + type_name(n));
    if (arr->empty()) fail(&n, key, "the list is empty (name at least one of: " + join(allowed) + ")");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      std::string item_key = std::string(key) + "[" + std::to_string(i) + "]";
      std::string s = string(*arr->get(i), item_key);
      if (std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
        fail(arr->get(i), item_key, "unknown value \"" + s + "\" (use one of: " + join(allowed) + ")");
      }
      if (std::find(out.begin(), out.end(), s) != out.end())
        fail(arr->get(i), item_key, "\"" + s + "\" is listed twice");
      out.push_back(s);
    }
    return out;
  }

  // An array of environment variable names (letters, digits, '_', not starting with a digit), each once.
  std::vector<std::string> variable_names(const toml::node& n, std::string_view key) const {
    auto arr = n.as_array();
    if (!arr)
      fail(&n, key, std::string("expected an array of variable names such as [\"HF_TOKEN\"], got ") + type_name(n));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      std::string item_key = std::string(key) + "[" + std::to_string(i) + "]";
      std::string s = string(*arr->get(i), item_key);
      const bool valid = !s.empty() && !std::isdigit(static_cast<unsigned char>(s.front())) &&
                         std::all_of(s.begin(), s.end(),
                                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
      if (!valid) fail(arr->get(i), item_key, "\"" + s + "\" is not a variable name (letters, digits and _)");
      if (std::find(out.begin(), out.end(), s) != out.end())
        fail(arr->get(i), item_key, "\"" + s + "\" is listed twice");
      out.push_back(s);
    }
    return out;
  }

  std::vector<std::int64_t> batches(const toml::node& n, std::string_view key) const {
    std::vector<std::int64_t> out;
    if (n.is_integer()) {
      out.push_back(integer(n, key, range_of("defaults", "batch")));
      return out;
    }
    auto arr = n.as_array();
    if (!arr || arr->empty()) fail(&n, key, "expected a non-empty array of batch sizes such as [1, 8]");
    for (std::size_t i = 0; i < arr->size(); ++i) {
      std::int64_t b =
          integer(*arr->get(i), std::string(key) + "[" + std::to_string(i) + "]", range_of("defaults", "batch"));
      if (std::find(out.begin(), out.end(), b) != out.end()) {
        fail(arr->get(i), std::string(key) + "[" + std::to_string(i) + "]",
             "batch " + std::to_string(b) + " is listed twice");
      }
      out.push_back(b);
    }
    return out;
  }

  std::string device(const toml::node& n, std::string_view key) const {
    std::string d = string(n, key);
    if (!device_kind_from_string(d)) fail(&n, key, "unknown device \"" + d + "\" (use auto, cpu, cuda or cuda:N)");
    return d;
  }

  void bench(const toml::table& t, std::string_view prefix, bench_settings& b) const {
    auto key = [&](std::string_view k) { return std::string(prefix) + std::string(k); };
    auto whole = [&](std::string_view k, int& field) {
      if (auto n = t.get(k)) {
        field = static_cast<int>(integer(*n, key(k), range_of("bench", k)));
        b.given.emplace(k);
      }
    };
    auto real = [&](std::string_view k, double& field) {
      if (auto n = t.get(k)) {
        field = number(*n, key(k), range_of("bench", k));
        b.given.emplace(k);
      }
    };
    whole("processes", b.processes);
    whole("max_processes", b.max_processes);
    whole("min_samples", b.min_samples);
    whole("samples", b.max_samples);
    real("budget_ms", b.budget_ms);
    real("total_budget_s", b.total_budget_s);
    real("warmup_ms", b.warmup_ms);
    real("min_sample_ms", b.min_sample_ms);
    real("noise", b.noise);
    real("timeout_s", b.timeout_s);
    whole("threads", b.threads);
    if (auto n = t.get("seed")) b.seed = static_cast<std::uint64_t>(integer(*n, key("seed"), 0, INT64_MAX));
    if (b.max_samples < b.min_samples) {
      fail(t.get("samples") ? t.get("samples") : t.get("min_samples"), key("samples"),
           "samples (" + std::to_string(b.max_samples) + ") is below min_samples (" + std::to_string(b.min_samples) +
               "); raise samples or lower min_samples");
    }
  }

  void tolerances(const toml::node& n, std::string_view key, const std::vector<std::string>& dtypes,
                  std::map<std::string, tolerance>& out) const {
    auto t = n.as_table();
    if (!t) fail(&n, key, "expected a table such as { float16 = { rtol = 1e-2, atol = 1e-3 } }");
    for (const auto& [dtype, value] : *t) {
      std::string dkey = std::string(key) + "." + std::string(dtype.str());
      const auto named = dtype_kind_from_string(dtype.str());
      if (!named || *named == dtype_kind::none) {
        fail(&value, dkey, "unknown dtype (use one of: " + join(measured_dtype_names()) + ")");
      }
      auto inner = value.as_table();
      if (!inner) fail(&value, dkey, "expected { rtol = ..., atol = ... }");
      only_keys(*inner, dkey, manifest_key_names("tolerance.DTYPE"));
      tolerance tol = default_tolerance(dtype.str());
      if (auto r = inner->get("rtol")) tol.rtol = number(*r, dkey + ".rtol", range_of("tolerance.DTYPE", "rtol"));
      if (auto a = inner->get("atol")) tol.atol = number(*a, dkey + ".atol", range_of("tolerance.DTYPE", "atol"));
      out[std::string(dtype.str())] = tol;
    }
    (void)dtypes;
  }

  const std::string& source() const { return source_; }

 private:
  static std::string type_name(const toml::node& n) {
    switch (n.type()) {
      case toml::node_type::string: return "a string";
      case toml::node_type::integer: return "an integer";
      case toml::node_type::floating_point: return "a number";
      case toml::node_type::boolean: return "a boolean";
      case toml::node_type::array: return "an array";
      case toml::node_type::table: return "a table";
      default: return "a date/time";
    }
  }

  std::string source_;
};

gate_policy parse_gate(const walker& w, const toml::table& t, std::string_view prefix, gate_policy p) {
  auto key = [&](std::string_view k) { return std::string(prefix) + std::string(k); };
  if (auto n = t.get("rope")) p.rope = w.number(*n, key("rope"), range_of("gate", "rope"));
  if (auto n = t.get("probability")) p.probability = w.number(*n, key("probability"), range_of("gate", "probability"));
  if (auto n = t.get("min_samples")) {
    p.min_samples = static_cast<int>(w.integer(*n, key("min_samples"), range_of("gate", "min_samples")));
  }
  if (auto n = t.get("resamples")) {
    p.resamples = static_cast<int>(w.integer(*n, key("resamples"), range_of("gate", "resamples")));
  }
  if (auto n = t.get("statistic")) {
    auto s = statistic_from_string(w.string(*n, key("statistic")));
    if (!s) w.fail(n, key("statistic"), "unknown statistic (use median or mean)");
    p.stat = *s;
  }
  if (auto n = t.get("on_abstain")) {
    std::string s = w.string(*n, key("on_abstain"));
    auto answer = overall_from_string(s);
    if (!answer) w.fail(n, key("on_abstain"), "unknown value \"" + s + "\" (use warn, pass or block)");
    p.on_abstain = *answer;
  }
  if (auto n = t.get("report_only")) p.report_only = w.boolean(*n, key("report_only"));
  return p;
}

// What [defaults] sets for every kernel (each kernel may override it).
struct kernel_defaults {
  std::vector<std::string> runtimes = {std::string(to_string(runtime_kind::eager))};
  std::vector<std::string> dtypes = {std::string(to_string(dtype_kind::float32))};
  std::vector<std::int64_t> batch = {1};
  std::string device = std::string(to_string(device_kind::automatic));
  std::map<std::string, tolerance> tolerances;
};

toml::table parse_toml(std::string_view text, const std::string& source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    throw error(errc::bad_input, source + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
                                     ": malformed TOML: " + std::string(e.description()));
  }
}

void read_project(const walker& w, const toml::table& doc, manifest& m) {
  auto project = doc["project"].as_table();
  if (!project) {
    throw error(errc::invalid, m.source + ": missing table [project] (add:  [project]  name = \"my-project\")");
  }
  w.only_keys(*project, "project", manifest_key_names("project"));
  auto name = project->get("name");
  if (!name) w.fail(doc.get("project"), "project.name", "missing (add  name = \"my-project\"  under [project])");
  m.project = w.string(*name, "project.name");
  if (m.project.empty()) w.fail(name, "project.name", "must not be empty");
}

kernel_defaults read_defaults(const walker& w, const toml::table& doc) {
  kernel_defaults k;
  auto d = w.section(doc, "defaults");
  if (!d) return k;
  if (auto v = d->get("runtimes")) k.runtimes = w.choices(*v, "defaults.runtimes", bench_runtime_names());
  if (auto v = d->get("dtypes")) k.dtypes = w.choices(*v, "defaults.dtypes", measured_dtype_names());
  if (auto v = d->get("batch")) k.batch = w.batches(*v, "defaults.batch");
  if (auto v = d->get("device")) k.device = w.device(*v, "defaults.device");
  if (auto v = d->get("tolerance")) w.tolerances(*v, "defaults.tolerance", k.dtypes, k.tolerances);
  return k;
}

// [bench], [gate] (with its [gate.runners.LABEL] tables), [service] and [build].
void read_settings(const walker& w, const toml::table& doc, manifest& m) {
  if (auto b = w.section(doc, "bench")) {
    w.bench(*b, "bench.", m.bench);
    if (auto v = b->get("devices")) m.devices = w.string(*v, "bench.devices");
    if (auto v = b->get("pass_env")) m.pass_env = w.variable_names(*v, "bench.pass_env");
  }
  if (auto g = w.section(doc, "gate")) {
    m.gate = parse_gate(w, *g, "gate.", m.gate);
    if (auto n = g->get("on_service_error")) {
      const std::string text = w.string(*n, "gate.on_service_error");
      auto action = service_error_action_from_string(text);
      if (!action) w.fail(n, "gate.on_service_error", "unknown value \"" + text + "\" (use warn or fail)");
      m.on_service_error = *action;
    }
    if (auto r = g->get("runners")) {
      auto runners = r->as_table();
      if (!runners) w.fail(r, "gate.runners", "expected a table of runner labels, e.g. [gate.runners.gpu] rope = 0.03");
      for (const auto& [label, value] : *runners) {
        std::string prefix = "gate.runners." + std::string(label.str());
        auto t = value.as_table();
        if (!t) w.fail(&value, prefix, "expected a table of [gate] keys");
        w.only_keys(*t, prefix, manifest_key_names("gate.runners.LABEL"));
        m.gate_runners[std::string(label.str())] = parse_gate(w, *t, prefix + ".", m.gate);
      }
    }
  }
  if (auto s = w.section(doc, "service")) {
    if (auto u = s->get("url")) {
      m.service_url = w.string(*u, "service.url");
      if (m.service_url.rfind("http://", 0) != 0 && m.service_url.rfind("https://", 0) != 0) {
        w.fail(u, "service.url", "\"" + m.service_url + "\" is not an http:// or https:// URL");
      }
    }
  }
  if (auto b = w.section(doc, "build")) {
    if (auto a = b->get("cuda_arch")) {
      m.cuda_arch = w.string(*a, "build.cuda_arch");
      bool ok = m.cuda_arch.rfind("sm_", 0) == 0 && m.cuda_arch.size() > 3;
      if (!ok) w.fail(a, "build.cuda_arch", "\"" + m.cuda_arch + "\" is not an architecture like \"sm_90\"");
    }
  }
}

// A kernel's inputs table, in the order written (toml++ sorts tables by key).
std::vector<input_spec> read_inputs(const walker& w, const toml::node& in, const std::string& key) {
  auto it = in.as_table();
  if (!it) w.fail(&in, key, "expected a table such as { x = \"B,1024\" }");
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (const auto& [name_key, shape] : *it) entries.emplace_back(&name_key, &shape);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const auto& pa = a.first->source().begin;
    const auto& pb = b.first->source().begin;
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  });
  std::vector<input_spec> inputs;
  for (const auto& [name_key, shape] : entries) {
    std::string ikey = key + "." + std::string(name_key->str());
    input_spec spec;
    spec.name = std::string(name_key->str());
    spec.text = w.string(*shape, ikey);
    std::string where = w.source() + ":" + std::to_string(shape->source().begin.line) + ": key '" + ikey + "'";
    spec.dims = parse_shape(spec.text, where);
    inputs.push_back(std::move(spec));
  }
  return inputs;
}

// The checks that need the whole kernel: declared inputs where its kind needs them, B in a shape when several
// batch sizes are configured.
void check_kernel_inputs(const walker& w, const kernel_spec& k, const toml::table& t, const toml::node* where,
                         const std::string& key_inputs) {
  if (k.kind() == kernel_kind::python || k.kind() == kernel_kind::torchscript) {
    // KernelBench files and TorchScript files with example inputs declare none; they are checked at load time.
  } else if (k.inputs.empty()) {
    w.fail(
        where, key_inputs,
        "a " + std::string(to_string(k.kind())) + " kernel needs an inputs table such as inputs = { x = \"B,1024\" }");
  }
  bool uses_batch = k.inputs.empty();
  for (const auto& in : k.inputs) {
    for (const auto& d : in.dims) uses_batch = uses_batch || d.is_batch;
  }
  if (!uses_batch && k.batch.size() > 1) {
    w.fail(t.get("inputs"), key_inputs,
           "no input shape uses B, yet " + std::to_string(k.batch.size()) +
               " batch sizes are configured (use B in a shape, or set batch = [1] for this kernel)");
  }
}

// The i-th [[kernel]] table, over the defaults.
kernel_spec read_kernel(const walker& w, const toml::array& kernels, std::size_t i, const kernel_defaults& defaults,
                        const manifest& m) {
  const auto& t = *kernels.get(i)->as_table();
  std::string prefix = "kernel[" + std::to_string(i) + "]";
  auto key = [&](std::string_view k) { return prefix + "." + std::string(k); };
  w.only_keys(t, prefix, manifest_key_names("kernel"));
  kernel_spec k;
  k.line = t.source().begin.line;
  auto nm = t.get("name");
  if (!nm) w.fail(kernels.get(i), key("name"), "missing (every [[kernel]] needs name = \"...\")");
  k.name = w.string(*nm, key("name"));
  if (auto problem = kernel_name_problem(k.name); !problem.empty()) {
    w.fail(nm, key("name"), "\"" + k.name + "\" must be " + problem);
  }
  if (m.find_kernel(k.name))
    w.fail(nm, key("name"), "kernel \"" + k.name + "\" is defined twice; names must be unique");
  prefix = "kernel." + k.name;
  auto p = t.get("path");
  if (!p) w.fail(kernels.get(i), key("path"), "missing (write path = \"kernels/NAME.py\", relative to rnx.toml)");
  k.path = w.string(*p, key("path"));
  k.resolved_path = (m.root / k.path).lexically_normal();
  if (k.kind() == kernel_kind::unknown) {
    w.fail(p, key("path"), "\"" + k.path + "\" has an unsupported extension (use .py, .pt, .cpp or .cu)");
  }
  if (auto e = t.get("entry")) k.entry = w.string(*e, key("entry"));
  if (auto in = t.get("inputs")) k.inputs = read_inputs(w, *in, key("inputs"));
  k.runtimes = defaults.runtimes;
  k.dtypes = defaults.dtypes;
  k.batch = defaults.batch;
  k.device = defaults.device;
  k.tolerances = defaults.tolerances;
  k.bench = m.bench;
  if (auto v = t.get("runtimes")) k.runtimes = w.choices(*v, key("runtimes"), bench_runtime_names());
  if (auto v = t.get("dtypes")) k.dtypes = w.choices(*v, key("dtypes"), measured_dtype_names());
  if (auto v = t.get("batch")) k.batch = w.batches(*v, key("batch"));
  if (auto v = t.get("device")) k.device = w.device(*v, key("device"));
  if (auto v = t.get("tolerance")) w.tolerances(*v, key("tolerance"), k.dtypes, k.tolerances);
  if (auto v = t.get("flops")) k.flops = w.expression(*v, prefix + ".flops");
  if (auto v = t.get("bytes")) k.bytes = w.expression(*v, prefix + ".bytes");
  w.bench(t, prefix + ".", k.bench);
  check_kernel_inputs(w, k, t, kernels.get(i), key("inputs"));
  return k;
}

}  // namespace

manifest parse_manifest(std::string_view text, const std::string& source, const fs::path& root) {
  toml::table doc = parse_toml(text, source);
  walker w(source);
  // [optimize] belongs to `rnx optimize` (optimize/src/config.cpp); it is read there, not here.
  w.only_keys(doc, "", manifest_key_names(""));
  manifest m;
  m.source = source;
  m.root = fs::absolute(root).lexically_normal();
  read_project(w, doc, m);
  const kernel_defaults defaults = read_defaults(w, doc);
  read_settings(w, doc, m);
  (void)parse_drift_settings(text, source);    // drift_budget, anchor, drift_action: checked here, read by the gate
  (void)parse_explain_settings(text, source);  // explain, explain_budget_s, ...: checked here, read by the gate

  auto kernels_node = doc.get("kernel");
  if (!kernels_node) {
    throw error(errc::invalid, source + ": no kernels (add a [[kernel]] table with name, path and inputs)");
  }
  auto kernels = kernels_node->as_array();
  if (!kernels || !kernels->is_array_of_tables()) {
    w.fail(kernels_node, "kernel", "expected [[kernel]] tables (write [[kernel]] on its own line before each kernel)");
  }
  for (std::size_t i = 0; i < kernels->size(); ++i) m.kernels.push_back(read_kernel(w, *kernels, i, defaults, m));
  return m;
}

manifest load_manifest(const fs::path& path) {
  auto text = read_whole_file(path);
  if (!text) {
    throw error(errc::not_found,
                path.string() + ": cannot read the manifest (is the path right? pass --config PATH/rnx.toml)");
  }
  fs::path root = path.has_parent_path() ? path.parent_path() : fs::path(".");
  manifest m = parse_manifest(*text, path.string(), root);
  for (const auto& k : m.kernels) {
    if (!fs::exists(k.resolved_path)) {
      throw error(errc::not_found, path.string() + ":" + std::to_string(k.line) + ": kernel \"" + k.name +
                                       "\": file \"" + k.path + "\" does not exist (looked for " +
                                       k.resolved_path.string() + "; paths are relative to the manifest's folder)");
    }
  }
  return m;
}

bench_settings settings_for(const bench_settings& b, bool cuda) {
  bench_settings out = b;
  if (!cuda) return out;
  const auto put = [&](const char* key, double& field, double value) {
    if (!b.given.count(key)) field = value;
  };
  put("budget_ms", out.budget_ms, cuda_bench_defaults::budget_ms);
  put("total_budget_s", out.total_budget_s, cuda_bench_defaults::total_budget_s);
  put("warmup_ms", out.warmup_ms, cuda_bench_defaults::warmup_ms);
  return out;
}

}  // namespace rnx
