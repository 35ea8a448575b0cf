// rnx-runner-worker: runs a list of configurations in one process and reports events as JSON lines on a pipe.
//
// The orchestrator (rnx bench) starts several of these per configuration; a crash, hang or out-of-memory here
// costs one configuration's result, never the run.
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/manifest.hpp"
#include "rnx/runner/fingerprint.hpp"
#include "rnx/runner/kernel.hpp"
#include "rnx/runner/worker_channel.hpp"
#include "rnx/runner/sample_stats.hpp"
#include "rnx/runner/timing.hpp"
#include "rnx/sandbox/sandbox.hpp"
#include "contained_worker.hpp"
#include "worker_config.hpp"
#include "worker_protocol.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <c10/core/GradMode.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace bj = boost::json;
using namespace rnx;

namespace {

int result_fd = 1;

// glibc serves a large allocation (a CPU tensor of a few MiB) with a fresh mmap until freeing such a block
// raises its threshold, and whether that has happened differs from process to process. Where it has not, every
// call maps, faults in and unmaps its outputs: on the 2-core CI machine a softmax over 2 MiB measured 5-9 ms in
// such processes against 1.4-2.8 ms in the others. A fixed threshold is not enough: glibc caps it at 32 MiB, and
// a 64 MiB output (a GELU over 16 M floats) was still mapped and faulted in at every call, 57,344 page faults a
// sample, with process medians 0.72 to 13 ms apart (bench/corpus.py aa, batchnorm2d_module at batch 4). So mmap
// is not used for allocations at all (glibc still maps where its heap cannot grow) and freed memory stays with
// the process (a trim threshold of 1 GiB): every worker reuses its heap from the first call, as any warmed-up
// program does.
void steady_allocator() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

void emit(const bj::object& event) { runner::emit_line(result_fd, event); }

bj::object environment_json(const environment& env) {
  run_document doc;
  doc.env = env;
  return bj::value(to_json(doc)).as_object().at("environment").as_object();
}

// The environment with the machine's peaks, measured on this worker's device the first time this environment is
// seen and again where a result beat one or one was a busy machine's (the job's cache keeps them, the higher). A
// contained worker (timing untrusted candidates) leaves them out: its cache is not writable, and rnx optimize
// judges candidates by the verdict, not by the peaks.
environment with_peaks(environment env, at::Device device, const runner::detail::worker_job& job, bool contained) {
  if (contained || job.cache_dir.empty()) return env;
  try {
    auto kept = runner::machine_peaks(device, env.env_id, job.cache_dir);
    env.peaks = std::move(kept.peaks);
    env.peak_measurements = std::move(kept.measurements);
  } catch (const std::exception& e) {
    std::cerr << "rnx-runner-worker: the machine's peaks were not measured (" << e.what() << ")\n";
  }
  return env;
}

// A single-threaded worker stays on one core: the scheduler may otherwise move it between cores mid-sample, and
// every move costs it its warm caches. The last core of the allowed set is taken (the first one tends to serve
// the machine's interrupts). RNX_PIN=0 turns this off. Returns the core, or -1 when not pinned.
int pin_to_one_core(int threads) {
  const char* pin = std::getenv("RNX_PIN");
  if (threads != 1 || (pin && std::string(pin) == "0")) return -1;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) return -1;
  int last = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) last = cpu;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(last, &one);
  return ::sched_setaffinity(0, sizeof one, &one) == 0 ? last : -1;
}

// Seconds on the monotonic clock (CLOCK_MONOTONIC, one for all processes of the machine): the orchestrator
// subtracts its own launch time from these to split a worker's start into its phases.
double monotonic_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A CPU device lane: every thread of this process (Python's and torch's already started ones too) may run on
// `cores` only; threads started later inherit it. Throws when the kernel refuses the set.
void bind_cores(const std::vector<int>& cores) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cores) CPU_SET(c, &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0) {
    throw error(errc::usage, "cannot bind the worker to cores of its device lane: " +
                                 std::string(std::strerror(errno)) + " (name cores this job may run on in --devices)");
  }
  if (DIR* tasks = ::opendir("/proc/self/task")) {
    while (const dirent* e = ::readdir(tasks)) {
      const int tid = std::atoi(e->d_name);
      if (tid > 0) ::sched_setaffinity(tid, sizeof set, &set);
    }
    ::closedir(tasks);
  }
}

// `--job -`: a worker started ahead of its turn (the orchestrator's prestart) has started Python and imported
// torch and the compilers' front ends, says so, and waits for its job's path on stdin; no device has been touched yet,
// so waiting costs the measurement in progress nothing but the import's CPU time. An empty stdin (the run ended) ends
// it quietly.
std::optional<std::string> await_job(double main_s, double python_s) {
  emit(to_json(runner::detail::loaded_event{.clock = {.main = main_s, .python = python_s}}));
  std::string path;
  if (!std::getline(std::cin, path) || path.empty()) return std::nullopt;
  return path;
}

