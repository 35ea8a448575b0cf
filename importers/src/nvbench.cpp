// nvbench's JSON (format 1.x, from --json or --jsonbin): with --jsonbin each state's cold GPU sample times are in a
// binary sidecar file (little-endian float32 seconds) that the state's "nv/json/bin:nv/cold/sample_times" summary
// names; with --json only the summaries (mean, relative stdev, sample count) exist.
#include "import_detail.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

namespace rnx::importers::detail {

namespace {

namespace bj = boost::json;
namespace fs = std::filesystem;

const char* const jsonbin_hint =
    "run the benchmark with --jsonbin FILE instead of --json FILE so nvbench writes every sample's time, and keep "
    "its FILE-bin folder beside it";

// One value of a summary's "data" list ({"name", "type", "value"}); values are strings in format 1.x.
std::optional<json::reader> summary_value(const json::reader& summary, std::string_view name) {
  auto data = summary.maybe("data");
  if (!data) return std::nullopt;
  for (std::size_t i = 0; i < data->array().size(); ++i) {
    auto item = data->at(i);
    if (item.string("name") == name) return item.at("value");
  }
  return std::nullopt;
}

double number_of(const json::reader& value) {
  if (!value.value().is_string()) return value.number();
  const std::string text = value.string();
  try {
    std::size_t used = 0;
    const double d = std::stod(text, &used);
    if (used == text.size() && std::isfinite(d)) return d;
  } catch (const std::exception&) {
  }
  value.fail("a number (as nvbench writes it, in a string)");
}

// The sidecar file of a sample-times summary: relative to the JSON's folder (nvbench's documented rule), else in
// FILE-bin/ beside the JSON, where nvbench writes it (older versions named it relative to their working directory).
// An absolute name that no longer exists (the output was copied from the machine that ran it) is looked for there too.
fs::path sidecar_path(const std::string& json_file, const std::string& name) {
  const fs::path given(name);
  const fs::path folder = fs::path(json_file).parent_path();
  const fs::path named = given.is_absolute() ? given : folder / given;
  if (fs::exists(named)) return named;
  const fs::path beside = fs::path(json_file + "-bin") / given.filename();
  if (fs::exists(beside)) return beside;
  return named;
}

std::vector<double> read_sample_times(const std::string& file, const json::reader& summary) {
  auto filename = summary_value(summary, "filename");
  auto size = summary_value(summary, "size");
  if (!filename || !size) {
    fail(file, summary.path(), "the sample-time summary names no file (nvbench could not write it; see its log)");
  }
  const double count_value = number_of(*size);
  if (!(count_value >= 1) || std::floor(count_value) != count_value) size->fail("a positive sample count");
  const auto count = static_cast<std::size_t>(count_value);
  const fs::path path = sidecar_path(file, filename->string());
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw error(errc::not_found, file + ": " + filename->path() + ": sample-time file " + path.string() +
                                     " not found (copy the JSON's -bin folder along with it)");
  }
  std::vector<char> bytes(count * 4);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (static_cast<std::size_t>(in.gcount()) != bytes.size() || in.peek() != std::char_traits<char>::eof()) {
    fail(file, size->path(),
         "sample-time file " + path.string() + " does not hold " + std::to_string(count) + " float32 values (" +
             std::to_string(count * 4) + " bytes): truncated or from another run");
  }
  std::vector<double> ms;
  ms.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    unsigned char b[4];
    std::memcpy(b, bytes.data() + 4 * i, 4);
    // Little-endian whatever this machine is.
    const std::uint32_t word =
        std::uint32_t(b[0]) | std::uint32_t(b[1]) << 8 | std::uint32_t(b[2]) << 16 | std::uint32_t(b[3]) << 24;
    const double seconds = std::bit_cast<float>(word);
    if (!std::isfinite(seconds) || seconds < 0) {
      fail(file, filename->path(),
           "sample " + std::to_string(i) + " of " + path.string() + " is not a non-negative time");
    }
    ms.push_back(seconds * 1e3);
  }
  return ms;
}

// nvbench versions its JSON from format 1.0 on ($.meta.version.json); earlier output (summaries keyed by name, no
// tags) and any later major version are laid out differently, so they are refused before anything else is read.
void check_format_version(const json::reader& root) {
  const std::string advice =
      ": rnx reads nvbench's JSON format 1.x only; run the benchmark again with an nvbench "
      "that writes format 1.x (--jsonbin FILE)";
  const bj::object& top = root.object();
  const bj::value* meta = top.if_contains("meta");
  const bj::value* version = meta && meta->is_object() ? meta->get_object().if_contains("version") : nullptr;
  const bj::value* json = version && version->is_object() ? version->get_object().if_contains("json") : nullptr;
  if (!json || json->is_null()) {
    fail(root.source(), "$.meta.version.json",
         "no JSON format version: nvbench has written one since format 1.0, so this file is older (a format other "
         "than 1.x)" +
             advice);
  }
  auto format_version = root.at("meta").at("version").at("json");
  const std::int64_t major = format_version.integer("major");
  if (major != 1) {
    const std::string text = format_version.string_or("string", std::to_string(major) + ".x");
    fail(root.source(), format_version.path(), "JSON format " + text + ", a format other than 1.x" + advice);
  }
}

