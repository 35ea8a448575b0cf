// Fresh inputs through real worker processes: a kernel logs what every call was given (its process, each input's
// address and a digest of its bytes), and the log shows that no timed call saw values an earlier call saw, integer
// inputs included, and that the calls used several input sets; a kernel that answers wrongly only after many calls
// is caught on its timed calls; an in-process pair has its base measured alone. No timing is asserted.
#include "rnx/runner/bench.hpp"
#include "steer_checks.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct logged_call {
  std::string pid;
  std::string x_address;
  std::string x_digest;
  std::string idx_address;
  std::string idx_digest;
  std::string module;  // the module's name: which side of a pair made the call
};

std::vector<logged_call> read_log(const fs::path& path) {
  std::vector<logged_call> calls;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    logged_call c;
    if (fields >> c.pid >> c.x_address >> c.x_digest >> c.idx_address >> c.idx_digest >> c.module) calls.push_back(c);
  }
  return calls;
}

// Runs the recorder kernel (two processes, samples of several calls; `paired`: paired with itself, both sides in
// the same processes) and returns what its calls logged.
std::vector<logged_call> run_recorder(const std::string& name, bool fresh, rnx::run_result& result,
                                      bool paired = false) {
  const fs::path dir = fs::temp_directory_path() / ("rnx-fresh-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path log = dir / (name + ".log");
  fs::remove(log);
  const fs::path manifest = dir / (name + ".toml");
  {
    std::ofstream out(manifest);
    out << "[project]\nname = \"fresh-tests\"\n[defaults]\nbatch = [2]\ndevice = \"cpu\"\n"
        << "[bench]\nprocesses = 2\nsamples = 6\nmin_samples = 4\nbudget_ms = 30\nwarmup_ms = 10\nthreads = 1\n"
        << "min_sample_ms = 2\n"
        << "[[kernel]]\nname = \"recorder\"\npath = \""
        << (fs::path(RNX_TEST_DATA_DIR) / "kernels" / "call_recorder.py").string() << "\"\n";
  }
  ::setenv("RNX_TEST_CALL_LOG", log.c_str(), 1);
  rnx::runner::bench_options o;
  o.manifests = {manifest};
  if (paired) o.manifests.push_back(manifest);
  o.worker = RNX_TEST_WORKER;
  o.cache_dir = fs::path(RNX_TEST_CACHE_DIR);
  o.fresh_inputs = fresh;
  const auto sides = rnx::runner::run_bench(o);
  REQUIRE(sides.size() == (paired ? 2u : 1u));
  REQUIRE(sides[0].results.size() == 1);
  result = sides[0].results[0];
  std::vector<logged_call> calls = read_log(log);
  fs::remove(log);
  fs::remove(manifest);
  return calls;
}

}  // namespace

TEST_CASE("fresh inputs: no call sees values an earlier call saw, integers included; several sets") {
  rnx::run_result result;
  const std::vector<logged_call> calls = run_recorder("fresh", true, result);
  REQUIRE(result.status == rnx::result_status::ok);
  CHECK(result.inputs == rnx::timed_inputs::fresh);
  CHECK(result.groups.size() == 2);
  // The reference check's call, the warm-up's and the samples' (several calls each, min_sample_ms = 2).
  REQUIRE(calls.size() > 20);
  std::set<std::string> pids;
  std::map<std::string, int> seen_values;
  for (const auto& c : calls) {
    pids.insert(c.pid);
    ++seen_values[c.x_digest];
  }
  CHECK(pids.size() == 2);
  // The timed calls' audit (docs/runner.md) calls the kernel once untimed on each of its four audit sets before
  // the same values go to the audited timed call: at most four pairs a process, none seen more than twice.
  int audited = 0;
  for (const auto& [digest, count] : seen_values) {
    INFO("float input values " << digest << " were given to " << count << " calls");
    CHECK(count <= 2);
    audited += count == 2;
  }
  CHECK(audited <= 4 * static_cast<int>(pids.size()));
  for (const std::string& pid : pids) {
    std::set<std::string> addresses;
    std::map<std::string, std::set<std::string>> index_values;  // per address of the integer input
    for (const auto& c : calls) {
      if (c.pid != pid) continue;
      addresses.insert(c.x_address);
      index_values[c.idx_address].insert(c.idx_digest);
    }
    INFO("process " << pid);
    // Several sets of each input a process (how many distinct addresses each lands at is the allocator's: a
    // freed set's memory is reused by the next, so the two counts may differ by one).
    CHECK(addresses.size() >= 2);
    CHECK(index_values.size() >= 2);
  }
  // The integer input (token-id-like indices) is redrawn by the kernel's own get_inputs() too: no two calls saw the
  // same indices (8 draws from 0..63: a repeat by chance is below one in 10^10 per pair of calls).
  std::map<std::string, int> seen_indices;
  for (const auto& c : calls) ++seen_indices[c.idx_digest];
  int audited_indices = 0;
  for (const auto& [digest, count] : seen_indices) {
    INFO("integer input values " << digest << " were given to " << count << " calls");
    CHECK(count <= 2);
    audited_indices += count == 2;
  }
  CHECK(audited_indices <= 4 * static_cast<int>(pids.size()));
}