// The threads of this worker: the manifest's [bench] threads, else one per core it may run on.
int worker_threads(const manifest& m, const std::vector<int>& cores) {
  const int all = cores.empty() ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))
                                : static_cast<int>(cores.size());
  return m.bench.threads > 0 ? std::min(m.bench.threads, all) : all;
}

// `--contained 1`: the orchestrator started this worker inside rnx::sandbox to time untrusted kernels.
bool contained_run(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], runner::detail::contained_flag) == 0) return std::strcmp(argv[i + 1], "0") != 0;
  }
  return false;
}

// A contained worker's stdout and stderr go to a log in its scratch folder (its working folder), which the
// orchestrator reads once it has ended: what an untrusted kernel prints never reaches the caller's terminal.
void log_to_scratch() {
  const int fd = ::open(runner::detail::contained_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  ::dup2(fd, 1);
  ::dup2(fd, 2);
  ::close(fd);
}

// Before any kernel is imported: no capabilities and the seccomp filter (network sockets, io_uring and other
// processes' memory refused), for this process and everything it starts. New processes stay allowed (compilers
// for torch.compile and Triton); they inherit every layer. The orchestrator checks the line this emits.
void seal() {
  std::string why;
  const bool sealed = rnx::sandbox::drop_capabilities(why) && rnx::sandbox::install_filter(1, why);
  emit(to_json(runner::detail::contained_event{.seccomp = sealed, .why = why}));
}

// Why the worker stops. A contained worker's log stays inside its sandbox (its scratch folder may be a tmpfs
// only it sees), so the line goes on the result channel too, where the orchestrator keeps it as the log's tail.
void fail(bool contained, const std::string& line) {
  std::cerr << line << "\n";
  if (contained) emit(to_json(runner::detail::log_event{.line = line}));
}

}  // namespace

int main(int argc, char** argv) {
  const double main_s = monotonic_s();
  steady_allocator();
  const bool contained = contained_run(argc, argv);
  if (contained) log_to_scratch();
  const runner::worker_args args = runner::parse_worker_args(argc, argv);
  std::string job_path = args.job_path;
  result_fd = args.result_fd;
  if (job_path.empty()) {
    std::cerr << "usage: rnx-runner-worker --job JOB.json|- [--result-fd N]\n"
                 "(started by `rnx bench`; not meant to be run by hand)\n";
    return 2;
  }
  try {
    runner::ensure_python();
    if (job_path == "-") runner::preload_compilers();  // started ahead of its turn: hidden by the measurement
    const double python_s = monotonic_s();
    double released_s = python_s;
    if (job_path == "-") {
      const std::optional<std::string> path = await_job(main_s, python_s);
      if (!path) std::_Exit(0);
      job_path = *path;
      released_s = monotonic_s();
    }
    rnx::runner::detail::worker_job job = rnx::runner::detail::job_from_json(json::parse_file(job_path));
    manifest m = load_manifest(job.manifest);
    if (!job.cores.empty()) bind_cores(job.cores);
    c10::NoGradGuard no_grad;  // kernels are measured for inference; Python shares this thread-local mode
    at::set_num_threads(worker_threads(m, job.cores));
    at::Device fp_device(at::kCPU);
    try {
      fp_device = runner::resolve_device(job.fingerprint_device);
      runner::open_device(fp_device);
    } catch (const runner::runtime_unavailable&) {
      // The configurations that need the missing GPU will say so one by one.
    }
    const double device_s = monotonic_s();
    const int pinned = pin_to_one_core(m.bench.threads);
    bj::object env = environment_json(with_peaks(runner::collect_environment(fp_device), fp_device, job, contained));
    if (contained) seal();
    runner::detail::ready_event ready;
    ready.environment = std::move(env);
    ready.pinned_cpu = pinned;
    ready.clock = {main_s, python_s, released_s, device_s, monotonic_s()};
    emit(to_json(ready));
    std::optional<manifest> base;
    if (!job.base_manifest.empty()) base = load_manifest(job.base_manifest);
    runner::detail::kernel_cache cache;
    for (const auto& c : job.configs) {
      emit(to_json(runner::detail::start_event{.index = c.index}));
      emit(to_json(c.base_index && base ? runner::detail::run_paired_config(c, m, *base, job, cache)
                                        : runner::detail::run_config(c, m, job, cache)));
    }
  } catch (const error& e) {
    fail(contained, std::string("rnx-runner-worker: ") + e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fail(contained, std::string("rnx-runner-worker: internal error: ") + e.what());
    return 3;
  }
  std::fflush(stdout);
  // Skip interpreter and static teardown: torch.compile worker pools and CUDA contexts can hang or crash on
  // exit, and everything worth keeping has been reported.
  std::_Exit(0);
}
