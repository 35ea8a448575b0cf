// The work of one call: FLOPs as torch's FLOP counter counts them against hand formulas, bytes with each distinct
// storage once, the manifest's declared work winning over the count, and the rates the summary shows. No timing.
#include "rnx/common/error.hpp"
#include "rnx/common/manifest.hpp"
#include "rnx/runner/kernel.hpp"
#include "rnx/common/speed_of_light.hpp"
#include "python_spec.hpp"
#include "work.hpp"

#include <c10/core/GradMode.h>
#include <doctest/doctest.h>

#include <filesystem>
#include <map>

namespace fs = std::filesystem;

namespace {

// An entry of tests/runner/data/kernels/work.py with inputs of these shapes.
rnx::kernel_spec work_spec(const std::string& entry, const std::vector<std::string>& shapes) {
  // The parameters of work.py's entries: inputs are bound by name.
  static const std::map<std::string, std::vector<std::string>> parameters = {{"conv2d", {"x", "w"}},
                                                                             {"attention_explicit", {"q", "k", "v"}},
                                                                             {"attention_sdpa", {"q", "k", "v"}},
                                                                             {"layer_norm", {"x"}},
                                                                             {"relu", {"x"}},
                                                                             {"gelu_tanh", {"x"}},
                                                                             {"row_sum", {"x"}},
                                                                             {"scale_in_place", {"x"}}};
  const auto it = parameters.find(entry);
  return rnx::test::python_spec(entry, fs::path(RNX_TEST_DATA_DIR) / "kernels" / "work.py", shapes, entry,
                                it == parameters.end() ? std::vector<std::string>{} : it->second);
}

// The work the runner counts for `spec` at `batch` in `dtype` on its own inputs.
rnx::work_info counted(const rnx::kernel_spec& spec, std::int64_t batch, at::ScalarType dtype = at::kFloat) {
  c10::NoGradGuard no_grad;  // as in the worker
  auto k = rnx::runner::load_kernel(spec);
  auto inputs = k->make_inputs(batch, dtype, at::kCPU, 7);
  auto work = k->count_work(inputs, dtype, at::kCPU, 7);
  REQUIRE(work);
  CHECK(work->source == rnx::work_source::counted);
  return *work;
}

// The work counted over explicit inputs (the same tensor twice, ...).
rnx::work_info counted_on(const rnx::kernel_spec& spec, const std::vector<at::Tensor>& inputs) {
  c10::NoGradGuard no_grad;
  auto k = rnx::runner::load_kernel(spec);
  auto work = k->count_work(inputs, inputs.front().scalar_type(), at::kCPU, 7);
  REQUIRE(work);
  return *work;
}

}  // namespace

TEST_CASE("a GEMM counts 2*M*N*K FLOPs and reads A and B and writes C once, per dtype") {
  const auto spec = work_spec("gemm", {"B,8,16", "16,32"});  // M = B*8, K = 16, N = 32
  const rnx::work_info f32 = counted(spec, 4);
  CHECK(*f32.flops == 2 * (4 * 8) * 32 * 16);
  CHECK(*f32.bytes == 4 * (4 * 8 * 16 + 16 * 32 + 4 * 8 * 32));
  const rnx::work_info f16 = counted(spec, 4, at::kHalf);
  CHECK(*f16.flops == *f32.flops);
  CHECK(*f16.bytes == *f32.bytes / 2);
}

TEST_CASE("a batched GEMM counts 2*B*M*N*K") {
  CHECK(*counted(work_spec("bmm", {"B,5,7", "B,7,11"}), 3).flops == 2 * 3 * 5 * 11 * 7);
}

TEST_CASE("conv2d counts 2 * output elements * Cin*kh*kw") {
  // N = 2, Cin = 3, 10x12 input, Cout = 4, 3x3 kernel, no padding: an 8x10 output.
  const rnx::work_info w = counted(work_spec("conv2d", {"B,3,10,12", "4,3,3,3"}), 2);
  CHECK(*w.flops == 2 * (2 * 4 * 8 * 10) * (3 * 3 * 3));
  CHECK(*w.bytes == 4 * (2 * 3 * 10 * 12 + 4 * 3 * 3 * 3 + 2 * 4 * 8 * 10));
}

TEST_CASE("attention counts its two products, 4*B*H*L*S*E, and nothing for scaling and softmax") {
  // B = 2, H = 4, L = 8 queries, S = 10 keys, E = 16.
  const std::vector<std::string> shapes = {"B,4,8,16", "B,4,10,16", "B,4,10,16"};
  const std::int64_t products = std::int64_t{4} * 2 * 4 * 8 * 10 * 16;
  CHECK(*counted(work_spec("attention_explicit", shapes), 2).flops == products);
  // scaled_dot_product_attention's CPU kernel is not in torch's table; rnx counts it with the counter's own formula.
  CHECK(*counted(work_spec("attention_sdpa", shapes), 2).flops == products);
}