TEST_CASE("without fresh inputs every call sees the same values (what the log above would show for reuse)") {
  rnx::run_result result;
  const std::vector<logged_call> calls = run_recorder("same", false, result);
  REQUIRE(result.status == rnx::result_status::ok);
  CHECK(result.inputs == rnx::timed_inputs::same);
  REQUIRE(calls.size() > 20);
  std::map<std::string, std::size_t> seen_values;
  for (const auto& c : calls) ++seen_values[c.x_digest];
  // Every process draws the configuration's one seeded set; the reference check's second set and the work count's
  // one call have a set of their own each.
  REQUIRE(seen_values.size() == 3);
  std::vector<std::size_t> counts;
  for (const auto& [digest, count] : seen_values) counts.push_back(count);
  std::sort(counts.begin(), counts.end());
  CHECK(counts[0] == 1);
  CHECK(counts[1] == 1);
  CHECK(counts[2] == calls.size() - 2);
}

TEST_CASE("a pair with the same inputs takes them from one pool: every input buffer is read by both sides") {
  rnx::run_result result;
  const std::vector<logged_call> calls = run_recorder("paired", true, result, true);
  REQUIRE(result.status == rnx::result_status::ok);
  INFO("pairing reason: " << result.pairing_reason);
  CHECK(result.inputs == rnx::timed_inputs::fresh);
  // The process with the base first timed the base alone before importing the head (the control, docs/runner.md):
  // the verdict's statement that the check ran.
  REQUIRE(result.base_control.has_value());
  CHECK(result.base_control->ratio > 0);
  // Six-sample windows on a loaded machine: a steering check can read noise as a steer and send the pair to
  // process pairing, saying so (runner.bench tests that); no process then holds both sides to compare.
  if (rnx::test::split_by_steer_check(result)) {
    MESSAGE("measured by process pairing: " << result.pairing_reason);
    return;
  }
  CHECK(result.pairing == rnx::pairing_mode::in_process);
  std::vector<std::string> pids;  // in the order they first called (the first ran the checks and work counts)
  for (const auto& c : calls) {
    if (std::find(pids.begin(), pids.end(), c.pid) == pids.end()) pids.push_back(c.pid);
  }
  REQUIRE(pids.size() >= 2);
  // The control paired the base with its twin (the base's file imported once more, a module of its own): some
  // process called it, and it is left out below, where the pair's two sides are counted.
  const auto is_twin = [](const logged_call& c) { return c.module.find("twin") != std::string::npos; };
  CHECK(std::any_of(calls.begin(), calls.end(), is_twin));
  for (const std::string& pid : pids) {
    std::map<std::string, std::set<std::string>> sides_of;  // input address -> the modules that read it
    std::map<std::string, int> seen_values;
    std::set<std::string> modules;
    for (const auto& c : calls) {
      if (c.pid != pid || is_twin(c)) continue;
      sides_of[c.x_address].insert(c.module);
      ++seen_values[c.x_digest];
      modules.insert(c.module);
    }
    INFO("process " << pid);
    REQUIRE(modules.size() == 2);
    const std::string base_module = *std::find_if(
        modules.begin(), modules.end(), [](const std::string& m) { return m.find("base") != std::string::npos; });
    REQUIRE(sides_of.size() >= 2);
    // The first process also checks each side on a second input set and counts its work on a third, once each,
    // drawn under seeds of their own: two buffers per side that only that side reads, values both sides saw once.
    // The process with the base's control timed the base beside its twin first, on a pool of the base's own.
    int control_sets = 0;
    for (const auto& [address, readers] : sides_of) control_sets += readers.size() == 1 && readers.count(base_module);
    const int own_sets = pid == pids.front() ? 4 : 0;
    int one_side = 0;
    for (const auto& [address, readers] : sides_of) one_side += readers.size() == 1;
    // The control's process warmed the base up alone first, so its two sides may size their samples differently
    // and one may take more sets of the shared pool than the other: its buffers are not all read by both.
    if (control_sets <= 2) CHECK(one_side <= own_sets);
    // The first set is the one both sides' reference checks read; every later call got values of its own.
    int repeated = 0;
    for (const auto& [digest, count] : seen_values) {
      INFO("float input values " << digest << " were given to " << count << " calls");
      CHECK(count <= 2);
      repeated += count == 2;
    }
    if (control_sets <= 2) CHECK(repeated <= (pid == pids.front() ? 2 : 1) + 2 * 4);  // + each side's audits
  }
}

