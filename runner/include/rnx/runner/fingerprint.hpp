// The environment fingerprint of a run: device, CPU, threads, torch, Python, CUDA, driver, OS, image, clocks.
#pragma once

#include "rnx/common/run_document.hpp"

#include <ATen/ATen.h>

namespace rnx::runner {

// Fills every field of rnx::environment for runs on `device` and sets env_id = rnx::compute_env_id. GPU fields
// (compute capability, driver, SM clocks) are filled for CUDA devices only; `image` comes from $RNX_IMAGE
// (the container digest the action passes), else "none".
environment collect_environment(at::Device device);

// Makes a CUDA `device` the current one of this thread and creates its context now: a kernel that asks torch for
// the current device lands on it (a device lane of `--devices`), and the context's cost is counted where it
// happens (the worker's start-up split) rather than in the first configuration. Does nothing for the CPU.
void open_device(at::Device device);

}  // namespace rnx::runner
