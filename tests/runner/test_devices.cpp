// Device lanes and prestarted workers: the --devices list and its errors, which lane measures what (pairs kept
// together, in one process), and a prestarted run giving the same configurations and sample counts as a plain one.
#include "rnx/common/error.hpp"
#include "rnx/runner/bench.hpp"
#include "scheduler.hpp"
#include "steer_checks.hpp"
#include "worker_run.hpp"

#include <doctest/doctest.h>

#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using rnx::runner::detail::assign_lanes;
using rnx::runner::detail::check_lanes;
using rnx::runner::detail::device_lane;
using rnx::runner::detail::gpu_model;
using rnx::runner::detail::parse_devices;

namespace {

const fs::path data = fs::path(RNX_TEST_DATA_DIR);

std::string usage_error(const std::string& spec) {
  try {
    parse_devices(spec);
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::usage);
    return e.what();
  }
  return "no error";
}

fs::path write_manifest(const std::string& name, const std::string& bench) {
  fs::path dir = fs::temp_directory_path() / ("rnx-devices-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path file = dir / (name + ".toml");
  std::ofstream out(file);
  const fs::path d = data / "kernels";
  out << "[project]\nname = \"devices-tests\"\n[defaults]\nbatch = [2, 4]\ndevice = \"cpu\"\n"
      << "[bench]\nprocesses = 2\nmax_processes = 2\nsamples = 8\nmin_samples = 8\nbudget_ms = 200\n"
      << "warmup_ms = 5\nthreads = 1\n"
      << bench << "[[kernel]]\nname = \"double\"\npath = \"" << (d / "double.py").string()
      << "\"\ninputs = { x = \"B,16\" }\nruntimes = [\"eager\", \"torchscript\"]\n"
      << "[[kernel]]\nname = \"square\"\npath = \"" << (d / "kb_square.py").string() << "\"\nbatch = [1]\n";
  return file;
}

rnx::runner::bench_options options_for(const fs::path& manifest) {
  rnx::runner::bench_options o;
  o.manifests = {manifest};
  o.worker = RNX_TEST_WORKER;
  o.cache_dir = fs::path(RNX_TEST_CACHE_DIR);
  return o;
}

int allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

}  // namespace

TEST_CASE("--devices: lanes parse, and a bad list is a usage error naming the item and the accepted forms") {
  auto gpus = parse_devices("cuda:0, cuda:1");
  REQUIRE(gpus.size() == 2);
  CHECK(gpus[1].name == "cuda:1");
  CHECK(gpus[1].device == "cuda:1");
  CHECK(gpus[1].is_cuda());
  auto cpus = parse_devices("cpu:0-1,cpu:2-3");
  REQUIRE(cpus.size() == 2);
  CHECK(cpus[1].name == "cpu:2-3");
  CHECK(cpus[1].device == "cpu");
  CHECK(cpus[1].cores == std::vector<int>{2, 3});
  CHECK(parse_devices("cpu:5")[0].name == "cpu:5");

  const std::string forms =
      "use a comma-separated list of cuda:N (one GPU each, e.g. cuda:0,cuda:1) or of cpu:A-B "
      "core sets (e.g. cpu:0-0,cpu:1-1)";
  CHECK(usage_error("gpu0") == "--devices gpu0: \"gpu0\" is not a device; " + forms);
  CHECK(usage_error("cuda") == "--devices cuda: \"cuda\" names no one device; " + forms);
  CHECK(usage_error("cuda:0,,cuda:1") == "--devices cuda:0,,cuda:1: an empty item; " + forms);
  CHECK(usage_error("cuda:x") == "--devices cuda:x: \"cuda:x\" is not cuda:N with N a GPU index");
  CHECK(usage_error("cpu:3-1") ==
        "--devices cpu:3-1: \"cpu:3-1\" is not cpu:A-B with cores A <= B (or cpu:A for one "
        "core)");
  CHECK(usage_error("cuda:1,cuda:1") == "--devices cuda:1,cuda:1: cuda:1 is named twice (each device measures once)");
  CHECK(usage_error("cpu:0-1,cpu:1-2") ==
        "--devices cpu:0-1,cpu:1-2: core 1 is in two CPU devices; core sets must be disjoint, or the devices time "
        "each other");
  CHECK(usage_error("cpu:0-1,cpu:2") ==
        "--devices cpu:0-1,cpu:2: cpu:2 has 1 cores and cpu:0-1 2: CPU devices of "
        "one run must be the same size (the thread count is part of the environment)");
  CHECK(usage_error("cuda:0,cpu:1") ==
        "--devices cuda:0,cpu:1: CPU and CUDA devices mixed: a run is one environment; measure them in separate runs");
}

