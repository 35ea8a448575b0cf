// A small Google Benchmark program for the importer's end-to-end test: two CPU kernels, one with named arguments.
// RNX_TEST_SLOWDOWN=K repeats each kernel's work K times: the deliberate slowdown the test must see.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <numeric>
#include <vector>

namespace {

int slowdown() {
  const char* k = std::getenv("RNX_TEST_SLOWDOWN");
  const int factor = k ? std::atoi(k) : 1;
  return factor > 1 ? factor : 1;
}

void sum_kernel(benchmark::State& state) {
  const std::vector<double> values(static_cast<std::size_t>(state.range(0)), 1.5);
  const int repeat = slowdown();
  for (auto _ : state) {
    for (int r = 0; r < repeat; ++r) benchmark::DoNotOptimize(std::accumulate(values.begin(), values.end(), 0.0));
  }
}
BENCHMARK(sum_kernel)->Arg(4096);

void saxpy_kernel(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0) * state.range(1));
  std::vector<float> x(n, 1.0f), y(n, 2.0f);
  const int repeat = slowdown();
  for (auto _ : state) {
    for (int r = 0; r < repeat; ++r) {
      for (std::size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] + y[i];
      benchmark::ClobberMemory();
    }
  }
}
BENCHMARK(saxpy_kernel)->ArgNames({"n", "batch"})->Args({1024, 4});

}  // namespace

BENCHMARK_MAIN();
