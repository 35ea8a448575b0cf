// The machine's peaks as kept per environment, with how each was measured and what beat it since.
#include "rnx/runner/peak_cache.hpp"

#include "rnx/common/json.hpp"

#include <boost/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace rnx::runner {

namespace fs = std::filesystem;
namespace bj = boost::json;

namespace {

constexpr std::string_view peaks_format = "rnx.peaks/v2";

std::optional<kept_peak> peak_from(const bj::value& v) {
  if (!v.is_object()) return std::nullopt;
  const auto& o = v.as_object();
  auto number = [&](std::string_view key) -> std::optional<double> {
    const auto* x = o.if_contains(key);
    return x && x->is_number() ? std::optional<double>(x->to_number<double>()) : std::nullopt;
  };
  auto text = [&](std::string_view key) {
    const auto* x = o.if_contains(key);
    return x && x->is_string() ? std::string(x->as_string()) : std::string();
  };
  const auto value = number("value");
  const auto error = number("error");
  if (!value || !(*value > 0) || !error || !(*error >= 0 && *error < 1)) return std::nullopt;
  kept_peak p;
  p.value = *value;
  p.measured = {*error, text("measured_at"), text("how")};
  p.others_cores = number("others_cores").value_or(0);
  p.beaten_by = text("beaten_by");
  return p;
}

}  // namespace

fs::path peak_file(const fs::path& cache_dir, const std::string& env_id) {
  return cache_dir / "peaks" / (env_id + ".json");
}

std::optional<peak_set> read_peaks(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  try {
    const bj::value v = json::parse_file(file);
    const auto* format = v.is_object() ? v.as_object().if_contains("format") : nullptr;
    const auto* peaks = v.is_object() ? v.as_object().if_contains("peaks") : nullptr;
    if (!format || !format->is_string() || format->as_string() != peaks_format || !peaks || !peaks->is_object()) {
      return std::nullopt;
    }
    peak_set out;
    for (const auto& [name, value] : peaks->as_object()) {
      if (auto p = peak_from(value)) out[std::string(name)] = *p;
    }
    if (out.empty()) return std::nullopt;
    return out;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged cache is measured again and rewritten
  }
}

void write_peaks(const fs::path& file, const peak_set& peaks) {
  bj::object all;
  for (const auto& [name, p] : peaks) {
    bj::object o{{"value", p.value},
                 {"error", p.measured.error},
                 {"measured_at", p.measured.measured_at},
                 {"how", p.measured.how},
                 {"others_cores", p.others_cores}};
    if (!p.beaten_by.empty()) o["beaten_by"] = p.beaten_by;
    all[name] = std::move(o);
  }
  const bj::object doc{{"format", peaks_format}, {"peaks", std::move(all)}};
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  const fs::path part = file.string() + "." + std::to_string(::getpid()) + ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out << json::serialize(doc, true) << "\n";
    if (!out) return;
  }
  fs::rename(part, file, ec);
  if (ec) fs::remove(part, ec);
}

bool needs_measuring(const kept_peak& p, double others_now) {
  if (!p.beaten_by.empty()) return true;
  if (!(p.others_cores > busy_cores)) return false;
  return others_now <= busy_cores || others_now + quieter_by <= p.others_cores;
}

peak_set keep_higher(const peak_set& kept, const peak_set& fresh) {
  peak_set out = kept;
  for (const auto& [name, f] : fresh) {
    auto it = out.find(name);
    if (it == out.end() || f.value > it->second.value) {
      out[name] = f;
      out[name].beaten_by.clear();
      continue;
    }
    it->second.beaten_by.clear();
    it->second.others_cores = std::min(it->second.others_cores, f.others_cores);
  }
  return out;
}

void mark_beaten(const fs::path& cache_dir, const std::string& env_id, const std::string& peak, const std::string& by) {
  const fs::path file = peak_file(cache_dir, env_id);
  auto kept = read_peaks(file);
  if (!kept) return;
  auto it = kept->find(peak);
  if (it == kept->end()) return;
  it->second.beaten_by = by;
  write_peaks(file, *kept);
}

void take_kept_peaks(environment& env, const fs::path& cache_dir) {
  if (env.env_id.empty()) return;
  const auto kept = read_peaks(peak_file(cache_dir, env.env_id));
  if (!kept) return;
  for (const auto& [name, p] : *kept) {
    auto it = env.peaks.find(name);
    if (it != env.peaks.end() && it->second >= p.value) continue;
    if (it == env.peaks.end() && env.peaks.empty()) continue;  // a run that measured no peaks (contained) stays so
    env.peaks[name] = p.value;
    env.peak_measurements[name] = p.measured;
  }
}

}  // namespace rnx::runner