TEST_CASE("--devices: lanes must exist here and be one GPU model") {
  const std::vector<gpu_model> two_models = {{0, "NVIDIA H200"}, {1, "NVIDIA H200"}, {2, "NVIDIA A100-SXM4-80GB"}};
  CHECK_NOTHROW(check_lanes(parse_devices("cuda:0,cuda:1"), two_models));
  try {
    check_lanes(parse_devices("cuda:0,cuda:2"), two_models);
    FAIL("mixed models accepted");
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::usage);
    CHECK(std::string(e.what()) ==
          "--devices: cuda:0 is a NVIDIA H200 and cuda:2 a NVIDIA A100-SXM4-80GB: a run is one environment, so its "
          "GPUs must be one model; run each model in a job of its own (--devices with that model's GPUs), which the "
          "service keeps as separate environments");
  }
  try {
    check_lanes(parse_devices("cuda:7"), two_models);
    FAIL("a missing GPU accepted");
  } catch (const rnx::error& e) {
    CHECK(std::string(e.what()) ==
          "--devices: cuda:7 is not a GPU of this machine (nvidia-smi lists 3); name GPUs 0..2");
  }
  try {
    check_lanes(parse_devices("cpu:1000"), {});
    FAIL("a core outside the affinity accepted");
  } catch (const rnx::error& e) {
    CHECK(std::string(e.what()).find("--devices: core 1000 of cpu:1000 is not one this process may run on") == 0);
  }
}

TEST_CASE("lanes: a configuration and its base partner share a lane; lanes get equal shares") {
  std::vector<rnx::runner::detail::planned> plan(10);
  for (std::size_t i = 0; i < 5; ++i) {
    plan[i].side = 0;
    plan[i + 5].side = 1;
    if (i != 4) {  // the fifth head configuration has no base
      plan[i].partner = i + 5;
      plan[i + 5].partner = i;
    }
  }
  plan[9].partner.reset();  // and the fifth base none either
  const auto lanes = assign_lanes(plan, 2);
  REQUIRE(lanes.size() == 2);
  std::map<std::size_t, std::size_t> lane_of;
  for (std::size_t l = 0; l < lanes.size(); ++l) {
    for (std::size_t i : lanes[l]) CHECK(lane_of.emplace(i, l).second);  // each in one lane only
  }
  CHECK(lane_of.size() == plan.size());
  for (std::size_t i = 0; i < 4; ++i) CHECK(lane_of.at(i) == lane_of.at(i + 5));
  CHECK(lanes[0].size() == 5);
  CHECK(lanes[1].size() == 5);
  // Dealt back and forth: lane 0 gets the first and fourth pair, lane 1 the second and third.
  CHECK(lane_of.at(0) == 0);
  CHECK(lane_of.at(1) == 1);
  CHECK(lane_of.at(2) == 1);
  CHECK(lane_of.at(3) == 0);
}