// A state written by --json: its mean, relative spread and sample count are all there is.
void keep_summaries(const json::reader& mean, const std::optional<json::reader>& noise,
                    const std::optional<json::reader>& count, measured_case& c) {
  aggregate_summary a;
  auto mean_value = summary_value(mean, "value");
  if (!mean_value) mean.at("data").fail("a \"value\"");
  a.mean_ms = number_of(*mean_value) * 1e3;
  if (!(*a.mean_ms >= 0)) mean_value->fail("a non-negative time");
  if (noise) {
    if (auto v = summary_value(*noise, "value")) {
      const double relative = number_of(*v);
      if (std::isfinite(relative) && relative >= 0) a.stddev_ms = relative * *a.mean_ms;
    }
  }
  a.count = 1;
  if (count) {
    if (auto v = summary_value(*count, "value")) a.count = std::max<std::int64_t>(1, std::llround(number_of(*v)));
  }
  c.aggregates = a;
  c.aggregates_what = "only summaries (mean and relative spread of " + std::to_string(a.count) +
                      " cold samples, as --json writes them)";
  c.aggregates_hint = jsonbin_hint;
}

struct device_facts {
  std::string name;
  std::string compute_capability;
  std::optional<double> sm_mhz;
};

}  // namespace

parsed_file parse_nvbench(const std::string& file, const bj::value& doc) {
  require_harness_keys(file, doc, "nvbench JSON", "devices");
  json::reader root(doc, file);
  parsed_file out;
  out.file = file;
  harness_context& ctx = out.context;
  ctx.path = "$.devices";
  ctx.harness = "nvbench";
  check_format_version(root);
  if (auto nvb = root.at("meta").at("version").maybe("nvbench")) {
    if (auto s = nvb->maybe("string")) ctx.harness += " " + s->string();
  }

  std::map<std::int64_t, device_facts> devices;
  auto device_list = root.at("devices");
  for (std::size_t i = 0; i < device_list.array().size(); ++i) {
    auto d = device_list.at(i);
    device_facts facts;
    facts.name = d.string("name");
    if (auto sm = d.maybe("sm_version")) {
      const std::int64_t v = sm->integer();
      facts.compute_capability = std::to_string(v / 100) + "." + std::to_string((v % 100) / 10);
    }
    // nvbench reports the default SM clock in Hz (cudaDevAttrClockRate * 1000).
    if (auto clock = d.maybe("sm_default_clock_rate")) facts.sm_mhz = clock->number() / 1e6;
    devices[d.integer("id")] = facts;
  }

  std::optional<std::int64_t> first_device;
  auto benchmarks = root.at("benchmarks");
  for (std::size_t b = 0; b < benchmarks.array().size(); ++b) {
    auto bench = benchmarks.at(b);
    const std::string name = bench.string("name");
    auto states = bench.at("states");
    for (std::size_t s = 0; s < states.array().size(); ++s) {
      auto state = states.at(s);
      measured_case c;
      c.path = state.path();
      c.name = name;
      auto device = state.at("device");
      const std::int64_t id = device.integer();
      auto known = devices.find(id);
      if (known == devices.end()) device.fail("the id of a device listed in $.devices");
      if (!first_device) {
        first_device = id;
      } else if (devices[*first_device].name != known->second.name) {
        fail(file, device.path(),
             "states on " + devices[*first_device].name + " (device " + std::to_string(*first_device) + ") and " +
                 known->second.name + " (device " + std::to_string(id) +
                 "): one environment a run; run the "
                 "benchmark once per GPU model with nvbench's own device option (the benchmark's -d ID / --devices "
                 "ID) and import each file separately");
      }
      c.device = "cuda:" + std::to_string(id);
      if (auto axes = state.maybe("axis_values")) {
        for (std::size_t a = 0; a < axes->array().size(); ++a) {
          auto axis = axes->at(a);
          c.params.emplace_back(axis.string("name"), param_text(axis.at("value").value()));
        }
      }
      c.origin = name + (state.has("name") ? " [" + state.string("name") + "]" : "");
      if (state.has("is_skipped") && state.at("is_skipped").boolean()) {
        c.status = result_status::skipped;
        c.message = state.string_or("skip_reason", "");
        if (c.message.empty()) c.message = "nvbench skipped this state";
        out.cases.push_back(std::move(c));
        continue;
      }
      std::optional<json::reader> samples, mean, noise, count;
      auto summaries = state.at("summaries");
      for (std::size_t k = 0; k < summaries.array().size(); ++k) {
        auto summary = summaries.at(k);
        const std::string tag = summary.string("tag");
        if (tag == "nv/json/bin:nv/cold/sample_times") samples = summary;
        if (tag == "nv/cold/time/gpu/mean") {
          if (summary.string_or("hint", "duration") != "duration") {
            summary.at("hint").fail("\"duration\" (seconds): mixed units in this file");
          }
          mean = summary;
        }
        if (tag == "nv/cold/time/gpu/stdev/relative") noise = summary;
        if (tag == "nv/cold/sample_size") count = summary;
      }
      if (samples) {
        c.samples_ms = read_sample_times(file, *samples);
      } else {
        if (!mean) {
          fail(file, summaries.path(),
               "no cold GPU time (nv/cold/time/gpu/mean) in this state: rnx imports nvbench's "
               "cold measurements");
        }
        keep_summaries(*mean, noise, count, c);
      }
      out.cases.push_back(std::move(c));
    }
  }
  if (first_device) {
    const device_facts& d = devices[*first_device];
    ctx.device = d.name;
    ctx.names_machine = true;  // the GPU that ran it; nvbench records nothing of the host
    ctx.compute_capability = d.compute_capability;
    if (d.sm_mhz) ctx.clocks["sm_default_mhz"] = *d.sm_mhz;
  }
  return out;
}

}  // namespace rnx::importers::detail
