// The runner's reusable in-process API: inputs, kernel loading, reference comparison (what verify/ builds on).
#include "rnx/common/error.hpp"
#include "rnx/common/manifest.hpp"
#include "rnx/runner/kernel.hpp"
#include "rnx/runner/timing.hpp"
#include "rnx/runner/tolerance.hpp"
#include "python_spec.hpp"

#include <doctest/doctest.h>

#include <filesystem>

namespace fs = std::filesystem;

using rnx::test::python_spec;

TEST_CASE("inputs are seeded, fresh, identical across dtypes, and shaped by the batch") {
  std::vector<rnx::input_spec> specs(2);
  specs[0].name = "x";
  specs[0].dims = rnx::parse_shape("B,3,5", "test");
  specs[1].name = "w";
  specs[1].dims = rnx::parse_shape("5", "test");
  auto a = rnx::runner::make_inputs(specs, 4, at::kFloat, at::kCPU, 42);
  auto b = rnx::runner::make_inputs(specs, 4, at::kFloat, at::kCPU, 42);
  auto h = rnx::runner::make_inputs(specs, 4, at::kHalf, at::kCPU, 42);
  auto c = rnx::runner::make_inputs(specs, 4, at::kFloat, at::kCPU, 43);
  REQUIRE(a.size() == 2);
  CHECK(a[0].sizes() == at::IntArrayRef({4, 3, 5}));
  CHECK(a[1].sizes() == at::IntArrayRef({5}));
  CHECK(at::equal(a[0], b[0]));
  CHECK(a[0].data_ptr() != b[0].data_ptr());  // fresh tensors, not shared
  CHECK((h[0].scalar_type() == at::kHalf));   // parenthesised: doctest cannot print c10::ScalarType with g++ 13
  CHECK(at::allclose(h[0].to(at::kFloat), a[0], 1e-3, 1e-3));
  CHECK_FALSE(at::equal(a[0], c[0]));
  CHECK(rnx::runner::config_seed(0, "softmax", 8) == rnx::runner::config_seed(0, "softmax", 8));
  CHECK(rnx::runner::config_seed(0, "softmax", 8) != rnx::runner::config_seed(0, "softmax", 1));
}

TEST_CASE("compare_outputs follows torch.testing's rule and explains a mismatch") {
  at::Tensor ref = at::arange(6, at::kDouble);
  at::Tensor close = ref.to(at::kFloat) + 1e-6;
  auto ok = rnx::runner::compare_outputs({close}, {ref}, rnx::default_tolerance("float32"));
  CHECK(ok.ok);
  CHECK(ok.max_abs_err == doctest::Approx(1e-6).epsilon(0.01));
  at::Tensor off = ref.to(at::kFloat).clone();
  off[3] = 3.5;
  auto bad = rnx::runner::compare_outputs({off}, {ref}, {1e-3, 1e-3});
  CHECK_FALSE(bad.ok);
  CHECK(bad.message ==
        "output 0: 1 of 6 elements outside rtol=0.001, atol=0.001; first at flat index 3: got 3.5, "
        "expected 3 (max abs err 0.5, rel err 0.1)");
  auto shape = rnx::runner::compare_outputs({ref.reshape({2, 3})}, {ref}, {1e-3, 1e-3});
  CHECK(shape.message == "output 0 has shape [2, 3] but the reference has [6]");
  auto count = rnx::runner::compare_outputs({ref, ref}, {ref}, {1e-3, 1e-3});
  CHECK(count.message == "the kernel returned 2 output(s) but the float64 reference returned 1");
  at::Tensor nan = ref.to(at::kFloat).clone();
  nan[0] = NAN;
  CHECK_FALSE(rnx::runner::compare_outputs({nan}, {ref}, {1, 1}).ok);
}

