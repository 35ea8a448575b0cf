// Device lanes of `rnx bench --devices`: parsing the list, checking that the lanes are one environment, and
// handing each configuration (with its paired partner) to one lane for the whole run.
#pragma once

#include "bench_plan.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::runner::detail {

// One device that measures configurations concurrently with the others: a GPU (`cuda:N`) or a set of CPU cores
// (`cpu:A-B`, the worker bound to them and its threads capped at their number).
struct device_lane {
  std::string name;        // as written in --devices, normalised: "cuda:1", "cpu:0-3", "cpu:2"
  std::string device;      // the worker's device: "cuda:1" or "cpu"
  std::vector<int> cores;  // CPU lanes: the cores, ascending
  bool is_cuda() const { return device_kind_from_string(device) == device_kind::cuda; }
};

// "cuda:0,cuda:1" or "cpu:0-0,cpu:1-1" -> lanes. Throws rnx::error(usage), starting with `where` (the option or
// the manifest key the list came from), naming the bad item and the accepted
// forms: an empty item, an unknown kind, a bare `cuda`, a bad index or range, a device named twice, CPU core sets
// that overlap or differ in size (lanes of one run must be one environment), CPU and CUDA lanes mixed.
std::vector<device_lane> parse_devices(std::string_view spec, std::string_view where = "--devices");

// The GPUs of CUDA lanes as `nvidia-smi --query-gpu=index,name` lists them (index, model name).
struct gpu_model {
  int index = 0;
  std::string name;
};

// Refuses lanes that would not be one environment or do not exist here (rnx::error(usage)): a GPU index this
// machine lacks, GPUs of different models (run each model in a job of its own: its runs are another
// environment), CPU cores outside those this process may run on. `gpus` is the machine's list (for CUDA lanes).
void check_lanes(const std::vector<device_lane>& lanes, const std::vector<gpu_model>& gpus);

// The machine's GPUs, from nvidia-smi; empty where it is missing or lists none.
std::vector<gpu_model> visible_gpus();

// Which lane measures each configuration: a head configuration and its base partner always share a lane (so an
// in-process pair shares its process, and a process-paired one its device); the groups are dealt in plan order
// back and forth over the lanes (0..n-1, n-1..0, ...), so the lanes get equal counts and a sweep's costly
// configurations (the larger batches) spread over them. Costs are not known before measuring.
// Returns, per lane, the plan indices it measures.
std::vector<std::vector<std::size_t>> assign_lanes(const std::vector<planned>& plan, std::size_t lanes);

}  // namespace rnx::runner::detail
