// The speed of light on the pages: the run page's column (and its JSON both ways), the speed-of-light page's rows
// against hand numbers, and every reason `rnx report --proof` refuses a run for.
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/service/pages.hpp"

#include <doctest/doctest.h>

using namespace rnx;

namespace {

run_result timed(const std::string& kernel, const std::string& dtype, double ms, std::optional<std::int64_t> flops,
                 std::optional<std::int64_t> bytes) {
  run_result r;
  r.kernel = kernel;
  r.runtime = "eager";
  r.dtype = dtype;
  r.batch = 1;
  r.device = "cuda:0";
  r.samples_ms.assign(24, ms);
  r.groups = {8, 8, 8};
  r.l2 = l2_state::flushed;
  if (flops || bytes) r.work = work_info{flops, bytes, work_source::counted};
  return r;
}

// A run an H100 measured with its clocks locked: a bf16 GEMM of 8192 at 1.75 ms, a copy of 2 x 256 MiB at 0.21 ms, a
// kernel with no work to set against the peaks.
run_document locked_run() {
  run_document run;
  run.project = "proof";
  run.commit = "0123456789abcdef0123";
  run.env.env_id = "e";
  run.env.device = "NVIDIA H100 80GB HBM3";
  run.env.clocks = {{"locked", 1}, {"sm_mhz_min", 1755}, {"sm_mhz_max", 1755}};
  run.env.peaks = {{gemm_peak_name("bfloat16"), 7e14}, {std::string(copy_peak_name), 2.9e12}};
  const std::int64_t n = 8192;
  run.results.push_back(timed("copy", "float32", 0.21, std::nullopt, std::int64_t{2} << 28));
  run.results.push_back(timed("gemm", "bfloat16", 1.75, 2 * n * n * n, 3 * n * n * 2));
  run.results.push_back(timed("native", "float32", 0.12, std::nullopt, std::nullopt));
  return run;
}

std::string refusal_text(const run_document& run) {
  try {
    (void)pages::proof_data(run, "7");
  } catch (const error& e) {
    CHECK(e.code() == errc::invalid);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("proof page: every configuration against the peaks, nearest the limit first, in hand numbers") {
  const auto v = pages::proof_data(locked_run(), "7");
  REQUIRE(v.rows.size() == 2);
  CHECK(v.rows[0].key.kernel == "gemm");  // 89.8% before 88.2%
  // 2 * 8192^3 = 1.0995e12 FLOP at 7e14 FLOP/s = 1.570731 ms; over 1.75 ms = 0.897561. The datasheet's dense
  // 989.5 TFLOP/s: 1.111179 ms, 0.634959. 1.0995e12 FLOP in 1.75 ms = 628292 GFLOP/s.
  CHECK(v.rows[0].light.measured.ideal_ms == doctest::Approx(1.570731).epsilon(1e-5));
  CHECK(v.rows[0].light.measured.fraction == doctest::Approx(0.897561).epsilon(1e-5));
  CHECK(v.rows[0].light.measured.compute_bound);
  CHECK(*v.rows[0].light.sheet_fraction == doctest::Approx(0.634959).epsilon(1e-5));
  CHECK(*v.rows[0].rates.gflop_per_s == doctest::Approx(628292.4).epsilon(1e-5));
  // 2^29 bytes at 2.9e12 B/s = 0.185130 ms; over 0.21 ms = 0.881571; the datasheet's 3.35 TB/s: 0.763136.
  CHECK(v.rows[1].light.measured.fraction == doctest::Approx(0.881571).epsilon(1e-5));
  CHECK_FALSE(v.rows[1].light.measured.compute_bound);
  CHECK(*v.rows[1].light.sheet_fraction == doctest::Approx(0.763136).epsilon(1e-5));
  REQUIRE(v.without_light.size() == 1);
  CHECK(v.without_light[0].kernel == "native");
  const auto page = pages::proof_page(v);
  CHECK(page.kind == pages::page_kind::proof);
  CHECK(page.body.find("90% flop") != std::string::npos);
  CHECK(page.body.find("88% mem") != std::string::npos);
  CHECK(page.body.find("NVIDIA H100 Tensor Core GPU datasheet, SXM") != std::string::npos);
  CHECK(page.body.find("gemm/eager/bfloat16/b1") < page.body.find("copy/eager/float32/b1"));
}

TEST_CASE("proof page: refused, with each reason and its fix, unless clocks, cache and peaks can carry the claim") {
  auto free = locked_run();
  free.env.clocks["locked"] = 0;
  CHECK(refusal_text(free).find("the clocks were not locked") != std::string::npos);

  auto unknown = locked_run();
  unknown.env.clocks.erase("locked");
  unknown.env.clocks["sm_mhz_min"] = 1410;
  unknown.results[1].l2 = l2_state::unstated;
  unknown.env.peaks.clear();
  const std::string all = refusal_text(unknown);
  CHECK(all.find("did not record whether its clocks were locked") != std::string::npos);
  CHECK(all.find("the SM clock moved from 1410 MHz to 1755 MHz") != std::string::npos);
  CHECK(all.find("1 configuration was not timed with the L2 flushed before every call (gemm/eager/bfloat16/b1)") !=
        std::string::npos);
  CHECK(all.find("no peaks of its machine") != std::string::npos);
  CHECK(pages::proof_refusals(unknown).size() == 4);

  // A clock that wanders within one step still counts as held.
  auto steady = locked_run();
  steady.env.clocks["sm_mhz_min"] = 1740;
  CHECK(pages::proof_refusals(steady).empty());

  auto failed = locked_run();
  for (auto& r : failed.results) r.status = result_status::error;
  CHECK(refusal_text(failed).find("no measured configuration") != std::string::npos);
}

TEST_CASE("run page: the head's speed of light as a table of bars under the verdict's, kept through the page's JSON") {
  const auto run = locked_run();
  const auto view = pages::run_data(run, "local", nullptr, "", nullptr);
  REQUIRE(view.configs.size() == 3);
  REQUIRE(view.configs[1].light);
  CHECK(view.configs[1].light->measured.fraction == doctest::Approx(0.897561).epsilon(1e-5));
  CHECK_FALSE(view.configs[2].light);
  const auto text = json::serialize(pages::to_json(view));
  const auto read = pages::run_view_from_json(json::parse(text, "run view").as_object());
  REQUIRE(read.configs[1].light);
  CHECK(*read.configs[1].light->sheet_fraction == doctest::Approx(0.634959).epsilon(1e-5));
  CHECK(json::serialize(pages::to_json(read)) == text);
  const auto body = pages::run_page(view, pages::link_style{}).body;
  // Its own table after the verdict's (whose width it leaves alone), nearest the limit first, the datasheet beside.
  const auto table = body.find("<h2>How far from the limit</h2>");
  REQUIRE(table != std::string::npos);
  CHECK(body.find("class=\"verdict-table\"") < table);
  CHECK(body.find("class=\"headroom\"", table) != std::string::npos);
  CHECK(body.find("63.5%", table) != std::string::npos);
  CHECK(body.find("gemm/eager/bfloat16/b1", table) < body.find("copy/eager/float32/b1", table));
  CHECK(body.find("native/eager/float32/b1", table) > body.find("</table>", table));  // no work: not in it
  // A run without peaks has no such table.
  auto bare = run;
  bare.env.peaks.clear();
  CHECK(pages::run_page(pages::run_data(bare, "local", nullptr, "", nullptr), pages::link_style{})
            .body.find("How far from the limit") == std::string::npos);
}

TEST_CASE("headroom bar: filled to the fraction, drawn full and red past the limit, nothing without a fraction") {
  CHECK(pages::headroom_svg(std::nullopt, false).empty());
  const auto half = pages::headroom_svg(0.5, false);
  CHECK(half.find("width=\"40.0\"") != std::string::npos);
  CHECK(half.find("50% mem") != std::string::npos);
  const auto past = pages::headroom_svg(3.2, true);
  CHECK(past.find("width=\"80.0\"") != std::string::npos);
  CHECK(past.find("#b00000") != std::string::npos);
  CHECK(pages::headroom_svg(0.042, true).find("4.2% flop") != std::string::npos);
}

TEST_CASE("proof page: clocks and peaks from a document rnx did not measure are marked reported, never measured") {
  const auto measured = pages::proof_page(pages::proof_data(locked_run(), "7"));
  CHECK(measured.body.find("clocks locked (queried, not set by rnx)") != std::string::npos);
  CHECK(measured.body.find("of the measured peak") != std::string::npos);
  CHECK(measured.body.find("reported") == std::string::npos);

  const auto v = pages::proof_data(locked_run(), "7", pages::figure_source::reported);
  CHECK(v.figures == pages::figure_source::reported);
  const auto page = pages::proof_page(v);
  CHECK(page.body.find("clocks locked as the run document reports them") != std::string::npos);
  CHECK(page.body.find("clocks locked (queried") == std::string::npos);
  CHECK(page.body.find("Reported by the uploaded run document") != std::string::npos);
  CHECK(page.body.find("Measured by rnx bench") == std::string::npos);
  CHECK(page.body.find("<th class=\"num\">reported</th>") != std::string::npos);
  CHECK(page.body.find("of the reported peak") != std::string::npos);
  CHECK(page.body.find("of the measured peak") == std::string::npos);
  CHECK(page.body.find("MHz while sampling (reported)") != std::string::npos);
  CHECK(pages::to_json(v).at("figures").as_string() == "reported");
}

TEST_CASE("proof page: each peak in its own unit with its error and how it was measured; what qualifies, up front") {
  auto run = locked_run();
  run.env.peak_measurements[gemm_peak_name("bfloat16")] = {
      0.012, "2026-12-06T07:00:00Z", "the fastest of 10 calls of a 8192 x 8192 bfloat16 matrix product on cuda:0"};
  const auto body = pages::proof_page(pages::proof_data(run, "7")).body;
  // 7e14 FLOP/s and 2.9e12 B/s, each in its unit; never one "G/s" for both.
  CHECK(body.find("700000 GFLOP/s") != std::string::npos);
  CHECK(body.find("2900 GB/s") != std::string::npos);
  CHECK(body.find("989500 GFLOP/s") != std::string::npos);  // the datasheet's, in the same unit
  CHECK(body.find("e+05") == std::string::npos);
  CHECK(body.find("3350 GB/s") != std::string::npos);
  CHECK(body.find(" G/s") == std::string::npos);
  CHECK(body.find("&plusmn;1.2%") != std::string::npos);
  CHECK(body.find("2026-12-06T07:00:00Z: the fastest of 10 calls") != std::string::npos);
  CHECK(body.find("not recorded (an older rnx)") != std::string::npos);  // the copy's, which has no record
  // What a run needs comes first, before the facts and the tables, and says a CPU run cannot qualify, and why.
  const auto needs = body.find("A run qualifies for this page when");
  REQUIRE(needs != std::string::npos);
  CHECK(needs < body.find("<dl class=\"facts\">"));
  CHECK(body.find("A CPU run cannot qualify: rnx flushes no CPU cache", needs) != std::string::npos);
}

TEST_CASE("proof page: a CPU run is refused as one, and the refusal says first what a run needs") {
  auto cpu = locked_run();
  for (auto& r : cpu.results) {
    r.device = "cpu";
    r.l2 = l2_state::unstated;
  }
  const std::string text = refusal_text(cpu);
  CHECK(text.find("A run qualifies for this page when") < text.find("This run does not qualify, because:"));
  CHECK(text.find("a CPU run cannot qualify (3 of 3 measured configurations ran on the CPU)") != std::string::npos);
  CHECK(pages::proof_refusals(locked_run()).empty());
}

TEST_CASE("headroom bar: past 100% within the peak's own error is at the peak, drawn full in the ordinary colour") {
  const auto within = pages::headroom_svg(1.03, true, 0.05);
  CHECK(within.find("100% flop") != std::string::npos);
  CHECK(within.find("#b00000") == std::string::npos);
  CHECK(within.find("width=\"80.0\"") != std::string::npos);
  const auto beyond = pages::headroom_svg(1.07, true, 0.05);
  CHECK(beyond.find("107% flop") != std::string::npos);
  CHECK(beyond.find("#b00000") != std::string::npos);

  // The run page takes the error from the run's record of its peaks, and keeps it through the page's JSON.
  auto run = locked_run();
  run.results[1].samples_ms.assign(24, 1.5);  // 1.570731 ms at the peak: 104.7% of it
  run.env.peak_measurements[gemm_peak_name("bfloat16")] = {0.06, "", ""};
  const auto view = pages::run_data(run, "local", nullptr, "", nullptr);
  REQUIRE(view.configs[1].light);
  CHECK(view.configs[1].light->error == 0.06);
  const auto read =
      pages::run_view_from_json(json::parse(json::serialize(pages::to_json(view)), "run view").as_object());
  CHECK(read.configs[1].light->error == 0.06);
  const auto body = pages::run_page(view, pages::link_style{}).body;
  CHECK(body.find("100% flop") != std::string::npos);
  CHECK(body.find("#b00000") == std::string::npos);
}
