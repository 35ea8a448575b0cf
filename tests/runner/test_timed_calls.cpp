// The fresh-inputs pool in one process (timed_calls.hpp): declared shapes' redraws rotate normal reservoirs and stay
// exactly i.i.d. standard normal, never repeating a set; other laws are redrawn by the maker. No timing is asserted.
#include "rnx/runner/timed_calls.hpp"

#include <doctest/doctest.h>
#include <torch/cuda.h>

#include <cmath>
#include <memory>
#include <vector>

namespace {

// A call that does nothing: what the pool binds its sets to in the tests below.
class idle_call final : public rnx::runner::bound_call {
 public:
  void invoke() override {}
  std::vector<at::Tensor> outputs() override { return {}; }
  std::unique_ptr<bound_call> with_inputs(const std::vector<at::Tensor>&) override {
    return std::make_unique<idle_call>();
  }
};

std::vector<at::Tensor> normal_set_on(at::Device device, std::uint64_t seed) {
  at::Generator gen = rnx::runner::seeded_generator(device, seed);
  const auto on = at::TensorOptions().device(device);
  return {at::randn({40000}, gen, on), at::randn({2, 3000}, gen, on).to(at::kHalf)};
}

std::vector<at::Tensor> normal_set(std::uint64_t seed) { return normal_set_on(at::Device(at::kCPU), seed); }

// Every redraw on `device` is fresh, i.i.d. N(0, 1) in the input's own dtype, and written into the set's memory.
void check_rotation(at::Device device) {
  idle_call call;
  auto make = [device](std::uint64_t seed) { return normal_set_on(device, seed); };
  rnx::runner::fresh_inputs pool(call, make(1), make, 7, {}, rnx::runner::input_law::standard_normal);
  REQUIRE(pool.rotates());
  std::vector<std::vector<float>> earlier;  // the large input's values of every redraw so far
  const void* address = nullptr;
  // Past several reservoir draws, so the test covers values from renewed sources too.
  const int redraws = 4 * static_cast<int>(rnx::runner::fresh_inputs::reservoir_life);
  for (int r = 0; r < redraws; ++r) {
    pool.prepare_sample(1);
    const std::vector<at::Tensor>& set = *pool.inputs_of(0);
    if (r == 0) address = set[0].data_ptr();
    if (r == 2) CHECK(set[0].data_ptr() == address);  // two sets in turn: the third redraw writes the first's memory
    CHECK((set[1].scalar_type() == at::kHalf));       // converted into the input's own dtype
    CHECK(set[0].device() == device);
    for (const at::Tensor& t : set) {
      const at::Tensor x = t.to(at::kDouble);
      const double n = static_cast<double>(x.numel());
      // Five standard errors: the mean of n normals, their variance, the share within one standard deviation.
      CHECK(std::abs(x.mean().item<double>()) < 5 / std::sqrt(n));
      CHECK(std::abs(x.var().item<double>() - 1) < 5 * std::sqrt(2 / n));
      const double within = x.abs().lt(1).to(at::kDouble).mean().item<double>();
      CHECK(std::abs(within - 0.682689) < 5 * std::sqrt(0.682689 * 0.317311 / n));
    }
    const at::Tensor now = set[0].to(at::kCPU).contiguous();
    std::vector<float> values(now.data_ptr<float>(), now.data_ptr<float>() + now.numel());
    for (const auto& before : earlier) {
      // No earlier redraw's values, not even in part: the share of equal elements stays at chance (none).
      std::size_t equal = 0;
      for (std::size_t i = 0; i < values.size(); ++i) equal += values[i] == before[i];
      CHECK(equal < 8);
    }
    earlier.push_back(std::move(values));
  }
  CHECK(pool.redraws() == redraws);
  // Consecutive redraws are independent draws: their correlation is within chance of zero.
  const double n = static_cast<double>(earlier.front().size());
  for (std::size_t r = 1; r < earlier.size(); ++r) {
    double dot = 0;
    for (std::size_t i = 0; i < earlier[r].size(); ++i) dot += double{earlier[r][i]} * earlier[r - 1][i];
    CHECK(std::abs(dot / n) < 5 / std::sqrt(n));
  }
}

}  // namespace

TEST_CASE("declared shapes' redraws rotate normal reservoirs: every set fresh, still i.i.d. N(0, 1), in place") {
  check_rotation(at::Device(at::kCPU));
}

TEST_CASE("the rotation on a CUDA device: the same law, in the device's own memory") {
  if (!torch::cuda::is_available()) {
    MESSAGE("skipped: no CUDA device (tests/device runs this on a GPU)");
    return;
  }
  check_rotation(at::Device(at::kCUDA, 0));
}

TEST_CASE("inputs of the file's own law, or not floating-point, are redrawn by the maker") {
  idle_call call;
  rnx::runner::fresh_inputs any(call, normal_set(1), normal_set, 7);
  CHECK_FALSE(any.rotates());
  auto with_indices = [](std::uint64_t seed) {
    at::Generator gen = rnx::runner::seeded_generator(at::Device(at::kCPU), seed);
    return std::vector<at::Tensor>{at::randn({64}, gen), at::randint(0, 10, {64}, gen)};
  };
  rnx::runner::fresh_inputs integers(call, with_indices(1), with_indices, 7, {},
                                     rnx::runner::input_law::standard_normal);
  CHECK_FALSE(integers.rotates());
  // Reservoirs beyond the pool's byte limit: the maker again.
  rnx::runner::fresh_inputs large(call, normal_set(1), normal_set, 7, {.max_bytes = 1024, .max_sets = 4},
                                  rnx::runner::input_law::standard_normal);
  CHECK_FALSE(large.rotates());
  large.prepare_sample(1);
  CHECK(large.redraws() == 1);
}
