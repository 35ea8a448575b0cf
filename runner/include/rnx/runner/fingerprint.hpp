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

// Measures the peaks of `device` (the worker does this, on its own device, after its job: the lane is its alone):
// the best of several event-timed (CUDA) or clock-timed (CPU) calls of a square matrix product per dtype (CUDA:
// float32, float16, bfloat16 at 8192; CPU: float32 at 1024 with the worker's threads) and of a copy (CUDA 1 GiB,
// CPU 256 MiB; its bytes read plus written).
std::map<std::string, double> measure_peaks(at::Device device);

// measure_peaks once per environment: read from CACHE_DIR/peaks/ENV_ID.json when it is there, else measured and
// written there (written whole, by rename; a cache that cannot be written is left alone).
std::map<std::string, double> machine_peaks(at::Device device, const std::string& env_id,
                                            const std::filesystem::path& cache_dir);

}  // namespace rnx::runner
