// Times the verdict of a 48-configuration run (100 samples a side), flat and with 3 process groups, against a
// new baseline each time and against one kept baseline.
// Prints a table and writes bench/results/stats_bench.json (or the path given as argv[1]).
#include "rnx/common/json.hpp"
#include "rnx/stats/verdict.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace {

rnx::run_document synthetic_run(std::uint64_t seed, double change, bool grouped) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.03);
  rnx::run_document run;
  run.project = "bench";
  run.env.env_id = "bench";
  run.env.device = "cpu";
  const char* runtimes[] = {"eager", "compile", "torchscript"};
  const char* dtypes[] = {"float32", "float16"};
  for (int kernel = 0; kernel < 4; ++kernel) {
    for (const char* runtime : runtimes) {
      for (const char* dtype : dtypes) {
        for (std::int64_t batch : {1, 8}) {
          rnx::run_result r;
          r.kernel = "k" + std::to_string(kernel);
          r.runtime = runtime;
          r.dtype = dtype;
          r.batch = batch;
          for (int i = 0; i < 100; ++i) r.samples_ms.push_back((1.0 + kernel) * change * std::exp(noise(rng)));
          if (grouped) r.groups = {34, 33, 33};
          run.results.push_back(std::move(r));
        }
      }
    }
  }
  return run;
}

double median_ms(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path out = argc > 1 ? argv[1] : "bench/results/stats_bench.json";
  boost::json::object report;
  std::printf("%-28s %8s %12s %12s %12s\n", "case", "configs", "median ms", "min ms", "max ms");
  // "new baseline": every repetition judges against a baseline never seen before, so both sides are drawn;
  // "kept baseline": the same baseline every time, whose draws the statistics keep (a service judging many
  // pull requests against one baseline), so only the head side is drawn.
  for (bool grouped : {false, true}) {
    for (bool kept : {false, true}) {
      const auto head = synthetic_run(2, 1.03, grouped);
      const auto kept_base = synthetic_run(1, 1.0, grouped);
      std::vector<double> times;
      std::size_t slower = 0;
      for (int rep = 0; rep < 30; ++rep) {
        const auto base = kept ? kept_base : synthetic_run(1000 + static_cast<std::uint64_t>(rep), 1.0, grouped);
        const auto t0 = std::chrono::steady_clock::now();
        const auto v = rnx::stats::judge_runs(base, head, {});
        const auto t1 = std::chrono::steady_clock::now();
        times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        slower = static_cast<std::size_t>(std::count_if(
            v.configs.begin(), v.configs.end(), [](const auto& c) { return c.result == rnx::decision::slower; }));
      }
      const std::string name =
          std::string(grouped ? "3 processes" : "flat") + (kept ? ", kept baseline" : ", new baseline");
      std::printf("%-28s %8zu %12.3f %12.3f %12.3f\n", name.c_str(), head.results.size(), median_ms(times),
                  *std::min_element(times.begin(), times.end()), *std::max_element(times.begin(), times.end()));
      report[std::string(grouped ? "grouped" : "flat") + (kept ? "_kept_baseline" : "_new_baseline")] = {
          {"configs", head.results.size()}, {"samples_per_side", 100},     {"resamples", 2000},
          {"median_ms", median_ms(times)},  {"repetitions", times.size()}, {"slower_configs", slower}};
    }
  }
  std::filesystem::create_directories(out.parent_path());
  std::ofstream(out) << rnx::json::serialize(report, true);
  std::printf("wrote %s\n", out.string().c_str());
  return 0;
}
