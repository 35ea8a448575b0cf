// The list of rnx.toml keys: names, types, ranges and defaults, shared by the parsers and the docs test.
#include "rnx/common/manifest_keys.hpp"

#include "rnx/common/error.hpp"

#include <sstream>

namespace rnx {

namespace {

constexpr key_range between(double lo, double hi) { return {lo, hi, false}; }
constexpr key_range strictly_between(double lo, double hi) { return {lo, hi, true}; }

// A [bench] key, and the same key on a [[kernel]] where it overrides [bench] for that kernel.
#define RNX_BENCH_KEY(name, type, range, default_text) \
  {"bench", name, type, range, default_text}, { "kernel", name, type, range, "the [bench] value" }

// A [gate] key, and the same key in a [gate.runners.LABEL] table where it overrides [gate] on that runner.
#define RNX_GATE_KEY(name, type, range, default_text) \
  {"gate", name, type, range, default_text}, { "gate.runners.LABEL", name, type, range, "the [gate] value" }

const std::vector<manifest_key> all_keys = {
    {"", "project", "table", std::nullopt, "required"},
    {"", "defaults", "table", std::nullopt, "optional"},
    {"", "bench", "table", std::nullopt, "optional"},
    {"", "kernel", "array of tables", std::nullopt, "required (at least one)"},
    {"", "gate", "table", std::nullopt, "optional"},
    {"", "service", "table", std::nullopt, "optional"},
    {"", "build", "table", std::nullopt, "optional"},
    {"", "optimize", "table", std::nullopt, "optional"},

    {"project", "name", "string", std::nullopt, "required"},

    {"defaults", "runtimes", "array of strings", std::nullopt, "[\"eager\"]"},
    {"defaults", "dtypes", "array of strings", std::nullopt, "[\"float32\"]"},
    {"defaults", "batch", "integer or array of integers", between(1, 1 << 20), "[1]"},
    {"defaults", "device", "string", std::nullopt, "\"auto\""},
    {"defaults", "tolerance", "table", std::nullopt, "torch.testing's, per dtype"},

    {"tolerance.DTYPE", "rtol", "number", between(0, 1e6), "torch.testing's for DTYPE"},
    {"tolerance.DTYPE", "atol", "number", between(0, 1e6), "torch.testing's for DTYPE"},

    RNX_BENCH_KEY("processes", "integer", between(1, 64), "3"),
    RNX_BENCH_KEY("max_processes", "integer", between(1, 64), "6"),
    RNX_BENCH_KEY("min_samples", "integer", between(1, 100000), "8"),
    RNX_BENCH_KEY("samples", "integer", between(1, 100000), "1000"),
    RNX_BENCH_KEY("budget_ms", "number", between(0, 3.6e6), "1500"),
    RNX_BENCH_KEY("total_budget_s", "number", between(0, 86400), "20"),
    RNX_BENCH_KEY("warmup_ms", "number", between(0, 3.6e6), "300"),
    RNX_BENCH_KEY("min_sample_ms", "number", between(0, 1e4), "0.1"),
    RNX_BENCH_KEY("noise", "number", between(0, 1), "0.005"),
    RNX_BENCH_KEY("timeout_s", "number", between(0.1, 86400), "120"),
    RNX_BENCH_KEY("threads", "integer", between(0, 4096), "0"),
    RNX_BENCH_KEY("seed", "integer, 0 or more", std::nullopt, "0"),
    {"bench", "devices", "string", std::nullopt, "none (one device)"},
    {"bench", "pass_env", "array of strings", std::nullopt, "none (no credential reaches a kernel)"},

    {"kernel", "name", "string", std::nullopt, "required"},
    {"kernel", "path", "string", std::nullopt, "required"},
    {"kernel", "entry", "string", std::nullopt, "the kind's: run, ModelNew/Model, forward"},
    {"kernel", "inputs", "table of shape strings", std::nullopt,
     "none (required for .cpp, .cu, .pt and .py functions)"},
    {"kernel", "runtimes", "array of strings", std::nullopt, "the [defaults] value"},
    {"kernel", "dtypes", "array of strings", std::nullopt, "the [defaults] value"},
    {"kernel", "batch", "integer or array of integers", between(1, 1 << 20), "the [defaults] value"},
    {"kernel", "device", "string", std::nullopt, "the [defaults] value"},
    {"kernel", "tolerance", "table", std::nullopt, "the [defaults] value"},
    {"kernel", "flops", "string", std::nullopt, "counted from the eager reference"},
    {"kernel", "bytes", "string", std::nullopt, "counted from the eager reference"},

    RNX_GATE_KEY("rope", "number", strictly_between(0, 1), "0.02"),
    RNX_GATE_KEY("probability", "number", strictly_between(0.5, 1), "0.95"),
    RNX_GATE_KEY("min_samples", "integer", between(2, 1000000), "8"),
    RNX_GATE_KEY("resamples", "integer", between(100, 1000000), "2000"),
    RNX_GATE_KEY("statistic", "string", std::nullopt, "\"median\""),
    RNX_GATE_KEY("on_abstain", "string", std::nullopt, "\"warn\""),
    RNX_GATE_KEY("report_only", "boolean", std::nullopt, "false"),
    {"gate", "on_service_error", "string", std::nullopt, "\"warn\""},
    {"gate", "runners", "table of tables", std::nullopt, "none"},
    {"gate", "drift_budget", "number", strictly_between(0, 1), "none (no drift check)"},
    {"gate", "anchor", "string", std::nullopt, "\"accepted\""},
    {"gate", "drift_action", "string", std::nullopt, "\"warn\""},
    {"gate", "explain", "string", std::nullopt, "\"auto\""},
    {"gate", "explain_budget_s", "number", between(0, 86400), "120"},
    {"gate", "explain_ncu", "boolean", std::nullopt, "false"},
    {"gate", "explain_count_threshold", "number", between(0, 1), "0.01"},

    {"service", "url", "string", std::nullopt, "none (the embedded store)"},

    {"build", "cuda_arch", "string", std::nullopt, "the visible GPU's, else sm_90"},

    {"optimize", "rewriter", "string", std::nullopt, "\"command\""},
    {"optimize", "command", "string", std::nullopt, "none"},
    {"optimize", "model", "string", std::nullopt, "the provider's"},
    {"optimize", "base_url", "string", std::nullopt, "the provider's public API"},
    {"optimize", "api_key_env", "string", std::nullopt, "the provider's"},
    {"optimize", "budget", "integer", between(1, 100), "3"},
    {"optimize", "timeout_s", "number", between(0.01, 3600), "120"},
    {"optimize", "retries", "integer", between(0, 20), "4"},
    {"optimize", "backoff_s", "number", between(0, 600), "1"},
    {"optimize", "max_tokens", "integer", between(1, 1000000), "8192"},
    {"optimize", "temperature", "number", between(0, 2), "0.2"},
};

#undef RNX_BENCH_KEY
#undef RNX_GATE_KEY

std::string number_text(double v) {
  std::ostringstream os;
  os.precision(15);
  os << v;
  return os.str();
}

}  // namespace

const std::vector<manifest_key>& manifest_keys() { return all_keys; }

const manifest_key* find_manifest_key(std::string_view table, std::string_view name) {
  for (const auto& k : all_keys) {
    if (k.table == table && k.name == name) return &k;
  }
  return nullptr;
}

bool in_range(const key_range& range, double v) {
  return range.open ? v > range.lo && v < range.hi : v >= range.lo && v <= range.hi;
}

key_range manifest_key_range(std::string_view table, std::string_view name) {
  const manifest_key* k = find_manifest_key(table, name);
  if (!k || !k->range) {
    throw error(errc::internal, "manifest key " + std::string(table) + "." + std::string(name) + " has no range");
  }
  return *k->range;
}

std::set<std::string> manifest_key_names(std::string_view table) {
  std::set<std::string> out;
  for (const auto& k : all_keys) {
    if (k.table == table) out.emplace(k.name);
  }
  return out;
}

std::string manifest_key_path(const manifest_key& key) {
  return key.table.empty() ? std::string(key.name) : std::string(key.table) + "." + std::string(key.name);
}

std::string manifest_key_type_text(const manifest_key& key) {
  std::string out(key.type);
  if (!key.range) return out;
  if (key.range->open) return out + ", " + number_text(key.range->lo) + " < x < " + number_text(key.range->hi);
  return out + ", " + number_text(key.range->lo) + " to " + number_text(key.range->hi);
}

}  // namespace rnx