TEST_CASE("the yardstick: one outlier never sets the robust figure; input rounding caps it; NaN never widens it") {
  using rnx::runner::yard_basis;
  at::Tensor ref = at::linspace(1, 2, 1000, at::kDouble);
  at::Tensor out = ref + 1e-6;  // every element off by 1e-6: rounding-like
  out[500] += 1e-2;             // and one element far off
  out[501] = NAN;
  auto y = rnx::runner::measure_yardstick({out}, {ref}, at::kFloat);
  CHECK(y.elements == 999);  // the NaN is not counted
  CHECK(y.largest == doctest::Approx(1e-2 + 1e-6));
  CHECK(y.typical == doctest::Approx(1e-6).epsilon(1e-3));
  CHECK(rnx::runner::yard_value(y, yard_basis::trusted_reference) == y.largest);
  CHECK(rnx::runner::yard_value(y, yard_basis::self_check) == y.typical);
  const rnx::tolerance base = rnx::default_tolerance("float32");
  auto wide = rnx::runner::widen(base, y, yard_basis::self_check);
  CHECK(wide.rtol == base.rtol);
  CHECK(wide.atol == base.atol);  // 4e-6 is below float32's 1e-5
  auto r = rnx::runner::check_within({out}, {ref}, base, y, yard_basis::self_check);
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("2 of 1000 elements outside rtol=1.3e-06, atol=1e-05") != std::string::npos);
  CHECK(r.message.find("; tolerance rtol=1.3e-06, atol=1e-05 (the base tolerance; 4x the eager float32 computation's "
                       "99th-percentile error against float64, 1e-06 is below its atol)") != std::string::npos);
  // A lossy path: every element off by 1e-3 while rounding the inputs moves the result by 1e-8 at most.
  at::Tensor lossy = ref + 1e-3;
  const std::vector<at::Tensor> moved = {ref + 1e-8};
  auto capped = rnx::runner::measure_yardstick({lossy}, {ref}, at::kFloat, &moved);
  REQUIRE(capped.input_rounding.has_value());
  CHECK(rnx::runner::yard_value(capped, yard_basis::self_check) == doctest::Approx(256 * 1e-8));
  auto lossy_check = rnx::runner::check_within({lossy}, {ref}, base, capped, yard_basis::self_check);
  CHECK_FALSE(lossy_check.ok);
  CHECK(lossy_check.message.find("counted only up to 256x the 1e-08 that rounding the inputs to float32 moves the "
                                 "float64 result (2.56e-06)") != std::string::npos);
  // The verifier's basis trusts its reference: its largest error is the yardstick, so the same output passes.
  CHECK(rnx::runner::check_within({lossy}, {ref}, base, capped, yard_basis::trusted_reference).ok);
  // Where TF32 is allowed (a float32 convolution on CUDA), the trusted reference's exact float32 algorithm does not
  // set the yardstick alone: a candidate whose library rounds products to TF32 is granted that rounding's error.
  const std::vector<at::Tensor> moved_tf32 = {ref + 2e-4};
  at::Tensor tf32_like = ref + 5e-4;
  auto exact_ref = rnx::runner::measure_yardstick({ref + 1e-7}, {ref}, at::kFloat, &moved_tf32, true);
  CHECK(rnx::runner::yard_value(exact_ref, yard_basis::trusted_reference) == doctest::Approx(2e-4));
  CHECK(rnx::runner::check_within({tf32_like}, {ref}, base, exact_ref, yard_basis::trusted_reference).ok);
  // Without TF32 the same measurements grant only the reference's own error, and four times the TF32 rounding
  // (a bfloat16-sized error) is beyond it either way.
  auto no_tf32 = rnx::runner::measure_yardstick({ref + 1e-7}, {ref}, at::kFloat, &moved_tf32, false);
  CHECK(rnx::runner::yard_value(no_tf32, yard_basis::trusted_reference) == doctest::Approx(1e-7));
  auto tf32_fail = rnx::runner::check_within({tf32_like}, {ref}, base, no_tf32, yard_basis::trusted_reference);
  CHECK_FALSE(tf32_fail.ok);
  CHECK_FALSE(rnx::runner::check_within({ref + 1e-3}, {ref}, base, exact_ref, yard_basis::trusted_reference).ok);
  auto told = rnx::runner::check_within({ref + 1e-3}, {ref}, base, exact_ref, yard_basis::trusted_reference);
  CHECK(told.message.find("or the 0.0002 that rounding the inputs to TF32 (allowed for float32 on CUDA) moves the "
                          "float64 result, the larger") != std::string::npos);
  // Which operator families a computation dispatches decides whether TF32's rounding can apply at all.
  at::Tensor img = at::randn({1, 2, 8, 8}), weight = at::randn({3, 2, 3, 3}), m = at::randn({8, 8});
  const auto conv = rnx::runner::families_during([&] { (void)at::conv2d(img, weight); });
  CHECK(conv.convolution);
  CHECK_FALSE(conv.matmul);
  const auto mm = rnx::runner::families_during([&] { (void)at::matmul(m, m); });
  CHECK(mm.matmul);
  CHECK_FALSE(mm.convolution);
  const auto softmax = rnx::runner::families_during([&] { (void)at::softmax(m, -1).cumsum(0); });
  const auto running_max = rnx::runner::families_during([&] { (void)at::cummax(m, 0); });  // "mm" in its name only
  CHECK_FALSE(running_max.matmul);
  CHECK_FALSE(softmax.convolution);
  CHECK_FALSE(softmax.matmul);
  CHECK_FALSE(rnx::runner::tf32_reaches(conv, at::kFloat, at::kCPU));  // TF32 is a CUDA rounding
  CHECK_FALSE(rnx::runner::tf32_reaches(softmax, at::kFloat, at::Device(at::kCUDA, 0)));
  // Perturbed inputs: float64, deterministic, moved by at most the arithmetic's eps (float16's here).
  at::Tensor x = at::randn({64}, at::kFloat);
  const double half_eps = rnx::runner::arithmetic_eps(at::kHalf, at::kCPU);
  CHECK(half_eps == 9.765625e-4);
  auto p1 = rnx::runner::rounding_perturbed({x}, half_eps, 3);
  auto p2 = rnx::runner::rounding_perturbed({x}, half_eps, 3);
  CHECK((p1[0].scalar_type() == at::kDouble));
  CHECK(at::equal(p1[0], p2[0]));
  at::Tensor rel = ((p1[0] - x.to(at::kDouble)) / x.to(at::kDouble)).abs();
  CHECK(rel.max().item<double>() <= 9.765625e-4);
  CHECK(rel.max().item<double>() > 0);
  // float32 keeps its own eps off CUDA; TF32 is a CUDA matter only.
  CHECK(rnx::runner::arithmetic_eps(at::kFloat, at::kCPU) == doctest::Approx(1.1920929e-7));
  CHECK_FALSE(rnx::runner::tf32_allowed(at::kFloat, at::kCPU));
  // A yardstick measured at TF32's step says so.
  auto tf32 = rnx::runner::measure_yardstick({lossy}, {ref}, at::kFloat, &moved, true);
  CHECK(rnx::runner::describe(base, tf32, yard_basis::self_check)
            .find("rounding the inputs to TF32 (allowed for "
                  "float32 on CUDA)") != std::string::npos);
}

