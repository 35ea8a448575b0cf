// What a machine does at its best: its measured peaks (a matrix product per dtype, a device copy), what its maker's
// datasheet says, and a configuration's speed of light against them.
#pragma once

#include "rnx/common/run_document.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace rnx {

// What a time per call achieves of its work; a rate is unset where its part of the work is unknown or zero (a
// FLOP counter that saw none: an elementwise kernel, a norm).
struct achieved_rates {
  std::optional<double> gflop_per_s;
  std::optional<double> gb_per_s;
};
achieved_rates achieved(const work_info& work, double ms_per_call);

// The names of environment.peaks: "gemm_float16_flops_per_s", and the copy's bytes (read plus written) per second.
std::string gemm_peak_name(std::string_view dtype);
inline constexpr std::string_view copy_peak_name = "copy_bytes_per_s";

// A device's datasheet figures (dense, without sparsity), by the same names as the measured peaks, and where
// they come from.
struct datasheet {
  std::string model;
  std::map<std::string, double> peaks;
  std::string source;
};
// The datasheet of a device known by its name as torch reports it ("NVIDIA H100 80GB HBM3"); nullopt for others.
std::optional<datasheet> datasheet_for(std::string_view device);

// How close a time per call is to what the machine allows for its work: the time the work would take at the peak
// of its bound (the dtype's matrix product for its FLOPs, the copy for its bytes; the larger of the two), and that
// time over the measured one.
struct light_speed {
  double ideal_ms = 0;
  double fraction = 0;
  bool compute_bound = false;  // the FLOPs' time at peak is the larger
  std::string peak;            // the name of the peak it is set against (gemm_float32_flops_per_s, copy_bytes_per_s)
  // The bytes bind and the work evaluates transcendental elementwise functions (work_info::elementwise), whose
  // arithmetic has no measured peak: the bound is named elementwise, not memory; the fraction is still the bytes'
  // time at the copy's peak over the time, a floor (the arithmetic may be the nearer limit).
  bool elementwise = false;
};

// The bound's name as reports write it: "flop", "mem", "elem".
std::string_view bound_text(const light_speed& light);
// nullopt where neither part of the work has a peak to go with it (no FLOPs counted and no copy peak, a dtype
// without a measured matrix product, no peaks at all) or the time is not positive.
std::optional<light_speed> speed_of_light(const work_info& work, std::string_view dtype,
                                          const std::map<std::string, double>& peaks, double ms_per_call);

// The measurement error of the peak `light` is set against (environment.peak_measurements); 0 where none is
// recorded (a datasheet's figure, a run of an older rnx).
double peak_error(const light_speed& light, const std::map<std::string, peak_measurement>& measurements);

// Whether a speed of light is past its peak by more than that peak's own measurement error `error`: a time the
// machine cannot give honest work (a result kept from an earlier call, a peak measured on a busy machine). Within
// the error it is at the peak, not beyond it.
bool beyond_peak(const light_speed& light, double error);

// "62% mem", "45% flop", "4.2% flop" (one decimal under 10%), "29% elem": how every report writes a speed of light. A
// fraction past 1 by no more than `error` (the peak's own, peak_error) is written "100%": at the peak within its error.
std::string light_text(const light_speed& light, double error = 0);

}  // namespace rnx
