// The environment fingerprint of a run: device, CPU, threads, torch, Python, CUDA, driver, OS, image, clocks, and
// the machine's measured peaks (rnx/common/speed_of_light.hpp names them).
#pragma once

#include "rnx/common/run_document.hpp"

#include <ATen/ATen.h>

#include <filesystem>
#include <map>
#include <string>
namespace rnx::runner {

// Fills every field of rnx::environment for runs on `device` and sets env_id = rnx::compute_env_id. GPU fields
// (compute capability, driver, SM clocks) are filled for CUDA devices only; `image` comes from $RNX_IMAGE
// (the container digest the action passes), else "none".
environment collect_environment(at::Device device);

// Makes a CUDA `device` the current one of this thread and creates its context now: a kernel that asks torch for
// the current device lands on it (a device lane of `--devices`), and the context's cost is counted where it
// happens (the worker's start-up split) rather than in the first configuration. Does nothing for the CPU.
void open_device(at::Device device);

// The machine's peaks (environment.peaks) and how each was measured (environment.peak_measurements).
struct peak_record {
  std::map<std::string, double> peaks;
  std::map<std::string, peak_measurement> measurements;
};

// Measures the peaks of `device` (the worker does this, on its own device, before its first configuration: the lane
// is its alone): ten event-timed (CUDA) or clock-timed (CPU) calls of a square matrix product per dtype (CUDA:
// float32, float16, bfloat16 at 8192; CPU: float32 at 1024 with the worker's threads) and ten (CUDA twenty) of a
// copy (CUDA 1 GiB, CPU 256 MiB; its bytes read plus written), each after two untimed ones. A peak is the rate at
// the fastest call, its error 1 - fastest / lower quartile of the calls; on the CPU its record says how many cores
// other processes kept busy while it was timed.
peak_record measure_peaks(at::Device device);

// The peaks of this environment as CACHE_DIR/peaks/ENV_ID.json keeps them (peak_cache.hpp), measured where the
// file has none. They are measured again, and per peak the higher kept, where a result has beaten one since
// (rnx bench marks it) or where one was timed while other processes kept the machine busy and it is quiet now: a
// busy machine's low peak never stays for good. The file is written whole, by rename; one that cannot be written
// is left alone.
peak_record machine_peaks(at::Device device, const std::string& env_id, const std::filesystem::path& cache_dir);

}  // namespace rnx::runner