TEST_CASE("the self-check's tail allowance: a few elements of a large output a little further, never one far off") {
  using rnx::runner::yard_basis;
  const rnx::tolerance base = rnx::default_tolerance("float16");  // rtol 1e-3, atol 1e-5
  at::Tensor ref = at::zeros({20000}, at::kDouble);
  at::Tensor out = ref.clone();
  out[7] = 5e-5;  // 5x atol: one element of 20,000 (0.005%), within 16x
  out[9] = 1e-4;  // 10x atol
  auto y = rnx::runner::measure_yardstick({out}, {ref}, at::kHalf);
  auto tail = rnx::runner::check_within({out}, {ref}, base, y, yard_basis::self_check);
  CHECK(tail.ok);
  CHECK(tail.message ==
        "2 of 20000 elements beyond the tolerance, within the tail allowance (16x atol for at most "
        "0.01% of the elements)");
  // The verifier's basis has no tail allowance: against an exact reference the same output fails.
  auto exact = rnx::runner::measure_yardstick({ref}, {ref}, at::kHalf);
  CHECK_FALSE(rnx::runner::check_within({out}, {ref}, base, exact, yard_basis::trusted_reference).ok);
  // Beyond 16x atol: diverged.
  at::Tensor far = out.clone();
  far[11] = 1e-3;
  CHECK_FALSE(rnx::runner::check_within({far}, {ref}, base, y, yard_basis::self_check).ok);
  // More than 0.01% of the elements: diverged.
  at::Tensor many = out.clone();
  many.narrow(0, 100, 3) = 5e-5;
  CHECK_FALSE(rnx::runner::check_within({many}, {ref}, base, y, yard_basis::self_check).ok);
  // A small output gets no allowance: one element 5x off is diverged.
  at::Tensor small_ref = at::zeros({1000}, at::kDouble);
  at::Tensor small = small_ref.clone();
  small[3] = 5e-5;
  auto small_y = rnx::runner::measure_yardstick({small}, {small_ref}, at::kHalf);
  CHECK_FALSE(rnx::runner::check_within({small}, {small_ref}, base, small_y, yard_basis::self_check).ok);
  // NaN never passes.
  at::Tensor nan = out.to(at::kFloat).clone();
  nan[13] = NAN;
  CHECK_FALSE(rnx::runner::check_within({nan}, {ref}, base, y, yard_basis::self_check).ok);
}

