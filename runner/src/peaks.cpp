// The machine's peaks, measured by the worker on its own device, kept per environment with how each was measured,
// measured again where a result beat one or where one was timed on a busy machine, the higher kept.
#include "rnx/runner/fingerprint.hpp"
#include "rnx/common/speed_of_light.hpp"
#include "rnx/runner/peak_cache.hpp"
#include "rnx/runner/timing.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

namespace rnx::runner {

namespace fs = std::filesystem;

namespace {

using clock_type = std::chrono::steady_clock;

// The jiffies every core spent busy (user, nice, system, irq, softirq, steal: all but idle and iowait), and this
// process's own (every thread's user and system time); nullopt without /proc.
struct cpu_ticks {
  double machine = 0;
  double self = 0;
  clock_type::time_point at;
};

std::optional<cpu_ticks> read_ticks() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || cpu != "cpu") {
    return std::nullopt;
  }
  std::ifstream self("/proc/self/stat");
  std::string line;
  if (!std::getline(self, line)) return std::nullopt;
  // Fields after the command's closing parenthesis: state is field 3, utime 14 and stime 15.
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::vector<std::string> f{std::istream_iterator<std::string>(rest), std::istream_iterator<std::string>()};
  if (f.size() < 13) return std::nullopt;
  return cpu_ticks{user + nice + system + irq + softirq + steal, std::stod(f[11]) + std::stod(f[12]),
                   clock_type::now()};
}

// The cores other processes kept busy between `a` and `b` (0 without /proc).
double others_cores(const std::optional<cpu_ticks>& a, const std::optional<cpu_ticks>& b) {
  if (!a || !b) return 0;
  const double wall_s = std::chrono::duration<double>(b->at - a->at).count();
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  if (!(wall_s > 0) || !(hz > 0)) return 0;
  return std::max(0.0, ((b->machine - a->machine) - (b->self - a->self)) / hz / wall_s);
}

// The cores other processes keep busy now, over 100 ms (this process is idle meanwhile).
double others_now() {
  const auto a = read_ticks();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return others_cores(a, read_ticks());
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

// `calls` timed calls of `op` after two untimed ones, each timed alone (fastest_call_ms of one call): the rate of
// `work` units at the fastest call is the peak, and 1 - fastest / lower quartile of the calls its error (how far
// the fastest stands from the calls nearest it: a lone fast call is a less certain peak). `what` says what was
// timed.
kept_peak timed_peak(const std::function<void()>& op, at::Device device, int calls, double work,
                     const std::string& what) {
  op();
  op();
  const auto before = device.is_cpu() ? read_ticks() : std::nullopt;
  std::vector<double> ms;
  for (int i = 0; i < calls; ++i)
    ms.push_back(fastest_call_ms(
        device, 1, [](int) {}, [&](int) { op(); }));
  const auto after = device.is_cpu() ? read_ticks() : std::nullopt;
  std::sort(ms.begin(), ms.end());
  const double quartile = ms[ms.size() / 4];
  kept_peak p;
  p.value = work / (ms.front() * 1e-3);
  p.measured.error = quartile > 0 ? std::clamp(1 - ms.front() / quartile, 0.0, 0.99) : 0;
  p.measured.measured_at = utc_now();
  p.others_cores = others_cores(before, after);
  std::ostringstream how;
  how << "the fastest of " << calls << " calls of " << what;
  if (device.is_cpu()) {
    char busy[128];
    const int threads = at::get_num_threads();
    std::snprintf(busy, sizeof busy, " on %d thread%s; other processes kept %.2f of %ld cores busy meanwhile", threads,
                  threads == 1 ? "" : "s", p.others_cores, ::sysconf(_SC_NPROCESSORS_ONLN));
    how << busy;
  } else {
    how << " on " << device.str() << ", CUDA events";
  }
  p.measured.how = how.str();
  return p;
}

// FLOP/s of an n x n by n x n product in `dtype`.
kept_peak gemm_peak(at::Device device, at::ScalarType dtype, const std::string& dtype_name, std::int64_t n) {
  const auto options = at::TensorOptions().dtype(dtype).device(device);
  at::Tensor a = at::randn({n, n}, options);
  at::Tensor b = at::randn({n, n}, options);
  at::Tensor c = at::empty({n, n}, options);
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const std::string what = "a " + std::to_string(n) + " x " + std::to_string(n) + " " + dtype_name + " matrix product";
  return timed_peak([&] { at::mm_out(c, a, b); }, device, 10, flops, what);
}

// Bytes per second (read plus written) of copying `bytes` bytes.
kept_peak copy_peak(at::Device device, std::int64_t bytes) {
  const auto options = at::TensorOptions().dtype(at::kFloat).device(device);
  at::Tensor src = at::ones({bytes / 4}, options);
  at::Tensor dst = at::empty({bytes / 4}, options);
  const std::string what = "a copy of " + std::to_string(bytes >> 20) + " MiB";
  return timed_peak([&] { dst.copy_(src); }, device, device.is_cuda() ? 20 : 10, 2.0 * static_cast<double>(bytes),
                    what);
}

peak_set measure(at::Device device) {
  peak_set out;
  if (device.is_cuda()) {
    for (const auto& [name, dtype] :
         {std::pair{"float32", at::kFloat}, std::pair{"float16", at::kHalf}, std::pair{"bfloat16", at::kBFloat16}}) {
      out[gemm_peak_name(name)] = gemm_peak(device, dtype, name, 8192);
    }
    out[std::string(copy_peak_name)] = copy_peak(device, std::int64_t{1} << 30);
  } else {
    out[gemm_peak_name("float32")] = gemm_peak(device, at::kFloat, "float32", 1024);
    out[std::string(copy_peak_name)] = copy_peak(device, std::int64_t{256} << 20);
  }
  return out;
}

peak_record record_of(const peak_set& peaks) {
  peak_record r;
  for (const auto& [name, p] : peaks) {
    r.peaks[name] = p.value;
    r.measurements[name] = p.measured;
  }
  return r;
}

}  // namespace

peak_record measure_peaks(at::Device device) { return record_of(measure(device)); }

peak_record machine_peaks(at::Device device, const std::string& env_id, const fs::path& cache_dir) {
  const fs::path file = peak_file(cache_dir, env_id);
  auto kept = read_peaks(file);
  if (!kept) {
    const peak_set fresh = measure(device);
    write_peaks(file, fresh);
    return record_of(fresh);
  }
  const bool beaten =
      std::any_of(kept->begin(), kept->end(), [](const auto& p) { return !p.second.beaten_by.empty(); });
  const bool busy =
      std::any_of(kept->begin(), kept->end(), [](const auto& p) { return p.second.others_cores > busy_cores; });
  // Whether the machine is quiet now is asked only of a cache that holds a busy machine's peak.
  const double now = busy && device.is_cpu() ? others_now() : 0;
  const bool again =
      beaten || std::any_of(kept->begin(), kept->end(), [&](const auto& p) { return needs_measuring(p.second, now); });
  if (!again) return record_of(*kept);
  const peak_set fresh = measure(device);
  // Kept against what the file holds now: another worker may have measured meanwhile.
  const peak_set merged = keep_higher(read_peaks(file).value_or(*kept), fresh);
  write_peaks(file, merged);
  return record_of(merged);
}

}  // namespace rnx::runner
