// Device lanes: the --devices list, the one-environment check and the assignment of configurations to lanes.
#include "scheduler.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/process.hpp"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

namespace rnx::runner::detail {

namespace {

constexpr const char* accepted_forms =
    "use a comma-separated list of cuda:N (one GPU each, e.g. cuda:0,cuda:1) or of cpu:A-B core sets (e.g. "
    "cpu:0-0,cpu:1-1)";

[[noreturn]] void refuse(std::string_view where, std::string_view spec, const std::string& why) {
  throw error(errc::usage, std::string(where) + " " + std::string(spec) + ": " + why);
}

// A non-negative decimal number, or -1.
int parse_index(std::string_view text) {
  if (text.empty() || text.size() > 6) return -1;
  int value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

device_lane parse_lane(std::string_view where, std::string_view spec, std::string_view item) {
  device_lane lane;
  if (item.rfind("cuda:", 0) == 0) {
    const int index = parse_index(item.substr(5));
    if (index < 0) refuse(where, spec, "\"" + std::string(item) + "\" is not cuda:N with N a GPU index");
    lane.device = lane.name = "cuda:" + std::to_string(index);
    return lane;
  }
  if (item.rfind("cpu:", 0) == 0) {
    const std::string_view range = item.substr(4);
    const std::size_t dash = range.find('-');
    const int first = parse_index(range.substr(0, dash));
    const int last = dash == std::string_view::npos ? first : parse_index(range.substr(dash + 1));
    if (first < 0 || last < 0 || last < first || last >= CPU_SETSIZE) {
      refuse(where, spec, "\"" + std::string(item) + "\" is not cpu:A-B with cores A <= B (or cpu:A for one core)");
    }
    lane.device = "cpu";
    for (int c = first; c <= last; ++c) lane.cores.push_back(c);
    lane.name = "cpu:" + std::to_string(first) + (last == first ? "" : "-" + std::to_string(last));
    return lane;
  }
  if (item == "cuda" || item == "auto") {
    refuse(where, spec, "\"" + std::string(item) + "\" names no one device; " + accepted_forms);
  }
  refuse(where, spec, "\"" + std::string(item) + "\" is not a device; " + accepted_forms);
}

}  // namespace

std::vector<device_lane> parse_devices(std::string_view spec, std::string_view where) {
  std::vector<device_lane> lanes;
  std::size_t from = 0;
  while (from <= spec.size()) {
    std::size_t comma = spec.find(',', from);
    if (comma == std::string_view::npos) comma = spec.size();
    std::string_view item = spec.substr(from, comma - from);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.remove_suffix(1);
    if (item.empty()) refuse(where, spec, "an empty item; " + std::string(accepted_forms));
    lanes.push_back(parse_lane(where, spec, item));
    from = comma + 1;
  }
  std::set<std::string> names;
  std::set<int> cores;
  for (const auto& lane : lanes) {
    if (!names.insert(lane.name).second) refuse(where, spec, lane.name + " is named twice (each device measures once)");
    if (lane.is_cuda() != lanes.front().is_cuda()) {
      refuse(where, spec, "CPU and CUDA devices mixed: a run is one environment; measure them in separate runs");
    }
    for (int c : lane.cores) {
      if (!cores.insert(c).second) {
        refuse(where, spec,
               "core " + std::to_string(c) +
                   " is in two CPU devices; core sets must be disjoint, or the "
                   "devices time each other");
      }
    }
    if (lane.cores.size() != lanes.front().cores.size()) {
      refuse(where, spec,
             lane.name + " has " + std::to_string(lane.cores.size()) + " cores and " + lanes.front().name + " " +
                 std::to_string(lanes.front().cores.size()) +
                 ": CPU devices of one run must be the same size (the thread count is part of the environment)");
    }
  }
  return lanes;
}

void check_lanes(const std::vector<device_lane>& lanes, const std::vector<gpu_model>& gpus) {
  const gpu_model* first = nullptr;
  for (const auto& lane : lanes) {
    if (!lane.is_cuda()) continue;
    const int index = std::stoi(lane.device.substr(5));
    auto it = std::find_if(gpus.begin(), gpus.end(), [&](const gpu_model& g) { return g.index == index; });
    if (it == gpus.end()) {
      throw error(errc::usage, "--devices: " + lane.name + " is not a GPU of this machine (nvidia-smi lists " +
                                   std::to_string(gpus.size()) + "); name GPUs 0.." +
                                   std::to_string(std::max<int>(0, static_cast<int>(gpus.size()) - 1)));
    }
    if (!first) first = &*it;
    if (it->name != first->name) {
      throw error(errc::usage, "--devices: cuda:" + std::to_string(first->index) + " is a " + first->name + " and " +
                                   lane.name + " a " + it->name +
                                   ": a run is one environment, so its GPUs must be one model; run each model in "
                                   "a job of its own (--devices with that model's GPUs), which the service keeps "
                                   "as separate environments");
    }
  }
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  for (const auto& lane : lanes) {
    for (int c : lane.cores) {
      if (!CPU_ISSET(c, &allowed)) {
        throw error(errc::usage, "--devices: core " + std::to_string(c) + " of " + lane.name +
                                     " is not one this process may run on (" + std::to_string(CPU_COUNT(&allowed)) +
                                     " cores allowed; see nproc)");
      }
    }
  }
}

std::vector<gpu_model> visible_gpus() {
  std::vector<gpu_model> gpus;
  std::string out;
  try {
    if (run_capture({"nvidia-smi", "--query-gpu=index,name", "--format=csv,noheader"}, out) != 0) return gpus;
  } catch (const error&) {
    return gpus;
  }
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t comma = line.find(',');
    if (comma == std::string::npos) continue;
    const int index = parse_index(line.substr(0, comma));
    std::string name = line.substr(comma + 1);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.front()))) name.erase(0, 1);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
    if (index >= 0) gpus.push_back({index, name});
  }
  return gpus;
}

std::vector<std::vector<std::size_t>> assign_lanes(const std::vector<planned>& plan, std::size_t lanes) {
  const std::size_t n = std::max<std::size_t>(1, lanes);
  std::vector<std::vector<std::size_t>> out(n);
  std::size_t dealt = 0;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].side != 0 && plan[i].partner) continue;  // goes with its head
    // Dealt back and forth (0, 1, ..., n-1, n-1, ..., 0, 0, ...): a sweep's costly end (the largest batch, every
    // kernel's last configuration) does not all land on the last lane, as dealing round the lanes would do.
    const std::size_t pass = dealt / n;
    const std::size_t position = dealt % n;
    std::vector<std::size_t>& lane = out[pass % 2 == 0 ? position : n - 1 - position];
    ++dealt;
    lane.push_back(i);
    if (plan[i].partner) lane.push_back(*plan[i].partner);
  }
  for (auto& members : out) std::sort(members.begin(), members.end());
  return out;
}

}  // namespace rnx::runner::detail
