// rnx::importers on files that name the machine they ran on (fixtures/machines/): that machine is the run's
// environment, one env_id per machine, wherever the file is imported; a file that names none gets the importing
// machine's, and says so.
#include "rnx/common/host.hpp"
#include "rnx/importers/import.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace rnx;
using importers::format;

namespace {

namespace fs = std::filesystem;

std::string machine_file(const std::string& name) {
  return (fs::path(RNX_IMPORT_FIXTURES) / "machines" / name).string();
}

struct imported {
  run_document run;
  importers::import_summary summary;
};

imported import_file(format f, const std::string& name) {
  importers::import_options o;
  o.fmt = f;
  o.files = {machine_file(name)};
  o.project = "codec";
  imported out;
  out.run = importers::import_run(o, &out.summary);
  return out;
}

// This machine as the mismatch note and the run document's source name it, in the order of the file's facts.
std::string here(bool with_cpu_and_os) {
  std::string out = "host \"" + host::host_name() + "\"";
  if (with_cpu_and_os) out += ", " + host::cpu_model();
  out += ", " + std::to_string(std::thread::hardware_concurrency()) + " threads";
  if (with_cpu_and_os) out += ", " + host::kernel_name();
  return out;
}

}  // namespace

TEST_CASE("Google Benchmark files from three hosts are three environments, each the machine its file names") {
  const auto laptop = import_file(format::gbench, "gbench-laptop.json");
  const auto codespace = import_file(format::gbench, "gbench-codespace.json");
  const auto ci = import_file(format::gbench, "gbench-ci.json");
  CHECK(std::set<std::string>{laptop.run.env.env_id, codespace.run.env.env_id, ci.run.env.env_id}.size() == 3);

  const environment& env = laptop.run.env;
  CHECK(env.host == "maya-thinkpad");
  CHECK(env.threads == 16);
  CHECK(env.cpu == "unknown model, caches L1d 48 KiB, L1i 32 KiB, L2 1280 KiB, L3 24 MiB");
  CHECK(env.device == "cpu: unknown model, caches L1d 48 KiB, L1i 32 KiB, L2 1280 KiB, L3 24 MiB");
  CHECK(env.os.empty());  // Google Benchmark records no OS, and the importing machine's is not the file's
  CHECK(env.image == "none");
  CHECK(env.harness == "gbench v1.8.3 (release build)");
  CHECK(env.clocks.at("cpu_mhz") == 4400);
  REQUIRE(env.source);
  CHECK(env.source->from == env_origin::file);
  CHECK(env.source->path == machine_file("gbench-laptop.json") + ": $.context");
  CHECK(env.source->imported_on == here(false));
  CHECK(laptop.summary.environment_note ==
        machine_file("gbench-laptop.json") +
            ": $.context: measured on host \"maya-thinkpad\", 16 threads, not on this machine (" + here(false) +
            "): the environment is the one the file names");
  // Same caches, other CPU counts and hosts: the Codespace and the CI job are told apart by their 2 and 4 CPUs.
  CHECK(codespace.run.env.cpu == ci.run.env.cpu);
  CHECK(codespace.run.env.threads == 2);
  CHECK(ci.run.env.threads == 4);
  CHECK(ci.run.env.host == "fv-az1137-482");

  // The host name is recorded, not fingerprinted: a CI job's next runner has another name and the same machine.
  run_document renamed = ci.run;
  renamed.env.host = "fv-az2290-015";
  CHECK(compute_env_id(renamed.env) == ci.run.env.env_id);
  // What is written reads back with the same environment (the run document's own reader and writer).
  const run_document again = run_from_json(to_json(ci.run), "the imported run");
  CHECK(again.env.host == ci.run.env.host);
  REQUIRE(again.env.source);
  CHECK(again.env.source->path == ci.run.env.source->path);
  CHECK(again.env.source->imported_on == ci.run.env.source->imported_on);
}

TEST_CASE("files of one import from two hosts are refused, naming the host") {
  importers::import_options o;
  o.fmt = format::gbench;
  o.files = {machine_file("gbench-codespace.json"), machine_file("gbench-ci.json")};
  o.project = "codec";
  const std::string refused =
      machine_file("gbench-ci.json") + ": $.context: host \"fv-az1137-482\" differs from \"codespaces-7d2f4e\" in " +
      machine_file("gbench-codespace.json") + ": import the files of one machine and harness at a time";
  CHECK_THROWS_WITH(importers::import_run(o), refused.c_str());
}

TEST_CASE("a pytest-benchmark file from a Mac is filed as Darwin arm64 on an Apple M3 Pro") {
  const auto mac = import_file(format::pytest_benchmark, "pytest-darwin-m3.json");
  const environment& env = mac.run.env;
  CHECK(env.os == "Darwin 23.4.0 arm64");
  CHECK(env.cpu == "Apple M3 Pro");
  CHECK(env.device == "cpu: Apple M3 Pro");
  CHECK(env.threads == 12);
  CHECK(env.python == "3.12.2");
  CHECK(env.host == "Mayas-MacBook-Pro.local");
  REQUIRE(env.source);
  CHECK(env.source->from == env_origin::file);
  CHECK(env.source->imported_on == here(true));
  CHECK(mac.summary.environment_note ==
        machine_file("pytest-darwin-m3.json") +
            ": $.machine_info: measured on host \"Mayas-MacBook-Pro.local\", Apple M3 Pro, 12 threads, Darwin 23.4.0 "
            "arm64, not on this machine (" +
            here(true) + "): the environment is the one the file names");
}

TEST_CASE("a file that names no machine is filed under the importing machine, and the import says so") {
  const auto old = import_file(format::gbench, "gbench-no-machine.json");
  const environment& env = old.run.env;
  CHECK(env.cpu == host::cpu_model());
  CHECK(env.os == host::os_name());
  CHECK(env.threads == 4);  // the file's CPU count still counts
  CHECK(env.host.empty());
  REQUIRE(env.source);
  CHECK(env.source->from == env_origin::importing_machine);
  CHECK(env.source->path.empty());
  CHECK(old.summary.environment_note ==
        machine_file("gbench-no-machine.json") +
            ": $.context: the file names no machine (gbench (release build) recorded no host, CPU or OS here), so "
            "the environment is this one, where rnx import ran (" +
            host::cpu_model() + ", " + host::os_name() + "): import on the machine that ran the benchmarks");
}
