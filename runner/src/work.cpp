// A configuration's work of one call: the manifest's declaration, the worker's count, and the rates they imply.
#include "work.hpp"

#include "rnx/common/error.hpp"

#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

namespace rnx::runner::detail {

namespace {

// One declared key at `batch` as a whole count.
std::int64_t declared_count(const shape_expression& e, std::string_view key, const kernel_spec& k, std::int64_t batch,
                            const std::string& manifest_source) {
  const double value = std::round(e.evaluate(batch));
  if (std::isfinite(value) && value >= 0 && value < 9.2e18) return static_cast<std::int64_t>(value);
  std::ostringstream os;
  os << manifest_source << ":" << k.line << ": key 'kernel." << k.name << "." << key << "': \"" << e.text() << "\" is "
     << value << " at B = " << batch << " (declare a non-negative count for every batch of the kernel)";
  throw error(errc::invalid, os.str());
}

}  // namespace

std::optional<work_info> declared_work(const kernel_spec& k, std::int64_t batch, const std::string& manifest_source) {
  if (!k.flops && !k.bytes) return std::nullopt;
  work_info w;
  w.source = work_source::declared;
  if (k.flops) w.flops = declared_count(*k.flops, "flops", k, batch, manifest_source);
  if (k.bytes) w.bytes = declared_count(*k.bytes, "bytes", k, batch, manifest_source);
  return w;
}

work_info with_counted(const std::optional<work_info>& declared, const work_info& counted) {
  if (!declared) return counted;
  work_info w = *declared;
  if (!w.flops) w.flops = counted.flops;
  if (!w.bytes) w.bytes = counted.bytes;
  if (!w.flops) w.elementwise = counted.elementwise;  // declared FLOPs count the arithmetic the author means
  return w;
}

std::string rate_text(const std::optional<double>& rate) {
  if (!rate) return "-";
  const double v = *rate;
  const int decimals = v >= 100 ? 0 : v >= 10 ? 1 : v >= 1 ? 2 : 3;
  std::ostringstream os;
  os << std::fixed << std::setprecision(decimals) << v;
  return os.str();
}

}  // namespace rnx::runner::detail
