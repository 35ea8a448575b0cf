// The physical bound through real worker processes: every result of rnx bench carries the least time a correct call
// can take (its output's bytes and the device's fastest fill of them); a kernel that hands back a kept result is
// below it, and the verdict then refuses to call the change faster. No timing is asserted: whether the honest kernel
// is above its bound is not checked here (bench/ measures it), only the memoizing one's distance below it, which is
// orders of magnitude.
#include "rnx/runner/bench.hpp"
#include "rnx/stats/verdict.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

fs::path write_manifest(const fs::path& dir, const std::string& name, const std::string& kernel_file) {
  const fs::path path = dir / (name + ".toml");
  std::ofstream out(path);
  out << "[project]\nname = \"physics-tests\"\n[defaults]\nbatch = [1]\ndevice = \"cpu\"\n"
      << "[bench]\nprocesses = 2\nmax_processes = 2\nsamples = 40\nmin_samples = 8\nbudget_ms = 60\nwarmup_ms = 10\n"
      << "threads = 1\n"
      << "[[kernel]]\nname = \"softmax\"\npath = \"" << (fs::path(RNX_TEST_DATA_DIR) / "kernels" / kernel_file).string()
      << "\"\ninputs = { x = \"B,1024,1024\" }\n";
  return path;
}

}  // namespace

TEST_CASE("a kernel that hands back a kept result is beyond the physical bound, and never faster") {
  const fs::path dir = fs::temp_directory_path() / ("rnx-physics-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  rnx::runner::bench_options o;
  o.manifests = {write_manifest(dir, "head", "memo_softmax.py"), write_manifest(dir, "base", "plain_softmax.py")};
  o.worker = RNX_TEST_WORKER;
  o.cache_dir = fs::path(RNX_TEST_CACHE_DIR);
  const auto sides = rnx::runner::run_bench(o);
  fs::remove_all(dir);
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
  const rnx::verdict_document v = rnx::stats::judge_runs(document(sides[1]), document(sides[0]), rnx::gate_policy{});
  REQUIRE(v.configs.size() == 1);
  const rnx::config_verdict& c = v.configs.front();
  INFO(c.reason);
  CHECK(c.beyond_physics);
  CHECK(c.result != rnx::decision::faster);
  CHECK(c.result != rnx::decision::slower);
  CHECK(c.reason.find("head beyond the physical limit") == 0);
}