TEST_CASE("a Python kernel loads, binds, matches its float64 reference and is timed") {
  rnx::kernel_spec spec =
      python_spec("double", fs::path(RNX_TEST_DATA_DIR) / "kernels" / "double.py", {"B,32"}, "", {"x"});
  auto k = rnx::runner::load_kernel(spec);
  CHECK(k->kind() == rnx::runner::kernel_form::function);
  auto inputs = k->make_inputs(2, at::kFloat, at::kCPU, 7);
  auto call = k->prepare("eager", inputs, at::kFloat, at::kCPU, 7);
  auto out = call->outputs();
  REQUIRE(out.size() == 1);
  CHECK(at::equal(out[0], inputs[0] * 2));
  auto check = rnx::runner::compare_outputs(out, k->reference(inputs, 7), rnx::default_tolerance("float32"));
  CHECK(check.ok);
  rnx::runner::timing_options t;
  t.warmup_ms = 5;
  t.budget_ms = 10;
  t.min_samples = 3;
  t.max_samples = 5;
  auto timing = rnx::runner::measure(*call, at::kCPU, t);
  CHECK(timing.samples_ms.size() >= 3);
  CHECK(timing.samples_ms.size() <= 5);
  CHECK(timing.calls_per_sample >= 1);
  CHECK_THROWS_AS(k->prepare("tensorrt", inputs, at::kFloat, at::kCPU, 7), rnx::runner::runtime_unavailable);
}

TEST_CASE("kernel forms: each name round-trips, the loader's two forms are the only ones a .py file gives") {
  using rnx::runner::kernel_form;
  for (kernel_form f : {kernel_form::function, kernel_form::kernelbench, kernel_form::torchscript, kernel_form::cpp,
                        kernel_form::cuda}) {
    CHECK(rnx::runner::kernel_form_from_string(rnx::runner::to_string(f)) == f);
  }
  CHECK_FALSE(rnx::runner::kernel_form_from_string("python").has_value());
  CHECK_FALSE(rnx::runner::kernel_form_from_string("").has_value());
}