TEST_CASE("a kernel that answers wrongly only after many calls is caught on its timed calls") {
  const fs::path dir = fs::temp_directory_path() / ("rnx-audit-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path manifest = dir / "late.toml";
  {
    std::ofstream out(manifest);
    out << "[project]\nname = \"audit-tests\"\n[defaults]\nbatch = [2]\ndevice = \"cpu\"\n"
        << "[bench]\nprocesses = 1\nsamples = 200\nmin_samples = 200\nbudget_ms = 100000\nwarmup_ms = 1\n"
        << "threads = 1\nmin_sample_ms = 0.001\n"
        << "[[kernel]]\nname = \"late\"\npath = \""
        << (fs::path(RNX_TEST_DATA_DIR) / "kernels" / "late_wrong.py").string() << "\"\ninputs = { x = \"B,32\" }\n";
  }
  rnx::runner::bench_options o;
  o.manifests = {manifest};
  o.worker = RNX_TEST_WORKER;
  o.cache_dir = fs::path(RNX_TEST_CACHE_DIR);
  const auto sides = rnx::runner::run_bench(o);
  fs::remove_all(dir);
  REQUIRE(sides.size() == 1);
  REQUIRE(sides[0].results.size() == 1);
  const rnx::run_result& r = sides[0].results[0];
  INFO(r.message);
  CHECK(r.status == rnx::result_status::diverged);
  CHECK(r.message.find("a timed call's output differs from the kernel's own untimed answer") != std::string::npos);
}

TEST_CASE("a kernel that keeps its first answer for any input is diverged on the second checked input set") {
  const fs::path dir = fs::temp_directory_path() / ("rnx-first-answer-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path manifest = dir / "first.toml";
  {
    std::ofstream out(manifest);
    out << "[project]\nname = \"audit-tests\"\n[defaults]\nbatch = [1]\ndevice = \"cpu\"\n"
        << "[bench]\nprocesses = 1\nsamples = 8\nmin_samples = 8\nbudget_ms = 50\nwarmup_ms = 1\nthreads = 1\n"
        << "[[kernel]]\nname = \"first\"\npath = \""
        << (fs::path(RNX_TEST_DATA_DIR) / "kernels" / "first_answer.py").string() << "\"\n";
  }
  rnx::runner::bench_options o;
  o.manifests = {manifest};
  o.worker = RNX_TEST_WORKER;
  o.cache_dir = fs::path(RNX_TEST_CACHE_DIR);
  // With the same inputs at every call too: what it answers for other inputs is wrong whatever the run times.
  for (const bool fresh : {true, false}) {
    o.fresh_inputs = fresh;
    const auto sides = rnx::runner::run_bench(o);
    REQUIRE(sides.size() == 1);
    REQUIRE(sides[0].results.size() == 1);
    const rnx::run_result& r = sides[0].results[0];
    INFO("fresh inputs: " << fresh << "; " << r.message);
    CHECK(r.status == rnx::result_status::diverged);
    CHECK(r.message.find("output on a second input set differs from the float64 eager reference") != std::string::npos);
  }
  fs::remove_all(dir);
}
