// The machine's peaks, measured by the worker on its own device and kept once per environment.
#include "rnx/runner/fingerprint.hpp"
#include "rnx/common/speed_of_light.hpp"
#include "rnx/runner/timing.hpp"

#include "rnx/common/json.hpp"

#include <boost/json.hpp>

#include <unistd.h>

#include <fstream>
#include <functional>

namespace rnx::runner {

namespace fs = std::filesystem;
namespace bj = boost::json;

namespace {

// The fastest of `calls` timed calls of `op` after two untimed ones (fastest_call_ms).
double best_ms(const std::function<void()>& op, at::Device device, int calls) {
  op();
  op();
  return fastest_call_ms(
      device, calls, [](int) {}, [&](int) { op(); });
}

// FLOP/s of an n x n by n x n product in `dtype`.
double gemm_peak(at::Device device, at::ScalarType dtype, std::int64_t n) {
  const auto options = at::TensorOptions().dtype(dtype).device(device);
  at::Tensor a = at::randn({n, n}, options);
  at::Tensor b = at::randn({n, n}, options);
  at::Tensor c = at::empty({n, n}, options);
  const double ms = best_ms([&] { at::mm_out(c, a, b); }, device, device.is_cuda() ? 10 : 5);
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / (ms * 1e-3);
}

// Bytes per second (read plus written) of copying `bytes` bytes.
double copy_peak(at::Device device, std::int64_t bytes) {
  const auto options = at::TensorOptions().dtype(at::kFloat).device(device);
  at::Tensor src = at::ones({bytes / 4}, options);
  at::Tensor dst = at::empty({bytes / 4}, options);
  const double ms = best_ms([&] { dst.copy_(src); }, device, device.is_cuda() ? 20 : 5);
  return 2.0 * static_cast<double>(bytes) / (ms * 1e-3);
}

std::map<std::string, double> cached(const fs::path& file) {
  std::map<std::string, double> out;
  std::error_code ec;
  if (!fs::exists(file, ec)) return out;
  try {
    const bj::value v = json::parse_file(file);
    for (const auto& [name, value] : v.as_object()) {
      if (value.is_number() && value.to_number<double>() > 0) out[std::string(name)] = value.to_number<double>();
    }
  } catch (const std::exception&) {
    out.clear();  // a damaged cache is measured again and rewritten
  }
  return out;
}

void store(const fs::path& file, const std::map<std::string, double>& peaks) {
  bj::object o;
  for (const auto& [name, value] : peaks) o[name] = value;
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  const fs::path part = file.string() + "." + std::to_string(::getpid()) + ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out << json::serialize(o, true) << "\n";
    if (!out) return;
  }
  fs::rename(part, file, ec);
  if (ec) fs::remove(part, ec);
}

}  // namespace

std::map<std::string, double> measure_peaks(at::Device device) {
  std::map<std::string, double> out;
  if (device.is_cuda()) {
    for (const auto& [name, dtype] :
         {std::pair{"float32", at::kFloat}, std::pair{"float16", at::kHalf}, std::pair{"bfloat16", at::kBFloat16}}) {
      out[gemm_peak_name(name)] = gemm_peak(device, dtype, 8192);
    }
    out[std::string(copy_peak_name)] = copy_peak(device, std::int64_t{1} << 30);
  } else {
    out[gemm_peak_name("float32")] = gemm_peak(device, at::kFloat, 1024);
    out[std::string(copy_peak_name)] = copy_peak(device, std::int64_t{256} << 20);
  }
  return out;
}

std::map<std::string, double> machine_peaks(at::Device device, const std::string& env_id, const fs::path& cache_dir) {
  const fs::path file = cache_dir / "peaks" / (env_id + ".json");
  auto peaks = cached(file);
  if (!peaks.empty()) return peaks;
  peaks = measure_peaks(device);
  store(file, peaks);
  return peaks;
}

}  // namespace rnx::runner