TEST_CASE("a KernelBench file gets its inputs from get_inputs() with the configured batch, and Model as reference") {
  rnx::kernel_spec spec = python_spec("kb", fs::path(RNX_TEST_DATA_DIR) / "kernels" / "kb_relu.py", {});
  auto k = rnx::runner::load_kernel(spec);
  CHECK(k->kind() == rnx::runner::kernel_form::kernelbench);
  auto inputs = k->make_inputs(3, at::kFloat, at::kCPU, 11);
  REQUIRE(inputs.size() == 1);
  CHECK(inputs[0].sizes() == at::IntArrayRef({3, 32}));
  auto call = k->prepare("eager", inputs, at::kFloat, at::kCPU, 11);
  // Same seed, same weights: ModelNew (a copy of Model) matches the float64 Model.
  CHECK(rnx::runner::compare_outputs(call->outputs(), k->reference(inputs, 11), {1e-5, 1e-5}).ok);
}

TEST_CASE("rehome_state moves both sides' weights to new memory, values and outputs unchanged") {
  rnx::kernel_spec spec = python_spec("kb", fs::path(RNX_TEST_DATA_DIR) / "kernels" / "kb_relu.py", {});
  rnx::runner::load_options first_options;
  first_options.module_prefix = "rnx_rehome_a_";
  rnx::runner::load_options second_options;
  second_options.module_prefix = "rnx_rehome_b_";
  auto first_kernel = rnx::runner::load_kernel(spec, first_options);
  auto second_kernel = rnx::runner::load_kernel(spec, second_options);
  auto inputs = first_kernel->make_inputs(3, at::kFloat, at::kCPU, 11);
  auto first = first_kernel->prepare("eager", inputs, at::kFloat, at::kCPU, 11);
  auto second = second_kernel->prepare("eager", inputs, at::kFloat, at::kCPU, 11);
  const std::vector<at::Tensor> before = first->outputs();
  std::vector<at::Tensor> state = first->state();
  REQUIRE_FALSE(state.empty());  // the Linear's weight and bias
  std::vector<const void*> old_addresses;
  std::vector<at::Tensor> old_values;
  for (const auto& t : state) {
    old_addresses.push_back(t.data_ptr());
    old_values.push_back(t.detach().clone());
  }
  CHECK(rnx::runner::rehome_state(*first, *second) == state.size() + second->state().size());
  const std::vector<at::Tensor> after_state = first->state();
  REQUIRE(after_state.size() == state.size());
  for (std::size_t i = 0; i < state.size(); ++i) {
    CHECK(after_state[i].data_ptr() != old_addresses[i]);
    CHECK(at::equal(after_state[i], old_values[i]));
  }
  const std::vector<at::Tensor> after = first->outputs();
  REQUIRE(after.size() == before.size());
  CHECK(at::equal(after[0], before[0]));
  // A function has no state: nothing moves.
  rnx::kernel_spec fn =
      python_spec("double", fs::path(RNX_TEST_DATA_DIR) / "kernels" / "double.py", {"B,4"}, "", {"x"});
  auto fn_kernel = rnx::runner::load_kernel(fn);
  auto fn_inputs = fn_kernel->make_inputs(2, at::kFloat, at::kCPU, 3);
  auto fn_call = fn_kernel->prepare("eager", fn_inputs, at::kFloat, at::kCPU, 3);
  CHECK(fn_call->state().empty());
}

TEST_CASE("loading errors name the kernel and file") {
  rnx::kernel_spec spec = python_spec("nodecl", fs::path(RNX_TEST_DATA_DIR) / "kernels" / "double.py", {});
  try {
    rnx::runner::load_kernel(spec);
    FAIL("expected an error");
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::kernel_failed);
    CHECK(std::string(e.what()) == "kernel \"nodecl\": " + spec.path +
                                       " declares no inputs; add inputs = { x = \"B,1024\" } to its [[kernel]] (only "
                                       "KernelBench files with get_inputs() may omit them)");
  }
  CHECK_THROWS_AS(rnx::runner::parse_dtype("int8"), rnx::error);
}