TEST_CASE("layer_norm counts 0 FLOPs: a norm's work is declared in rnx.toml, and the declaration wins") {
  const auto spec = work_spec("layer_norm", {"B,64,100"});
  const rnx::work_info norm = counted(spec, 2);
  CHECK(*norm.flops == 0);
  CHECK(*norm.bytes == 4 * 2 * (2 * 64 * 100));

  const rnx::manifest m = rnx::parse_manifest(R"([project]
name = "demo"
[[kernel]]
name = "layer_norm"
path = "work.py"
inputs = { x = "B,64,100" }
flops = "8*B*64*100"
)",
                                              "rnx.toml", ".");
  const auto declared = rnx::runner::detail::declared_work(m.kernels[0], 2, m.source);
  REQUIRE(declared);
  CHECK(declared->source == rnx::work_source::declared);
  CHECK(*declared->flops == 8 * 2 * 64 * 100);
  CHECK_FALSE(declared->bytes);
  // The declared key wins; the one left out is still the count's.
  const rnx::work_info carried = rnx::runner::detail::with_counted(declared, norm);
  CHECK(carried.source == rnx::work_source::declared);
  CHECK(*carried.flops == 8 * 2 * 64 * 100);
  CHECK(*carried.bytes == *norm.bytes);
  // Nothing declared: the count as it is.
  CHECK_FALSE(rnx::runner::detail::declared_work(work_spec("layer_norm", {"B,4"}), 2, "rnx.toml"));
  CHECK(rnx::runner::detail::with_counted(std::nullopt, norm).source == rnx::work_source::counted);
}

TEST_CASE("transcendental elementwise functions are counted by element, and name the bound where the bytes bind") {
  const rnx::work_info gelu = counted(work_spec("gelu_tanh", {"B,1000"}), 3);
  CHECK(*gelu.flops == 0);
  CHECK(*gelu.elementwise == 3 * 1000);  // one tanh an element; the multiplies and adds are not transcendental
  CHECK(*counted(work_spec("relu", {"B,1000"}), 3).elementwise == 0);
  const std::map<std::string, double> peaks{{std::string(rnx::copy_peak_name), 1e10}};
  const auto light = rnx::speed_of_light(gelu, "float32", peaks, 0.01);
  REQUIRE(light);
  CHECK(light->elementwise);
  CHECK(rnx::light_text(*light) == "24% elem");  // 24000 bytes at 1e10 B/s: 0.0024 ms over 0.01 ms
  rnx::work_info copy = gelu;
  copy.elementwise = 0;
  CHECK(rnx::light_text(*rnx::speed_of_light(copy, "float32", peaks, 0.01)) == "24% mem");
  // Where the FLOPs bind, the bound is theirs whatever else the work evaluates.
  rnx::work_info gemm = gelu;
  gemm.flops = 1'000'000'000;
  const auto g = rnx::speed_of_light(gemm, "float32", {{rnx::gemm_peak_name("float32"), 1e11}}, 20);
  CHECK(rnx::light_text(*g) == "50% flop");
}

TEST_CASE("bytes are exact for an elementwise kernel and a reduction") {
  const rnx::work_info relu = counted(work_spec("relu", {"B,1000"}), 3);
  CHECK(*relu.flops == 0);
  CHECK(*relu.bytes == 4 * 3 * 1000 * 2);  // read once, written once
  const rnx::work_info sum = counted(work_spec("row_sum", {"B,64,100"}), 2);
  CHECK(*sum.bytes == 4 * (2 * 64 * 100) + 4 * (2 * 64));  // the input, and one float per row
}

TEST_CASE("a tensor passed as two inputs, and an output that is its input changed in place, count once") {
  const at::Tensor w = at::randn({16, 16});
  CHECK(*counted_on(work_spec("add", {"16,16", "16,16"}), {w, w}).bytes == 4 * 16 * 16 * 2);  // w, and the sum
  CHECK(*counted_on(work_spec("scale_in_place", {"16,16"}), {w.clone()}).bytes == 4 * 16 * 16);
}

TEST_CASE("a KernelBench file's work is its Model's, weights included, whatever its ModelNew computes") {
  rnx::kernel_spec spec;
  spec.name = "kb_linear";
  spec.path = "kb_linear_work.py";
  spec.resolved_path = fs::path(RNX_TEST_DATA_DIR) / "kernels" / "kb_linear_work.py";
  const rnx::work_info w = counted(spec, 4);
  CHECK(*w.flops == 2 * 4 * 64 * 32);                       // the Linear's product; ModelNew's identity product not
  CHECK(*w.bytes == 4 * (4 * 64 + 32 * 64 + 32 + 4 * 32));  // input, weight, bias, output
}