TEST_CASE("two CPU lanes: every configuration records its lane, pairs share a process on one lane") {
  if (allowed_cores() < 2) {
    MESSAGE("skipped: needs two cores");
    return;
  }
  const fs::path m = write_manifest("lanes", "");
  auto o = options_for(m);
  o.manifests.push_back(m);  // paired with itself (what --self-check runs)
  o.devices = "cpu:0-0,cpu:1-1";
  rnx::runner::bench_timing timing;
  const auto sides = rnx::runner::run_bench(o, &timing);
  REQUIRE(sides.size() == 2);
  CHECK(timing.lanes == 2);
  std::set<std::string> used;
  int shared = 0;
  for (std::size_t i = 0; i < sides[0].results.size(); ++i) {
    const auto& h = sides[0].results[i];
    const auto& b = sides[1].results[i];
    INFO(h.key().label());
    REQUIRE(h.status == rnx::result_status::ok);
    CHECK(h.key() == b.key());
    CHECK((h.measured_on == "cpu:0" || h.measured_on == "cpu:1"));  // cpu:A-A is written cpu:A
    CHECK(h.measured_on == b.measured_on);
    used.insert(h.measured_on);
    // Eight-sample windows of microsecond calls: the control or the load-order check can read noise as a steer, and
    // the pair then goes on by process pairing, saying so. That is those checks' business, not the lanes'; the rest
    // must share their processes.
    if (rnx::test::split_by_steer_check(h)) {
      MESSAGE(h.key().label() << ": " << h.pairing_reason);
      continue;
    }
    ++shared;
    CHECK_MESSAGE(h.pairing == rnx::pairing_mode::in_process, h.pairing_reason);
    CHECK(h.groups == b.groups);  // the same processes, block for block
    // Two processes, less one where a control tripped and the next cleared it (that process is not counted).
    CHECK(!h.groups.empty());
    CHECK(h.groups.size() <= 2);
  }
  CHECK(shared > 0);
  CHECK(used.size() == 2);
  CHECK(sides[0].env.threads == 1);
  CHECK(sides[0].env.env_id == sides[1].env.env_id);
}

TEST_CASE("a prestarted run measures the same configurations and sample counts as a plain one") {
  const fs::path m = write_manifest("prestart", "");
  std::map<std::string, std::vector<std::int64_t>> groups[2];
  int workers[2] = {0, 0};
  for (int on = 0; on < 2; ++on) {
    auto o = options_for(m);
    o.prestart = on ? rnx::runner::prestart_mode::on : rnx::runner::prestart_mode::off;
    rnx::runner::bench_timing timing;
    const auto sides = rnx::runner::run_bench(o, &timing);
    REQUIRE(sides.size() == 1);
    for (const auto& r : sides[0].results) {
      INFO(r.key().label());
      CHECK(r.status == rnx::result_status::ok);
      CHECK(r.measured_on.empty());
      groups[on][r.key().label()] = r.groups;
    }
    workers[on] = timing.workers;
    CHECK(timing.start_python_s > 0);
    CHECK(timing.configs.size() == sides[0].results.size());
    if (on) CHECK(timing.start_hidden_s > 0);
  }
  CHECK(groups[0] == groups[1]);
  CHECK(groups[0].at("double/eager/float32/b2") == std::vector<std::int64_t>{8, 8});
  CHECK(workers[1] >= workers[0]);  // the one started ahead for a round that never came is counted too
}

TEST_CASE("the manifest's [bench] devices is read; a bad one is a usage error naming the manifest key") {
  const fs::path m = write_manifest("bad-devices", "devices = \"cpu:0-0,gpu\"\n");
  try {
    rnx::runner::run_bench(options_for(m));
    FAIL("a bad [bench] devices accepted");
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::usage);
    CHECK(std::string(e.what()).find("[bench] devices cpu:0-0,gpu: \"gpu\" is not a device;") != std::string::npos);
  }
}

TEST_CASE("a CPU lane's worker runs on the lane's cores from exec, before it imports anything") {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  REQUIRE(::sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  int last = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) last = cpu;
  }
  REQUIRE(last >= 0);
  // A stand-in worker: its first act is to write the cores it may run on to the result descriptor.
  const fs::path dir = fs::temp_directory_path() / ("rnx-devices-bind-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path script = dir / "worker.sh";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\nsed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status >&3\n";
  }
  fs::permissions(script, fs::perms::owner_all);
  for (const bool held : {false, true}) {
    INFO("prestarted: " << held);
    auto run = held ? std::make_unique<rnx::runner::detail::worker_run>(script, std::vector<int>{last})
                    : std::make_unique<rnx::runner::detail::worker_run>(script, dir / "job.json", std::nullopt,
                                                                        std::vector<int>{last});
    std::vector<std::string> lines;
    for (int i = 0; i < 100 && !run->finished(); ++i) {
      for (auto& l : run->poll_lines(100)) lines.push_back(l);
    }
    bool clean = false;
    run->wait_description(clean);
    CHECK(clean);
    CHECK(lines == std::vector<std::string>{std::to_string(last)});
  }
  fs::remove_all(dir);
}
