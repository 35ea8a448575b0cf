// The machine's peaks as kept per environment: which are measured again (beaten by a result, or a busy machine's
// on a quiet one), the higher kept with its own measurement, and what rnx bench makes of a cache whose peaks are
// injected: real worker processes on a real kernel, no timing asserted (any machine multiplies faster than one
// FLOP a second, and none faster than 1e30).
#include "rnx/common/speed_of_light.hpp"
#include "rnx/runner/bench.hpp"
#include "rnx/runner/peak_cache.hpp"
#include "rnx/stats/posterior.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using rnx::runner::kept_peak;
using rnx::runner::peak_set;

namespace {

const std::string gemm = rnx::gemm_peak_name("float32");
const std::string copy(rnx::copy_peak_name);

kept_peak peak(double value, double others_cores = 0, std::string beaten_by = "") {
  kept_peak p;
  p.value = value;
  p.measured = {0.02, "2026-12-06T07:00:00Z", "injected by the test"};
  p.others_cores = others_cores;
  p.beaten_by = std::move(beaten_by);
  return p;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("rnx-peaks-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// One matrix product, one process, one thread: a real worker, the peaks from `cache`.
rnx::runner::bench_options gemm_bench(const fs::path& dir, const fs::path& cache) {
  const fs::path manifest = dir / "rnx.toml";
  std::ofstream out(manifest);
  out << "[project]\nname = \"peaks-tests\"\n[defaults]\nbatch = [1]\ndevice = \"cpu\"\n"
      << "[bench]\nprocesses = 1\nmax_processes = 1\nsamples = 10\nmin_samples = 4\nbudget_ms = 30\nwarmup_ms = 5\n"
      << "threads = 1\n[[kernel]]\nname = \"gemm\"\npath = \""
      << (fs::path(RNX_SOURCE_DIR) / "bench" / "corpus" / "kernels" / "gemm_fp32.py").string()
      << "\"\ninputs = { a = \"B,64,128\", b = \"128,128\" }\n";
  out.close();
  rnx::runner::bench_options o;
  o.manifests = {manifest};
  o.worker = RNX_TEST_WORKER;
  o.cache_dir = cache;
  return o;
}

// The environment's id as the worker computes it: a first run with an empty cache writes it there.
std::string env_of(const rnx::runner::bench_side& side) { return side.env.env_id; }

}  // namespace

TEST_CASE("a peak is measured again where a result beat it, or where a busy machine's meets a quiet one") {
  CHECK_FALSE(rnx::runner::needs_measuring(peak(1e11), 0.0));
  CHECK(rnx::runner::needs_measuring(peak(1e11, 0, "gemm/eager/float32/b1 at 1.3 of it"), 1.9));
  // Timed while other processes kept 1.2 cores busy: measured again once the machine is quiet, not while it is busy.
  CHECK(rnx::runner::needs_measuring(peak(4e10, 1.2), 0.1));
  CHECK_FALSE(rnx::runner::needs_measuring(peak(4e10, 1.2), 1.5));
  CHECK_FALSE(rnx::runner::needs_measuring(peak(4e10, 1.2), 0.8));
  // Not quiet, but a core quieter than when it was timed (a build on one core where two were busy): again.
  CHECK(rnx::runner::needs_measuring(peak(4e10, 1.9), 0.9));
  CHECK_FALSE(rnx::runner::needs_measuring(peak(4e10, rnx::runner::busy_cores), 0.0));
}

TEST_CASE("the higher peak stands, with its own measurement; a kept peak the new one does not beat is confirmed") {
  const peak_set kept{{gemm, peak(4e10, 1.8)}, {copy, peak(3e10, 0, "copy_rows/eager/float32/b1 at 1.1 of it")}};
  kept_peak quiet_gemm = peak(1.6e11, 0.02);
  quiet_gemm.measured.how = "measured quiet";
  const peak_set fresh{{gemm, quiet_gemm}, {copy, peak(2.5e10, 0.01)}};
  const peak_set merged = rnx::runner::keep_higher(kept, fresh);
  CHECK(merged.at(gemm).value == 1.6e11);
  CHECK(merged.at(gemm).measured.how == "measured quiet");
  CHECK(merged.at(gemm).others_cores == 0.02);
  // The copy measured lower this time: the kept one stands, no longer beaten, and now known to be no busy
  // machine's (a quieter measurement did not beat it).
  CHECK(merged.at(copy).value == 3e10);
  CHECK(merged.at(copy).beaten_by.empty());
  CHECK(merged.at(copy).others_cores == 0.0);
  CHECK_FALSE(rnx::runner::needs_measuring(merged.at(copy), 0.0));
  // A busy measurement never lowers a kept peak.
  const peak_set busy{{gemm, peak(2e10, 1.9)}};
  CHECK(rnx::runner::keep_higher(merged, busy).at(gemm).value == 1.6e11);
}

TEST_CASE("the cache keeps every peak's measurement; an older rnx's bare numbers are measured again") {
  const fs::path dir = scratch("cache");
  const fs::path file = rnx::runner::peak_file(dir, "e1");
  CHECK(file == dir / "peaks" / "e1.json");
  CHECK_FALSE(rnx::runner::read_peaks(file));
  rnx::runner::write_peaks(file, {{gemm, peak(1e11, 1.5)}});
  const auto read = rnx::runner::read_peaks(file);
  REQUIRE(read);
  CHECK(read->at(gemm).value == 1e11);
  CHECK(read->at(gemm).measured.error == 0.02);
  CHECK(read->at(gemm).measured.measured_at == "2026-12-06T07:00:00Z");
  CHECK(read->at(gemm).others_cores == 1.5);
  rnx::runner::mark_beaten(dir, "e1", gemm, "gemm/eager/float32/b1 at 3.8 of it");
  rnx::runner::mark_beaten(dir, "e1", copy, "nothing kept by this name");
  const auto marked = rnx::runner::read_peaks(file);
  CHECK(marked->at(gemm).beaten_by == "gemm/eager/float32/b1 at 3.8 of it");
  CHECK(marked->count(copy) == 0);
  {
    std::ofstream old(file);
    old << "{\"gemm_float32_flops_per_s\": 38e9, \"copy_bytes_per_s\": 2e10}\n";
  }
  CHECK_FALSE(rnx::runner::read_peaks(file));
  {
    std::ofstream damaged(file);
    damaged << "{\"format\": \"rnx.peaks/v2\", \"peaks\": ";
  }
  CHECK_FALSE(rnx::runner::read_peaks(file));

  // A run takes what its environment keeps where it is higher than what its first worker reported.
  rnx::runner::write_peaks(file, {{gemm, peak(2e11)}, {copy, peak(1e10)}});
  rnx::environment env;
  env.env_id = "e1";
  env.peaks = {{gemm, 1e11}, {copy, 3e10}};
  rnx::runner::take_kept_peaks(env, dir);
  CHECK(env.peaks.at(gemm) == 2e11);
  CHECK(env.peak_measurements.at(gemm).how == "injected by the test");
  CHECK(env.peaks.at(copy) == 3e10);
  CHECK(env.peak_measurements.count(copy) == 0);
  fs::remove_all(dir);
}

TEST_CASE("past the peak by no more than its error is at the peak; by more it is beyond what the machine can do") {
  rnx::work_info w;
  w.flops = 2'000'000'000;
  const std::map<std::string, double> peaks{{gemm, 1e11}};  // 2e9 FLOPs: 20 ms at the peak
  const std::map<std::string, rnx::peak_measurement> measured{{gemm, {0.05, "", ""}}};
  const auto at = rnx::speed_of_light(w, "float32", peaks, 19.5);  // 102.6% of the peak
  REQUIRE(at);
  CHECK(at->peak == gemm);
  CHECK(rnx::peak_error(*at, measured) == 0.05);
  CHECK_FALSE(rnx::beyond_peak(*at, 0.05));
  CHECK(rnx::light_text(*at, 0.05) == "100% flop");
  CHECK(rnx::beyond_peak(*at, 0.0));
  CHECK(rnx::light_text(*at) == "103% flop");
  const auto past = rnx::speed_of_light(w, "float32", peaks, 12.5);  // 160%
  CHECK(rnx::beyond_peak(*past, 0.05));
  CHECK(rnx::light_text(*past, 0.05) == "160% flop");
  CHECK(rnx::peak_error(*past, {}) == 0.0);
}

TEST_CASE("rnx bench measures a beaten peak again and keeps the higher; a result that beats one marks it") {
  const fs::path dir = scratch("bench");
  const fs::path cache = dir / "cache";
  auto o = gemm_bench(dir, cache);
  const auto first = rnx::runner::run_bench(o);
  REQUIRE(first.size() == 1);
  REQUIRE(first[0].results.at(0).status == rnx::result_status::ok);
  const std::string env_id = env_of(first[0]);
  const fs::path file = rnx::runner::peak_file(cache, env_id);
  // The first worker measured and recorded how.
  const auto measured = rnx::runner::read_peaks(file);
  REQUIRE(measured);
  REQUIRE(measured->count(gemm) == 1);
  CHECK(first[0].env.peaks.at(gemm) == doctest::Approx(measured->at(gemm).value));
  CHECK(first[0].env.peak_measurements.at(gemm).how.find("1024 x 1024 float32 matrix product on 1 thread;") !=
        std::string::npos);
  CHECK_FALSE(first[0].env.peak_measurements.at(gemm).measured_at.empty());

  // A kept peak of one FLOP a second, as a busy machine might have left it (not marked, not known as busy): the
  // run reports against it, its product beats it, and the run marks it for the next worker.
  rnx::runner::write_peaks(file, {{gemm, peak(1.0)}, {copy, peak(1.0)}});
  const auto low = rnx::runner::run_bench(o);
  CHECK(low[0].env.peaks.at(gemm) == 1.0);
  const auto marked = rnx::runner::read_peaks(file);
  REQUIRE(marked);
  CHECK(marked->at(gemm).beaten_by.find("gemm/eager/float32/b1 at ") == 0);

  // The next run's worker measures it again: the higher stands, the mark is gone (unless this run's product beat
  // even the peak just measured, as on a machine busy while the worker measured: then this run marks it anew), the
  // run carries it.
  const auto again = rnx::runner::run_bench(o);
  const auto kept = rnx::runner::read_peaks(file);
  REQUIRE(kept);
  CHECK(kept->at(gemm).value > 1.0);
  const rnx::run_result& product = again[0].results.at(0);
  REQUIRE(product.work);
  const auto centre = rnx::stats::observed_statistic({product.samples_ms, product.groups}, rnx::statistic::median);
  REQUIRE(centre);
  const auto light = rnx::speed_of_light(*product.work, product.dtype, again[0].env.peaks, *centre);
  REQUIRE(light);
  INFO("this run's product at " << light->fraction << " of the peak measured again");
  if (light->fraction > 1) {
    CHECK(kept->at(gemm).beaten_by.find("gemm/eager/float32/b1 at ") == 0);
  } else {
    CHECK(kept->at(gemm).beaten_by.empty());
  }
  CHECK(again[0].env.peaks.at(gemm) == doctest::Approx(kept->at(gemm).value));
  CHECK(again[0].env.peak_measurements.at(gemm).how != "injected by the test");

  // A peak no result beats is kept as it is: no worker measures it again.
  rnx::runner::write_peaks(file, {{gemm, peak(1e30)}, {copy, peak(1e30)}});
  const auto high = rnx::runner::run_bench(o);
  CHECK(high[0].env.peaks.at(gemm) == 1e30);
  CHECK(rnx::runner::read_peaks(file)->at(gemm).beaten_by.empty());
  fs::remove_all(dir);
}

TEST_CASE("the work is the problem's: a paired head that executes twice the FLOPs carries its base's count") {
  const fs::path dir = scratch("paired");
  const fs::path wasteful = dir / "wasteful.py";
  std::ofstream(wasteful) << "import torch\n\n\ndef run(a, b):\n    torch.matmul(a, b)  # thrown away\n"
                          << "    return torch.matmul(a, b)\n";
  auto head = gemm_bench(dir, dir / "cache");  // the plain product's manifest: the base; the head's names wasteful.py
  const fs::path base_manifest = dir / "base.toml";
  const fs::path head_manifest = dir / "head.toml";
  fs::copy_file(head.manifests[0], base_manifest, fs::copy_options::overwrite_existing);
  {
    std::ifstream in(base_manifest);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string plain = (fs::path(RNX_SOURCE_DIR) / "bench" / "corpus" / "kernels" / "gemm_fp32.py").string();
    text.replace(text.find(plain), plain.size(), wasteful.string());
    std::ofstream(head_manifest) << text;
  }
  head.manifests = {head_manifest, base_manifest};
  const auto sides = rnx::runner::run_bench(head);
  REQUIRE(sides.size() == 2);
  const auto& h = sides[0].results.at(0);
  const auto& b = sides[1].results.at(0);
  REQUIRE(b.work);
  REQUIRE(h.work);
  CHECK(*b.work->flops == 2LL * 64 * 128 * 128);  // (64 x 128) @ (128 x 128), counted once over the base
  CHECK(*h.work->flops == *b.work->flops);
  fs::remove_all(dir);
}
