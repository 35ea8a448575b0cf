// The physical bound through real worker processes: every result of rnx bench carries the least time a correct call
// can take (its output's bytes and the device's fastest fill of them), and the verdict refuses to call a side below
// it faster or slower. No timing is asserted: the bound's bytes are exact, and the verdict is judged on the measured
// samples against bounds set far above and far below their median (how far below it a memoizing kernel really lands
// is measured by the command in docs/runner.md, the physical bound).
#include "rnx/runner/bench.hpp"
#include "rnx/stats/verdict.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The bound's runs: a few samples of a 4 MiB softmax.
constexpr const char* bound_bench =
    "processes = 2\nmax_processes = 2\nsamples = 40\nmin_samples = 8\nbudget_ms = 60\nwarmup_ms = 10\n";
// The audit's run: a small softmax, so that the input pool (at most 64 sets) comes round within a few samples and
// the address-keyed memo hits, and 400 samples in each of three processes, so that some audit of each lands after
// it does (the audits' gaps, timed_calls.hpp) whatever the load.
constexpr const char* audit_bench =
    "processes = 3\nmax_processes = 3\nsamples = 400\nmin_samples = 400\nbudget_ms = 100000\nwarmup_ms = 1\n";

fs::path write_manifest(const fs::path& dir, const std::string& name, const std::string& kernel_file, const char* bench,
                        const char* shape) {
  const fs::path path = dir / (name + ".toml");
  std::ofstream out(path);
  out << "[project]\nname = \"physics-tests\"\n[defaults]\nbatch = [1]\ndevice = \"cpu\"\n"
      << "[bench]\n"
      << bench << "threads = 1\n"
      << "[[kernel]]\nname = \"softmax\"\npath = \"" << (fs::path(RNX_TEST_DATA_DIR) / "kernels" / kernel_file).string()
      << "\"\ninputs = { x = \"" << shape << "\" }\n";
  return path;
}

}  // namespace

TEST_CASE("every result carries its physical bound, and a side below it is never faster or slower") {
  const fs::path dir = fs::temp_directory_path() / ("rnx-physics-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  rnx::runner::bench_options o;
  o.manifests = {write_manifest(dir, "head", "memo_softmax.py", bound_bench, "B,1024,1024"),
                 write_manifest(dir, "base", "plain_softmax.py", bound_bench, "B,1024,1024")};
  o.worker = RNX_TEST_WORKER;
  o.cache_dir = fs::path(RNX_TEST_CACHE_DIR);
  // The same inputs at every call (--same-inputs): by default the timed-output audit calls the address-keyed memo
  // diverged (checked at the end), and the bound is what remains for runs measured that way.
  o.fresh_inputs = false;
  const auto sides = rnx::runner::run_bench(o);
  o.fresh_inputs = true;
  o.manifests = {write_manifest(dir, "audited", "memo_softmax.py", audit_bench, "B,16,64")};
  const auto fresh = rnx::runner::run_bench(o);
  fs::remove_all(dir);
  REQUIRE(fresh.size() == 1);
  INFO(fresh[0].results.at(0).message);
  CHECK(fresh[0].results.at(0).status == rnx::result_status::diverged);
  CHECK(fresh[0].results.at(0).message.find("a timed call's output differs from the kernel's own untimed answer") !=
        std::string::npos);
  REQUIRE(sides.size() == 2);
  const rnx::run_result& head = sides[0].results.at(0);
  const rnx::run_result& base = sides[1].results.at(0);
  REQUIRE(head.status == rnx::result_status::ok);
  REQUIRE(base.status == rnx::result_status::ok);
  // A 1024 x 1024 float32 output: 4 MiB a call, on both sides.
  REQUIRE(head.bound);
  REQUIRE(base.bound);
  CHECK(head.bound->output_bytes == 1024 * 1024 * 4);
  CHECK(base.bound->output_bytes == 1024 * 1024 * 4);
  CHECK(head.bound->write_ms > 0);

  auto document = [](const rnx::runner::bench_side& side) {
    rnx::run_document d;
    d.project = "physics-tests";
    d.env = side.env;
    d.results = side.results;
    d.pairing = side.pairing;
    return d;
  };
  const auto median = [](const rnx::run_result& r) {
    std::vector<double> v = r.samples_ms;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  rnx::run_document head_doc = document(sides[0]);
  const rnx::run_document base_doc = document(sides[1]);
  // A bound a thousand times the head's median: the head did not write its output.
  head_doc.results.at(0).bound->write_ms = 1000 * median(head);
  const rnx::verdict_document v = rnx::stats::judge_runs(base_doc, head_doc, rnx::gate_policy{});
  REQUIRE(v.configs.size() == 1);
  const rnx::config_verdict& c = v.configs.front();
  INFO(c.reason);
  CHECK(c.beyond_physics);
  CHECK(c.result != rnx::decision::faster);
  CHECK(c.result != rnx::decision::slower);
  CHECK(c.reason.find("head beyond the physical limit") == 0);
  // A bound a tenth of the median: nothing to refuse, and the reason says nothing of physics.
  head_doc.results.at(0).bound->write_ms = median(head) / 10;
  const rnx::verdict_document w = rnx::stats::judge_runs(base_doc, head_doc, rnx::gate_policy{});
  CHECK_FALSE(w.configs.front().beyond_physics);
  CHECK(w.configs.front().reason.find("physical limit") == std::string::npos);
}