TEST_CASE("a declared count that is negative at a batch is refused, naming the kernel and key") {
  const rnx::manifest m = rnx::parse_manifest(R"([project]
name = "demo"
[[kernel]]
name = "odd"
path = "work.py"
inputs = { x = "B,4" }
bytes = "B - 2"
)",
                                              "rnx.toml", ".");
  CHECK(*rnx::runner::detail::declared_work(m.kernels[0], 3, m.source)->bytes == 1);
  try {
    (void)rnx::runner::detail::declared_work(m.kernels[0], 1, m.source);
    FAIL("no error");
  } catch (const rnx::error& e) {
    CHECK(e.exit_code() == 2);
    CHECK(std::string(e.what()) ==
          "rnx.toml:3: key 'kernel.odd.bytes': \"B - 2\" is -1 at B = 1 (declare a non-negative count for every batch "
          "of the kernel)");
  }
}

TEST_CASE("the speed of light is the work's time at the peak of its bound over the time per call") {
  const std::map<std::string, double> peaks{{rnx::gemm_peak_name("bfloat16"), 1e15},
                                            {std::string(rnx::copy_peak_name), 4e12}};
  rnx::work_info gemm;  // a 4096^3 bf16 GEMM: 2*4096^3 FLOPs, 3 * 4096^2 * 2 bytes
  gemm.flops = 2LL * 4096 * 4096 * 4096;
  gemm.bytes = 3LL * 4096 * 4096 * 2;
  const auto g = rnx::speed_of_light(gemm, "bfloat16", peaks, 0.275);
  REQUIRE(g);
  CHECK(g->compute_bound);
  CHECK(g->ideal_ms == doctest::Approx(2.0 * 4096 * 4096 * 4096 / 1e15 * 1e3));  // 0.1374 ms
  CHECK(g->fraction == doctest::Approx(g->ideal_ms / 0.275));
  rnx::work_info copy;  // an elementwise kernel: no FLOPs counted, 64 MiB read and written
  copy.flops = 0;
  copy.bytes = 2LL << 26;
  const auto c = rnx::speed_of_light(copy, "bfloat16", peaks, 0.05);
  REQUIRE(c);
  CHECK_FALSE(c->compute_bound);
  CHECK(c->ideal_ms == doctest::Approx(static_cast<double>(2LL << 26) / 4e12 * 1e3));
  // No matrix-product peak for the dtype and no bytes: nothing to say; a time that is not positive neither.
  rnx::work_info flops_only;
  flops_only.flops = 1000;
  CHECK_FALSE(rnx::speed_of_light(flops_only, "float64", peaks, 1.0));
  CHECK_FALSE(rnx::speed_of_light(gemm, "bfloat16", peaks, 0.0));
  CHECK_FALSE(rnx::speed_of_light(gemm, "bfloat16", {}, 1.0));
}

TEST_CASE("datasheets are found by the device's name; unknown devices and NVL boards have none") {
  const auto h100 = rnx::datasheet_for("NVIDIA H100 80GB HBM3");
  REQUIRE(h100);
  CHECK(h100->model == "NVIDIA H100 SXM5");
  CHECK(h100->peaks.at(std::string(rnx::copy_peak_name)) == 3.35e12);
  CHECK(h100->peaks.at(rnx::gemm_peak_name("bfloat16")) == 989.5e12);
  const auto h200 = rnx::datasheet_for("NVIDIA H200");
  REQUIRE(h200);
  CHECK(h200->peaks.at(std::string(rnx::copy_peak_name)) == 4.8e12);
  CHECK(rnx::datasheet_for("NVIDIA H100 PCIe")->peaks.at(rnx::gemm_peak_name("float32")) == 51e12);
  CHECK_FALSE(rnx::datasheet_for("NVIDIA H100 NVL"));
  CHECK_FALSE(rnx::datasheet_for("cpu: AMD EPYC 7B13"));
}

TEST_CASE("achieved rates are the work over the time per call, unset where that part of the work is unknown") {
  rnx::work_info w;
  w.flops = 2'000'000'000;  // 2 GFLOP
  w.bytes = 0;              // nothing counted: no rate, never 0 B/s
  const auto r = rnx::achieved(w, 4.0);
  REQUIRE(r.gflop_per_s);
  CHECK(*r.gflop_per_s == doctest::Approx(500.0));  // 2 GFLOP in 4 ms
  CHECK_FALSE(r.gb_per_s);
  CHECK(rnx::runner::detail::rate_text(r.gflop_per_s) == "500");
  CHECK(rnx::runner::detail::rate_text(12.345) == "12.3");
  CHECK(rnx::runner::detail::rate_text(0.01234) == "0.012");
  CHECK(rnx::runner::detail::rate_text(std::nullopt) == "-");
}
