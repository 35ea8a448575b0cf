// A configuration's speed of light: its work against the machine's peaks, measured or from the datasheet.
#include "rnx/common/speed_of_light.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

namespace rnx {

achieved_rates achieved(const work_info& work, double ms_per_call) {
  achieved_rates r;
  if (!(ms_per_call > 0)) return r;
  // n per ms / 1e6 = n per s / 1e9.
  if (work.flops && *work.flops > 0) r.gflop_per_s = static_cast<double>(*work.flops) / ms_per_call / 1e6;
  if (work.bytes && *work.bytes > 0) r.gb_per_s = static_cast<double>(*work.bytes) / ms_per_call / 1e6;
  return r;
}

std::string gemm_peak_name(std::string_view dtype) { return "gemm_" + std::string(dtype) + "_flops_per_s"; }

namespace {

struct sheet_row {
  std::string_view match;  // every word of it in the device's name
  std::string_view model;
  double fp32;
  double fp16;  // and bfloat16: the same tensor-core rate
  double memory_bytes_per_s;
  std::string_view source;
};

// Dense rates (the datasheets' starred figures are with 2:4 sparsity, twice these). float32 is the CUDA cores'
// rate: torch multiplies float32 matrices without TF32 unless a program allows it.
constexpr std::array<sheet_row, 3> sheet_rows{{
    {"H200", "NVIDIA H200 SXM", 67e12, 989.5e12, 4.8e12,
     "NVIDIA H200 Tensor Core GPU datasheet: FP32 67 TFLOPS, BF16/FP16 Tensor Core 1,979 TFLOPS with sparsity, "
     "HBM3e 4.8 TB/s"},
    {"H100 PCIe", "NVIDIA H100 PCIe", 51e12, 756.5e12, 2.0e12,
     "NVIDIA H100 Tensor Core GPU datasheet, PCIe: FP32 51 TFLOPS, BF16/FP16 Tensor Core 1,513 TFLOPS with sparsity, "
     "HBM2e 2 TB/s"},
    {"H100 HBM3", "NVIDIA H100 SXM5", 67e12, 989.5e12, 3.35e12,
     "NVIDIA H100 Tensor Core GPU datasheet, SXM: FP32 67 TFLOPS, BF16/FP16 Tensor Core 1,979 TFLOPS with sparsity, "
     "HBM3 3.35 TB/s"},
}};

bool names(std::string_view device, std::string_view match) {
  std::size_t at = 0;
  while (at < match.size()) {
    const std::size_t end = std::min(match.find(' ', at), match.size());
    if (device.find(match.substr(at, end - at)) == std::string_view::npos) return false;
    at = end + 1;
  }
  return true;
}

std::optional<double> peak(const std::map<std::string, double>& peaks, const std::string& name) {
  auto it = peaks.find(name);
  if (it == peaks.end() || !(it->second > 0)) return std::nullopt;
  return it->second;
}

}  // namespace

std::optional<datasheet> datasheet_for(std::string_view device) {
  // The NVL boards run the same chips at other clocks and power: their figures differ from every row here.
  if (device.find("NVL") != std::string_view::npos) return std::nullopt;
  for (const auto& row : sheet_rows) {
    if (!names(device, row.match)) continue;
    datasheet d{std::string(row.model), {}, std::string(row.source)};
    d.peaks[gemm_peak_name("float32")] = row.fp32;
    d.peaks[gemm_peak_name("float16")] = row.fp16;
    d.peaks[gemm_peak_name("bfloat16")] = row.fp16;
    d.peaks[std::string(copy_peak_name)] = row.memory_bytes_per_s;
    return d;
  }
  return std::nullopt;
}

std::optional<light_speed> speed_of_light(const work_info& work, std::string_view dtype,
                                          const std::map<std::string, double>& peaks, double ms_per_call) {
  if (!(ms_per_call > 0)) return std::nullopt;
  std::optional<double> compute_ms;
  std::optional<double> memory_ms;
  if (work.flops && *work.flops > 0) {
    if (auto p = peak(peaks, gemm_peak_name(dtype))) compute_ms = static_cast<double>(*work.flops) / *p * 1e3;
  }
  if (work.bytes && *work.bytes > 0) {
    if (auto p = peak(peaks, std::string(copy_peak_name))) memory_ms = static_cast<double>(*work.bytes) / *p * 1e3;
  }
  if (!compute_ms && !memory_ms) return std::nullopt;
  light_speed out;
  out.compute_bound = compute_ms && (!memory_ms || *compute_ms > *memory_ms);
  out.ideal_ms = out.compute_bound ? *compute_ms : *memory_ms;
  out.fraction = out.ideal_ms / ms_per_call;
  out.peak = out.compute_bound ? gemm_peak_name(dtype) : std::string(copy_peak_name);
  out.elementwise = !out.compute_bound && work.elementwise && *work.elementwise > 0;
  return out;
}

std::string_view bound_text(const light_speed& light) {
  return light.compute_bound ? "flop" : light.elementwise ? "elem" : "mem";
}

double peak_error(const light_speed& light, const std::map<std::string, peak_measurement>& measurements) {
  auto it = measurements.find(light.peak);
  return it == measurements.end() ? 0.0 : it->second.error;
}

bool beyond_peak(const light_speed& light, double error) { return light.fraction > 1 + error; }

std::string light_text(const light_speed& light, double error) {
  const double shown = light.fraction > 1 && !beyond_peak(light, error) ? 1.0 : light.fraction;
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, shown < 0.1 ? "%.1f%% %s" : "%.0f%% %s", 100 * shown,
                std::string(bound_text(light)).c_str());
  return buffer;
}

}  // namespace rnx
