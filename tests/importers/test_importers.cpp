// rnx::importers: the mapping of names and parameters to configurations, files as process groups, the aggregate
// policy, and the one-line errors for bad input (each names the file and the JSON path).
#include "rnx/common/error.hpp"
#include "rnx/importers/import.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

using namespace rnx;
using importers::format;

namespace {

namespace fs = std::filesystem;

const fs::path fixtures = fs::path(RNX_IMPORT_FIXTURES);

// A scratch folder per test case, removed afterwards.
struct scratch {
  fs::path dir;
  scratch() {
    dir = fs::temp_directory_path() /
          ("rnx-import-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    fs::create_directories(dir);
  }
  ~scratch() { fs::remove_all(dir); }
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = dir / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
};

run_document import_files(format f, std::vector<std::string> files, bool allow_aggregates = false) {
  importers::import_options o;
  o.fmt = f;
  o.files = std::move(files);
  o.project = "demo";
  o.allow_aggregates = allow_aggregates;
  return importers::import_run(o);
}

std::string error_of(format f, std::vector<std::string> files, bool allow_aggregates = false) {
  try {
    import_files(f, std::move(files), allow_aggregates);
  } catch (const error& e) {
    const std::string what = e.what();
    CHECK(what.find('\n') == std::string::npos);  // one line
    return what;
  }
  return "";
}

// A Google Benchmark document: each entry "NAME:TIME" is one iteration row (ns); NAME@agg:TIME an aggregate row.
std::string gbench_doc(const std::vector<std::string>& rows, const std::string& unit = "ns") {
  std::string out = R"({"context": {"date": "2026-12-03T09:27:05+00:00", "num_cpus": 2, "mhz_per_cpu": 2596,
    "library_build_type": "release"}, "benchmarks": [)";
  std::map<std::string, int> repetition;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto colon = rows[i].rfind(':');
    std::string name = rows[i].substr(0, colon);
    const std::string time = rows[i].substr(colon + 1);
    std::string kind = "iteration";
    std::string agg;
    if (auto at = name.find('@'); at != std::string::npos) {
      agg = name.substr(at + 1);
      name = name.substr(0, at);
      kind = "aggregate";
    }
    out += std::string(i ? "," : "") + R"({"name": ")" + name + (agg.empty() ? "" : "_" + agg) + R"(", "run_name": ")" +
           name + R"(", "run_type": ")" + kind + R"(", "repetitions": 10, )" +
           (agg.empty() ? R"("repetition_index": )" + std::to_string(repetition[name]++)
                        : R"("aggregate_name": ")" + agg + R"(", "aggregate_unit": ")" +
                              (agg == "cv" ? "percentage" : "time") + R"(")") +
           R"(, "threads": 1, "iterations": 1000, "real_time": )" + time + R"(, "cpu_time": )" + time +
           R"(, "time_unit": ")" + unit + R"("})";
  }
  return out + "]}";
}

std::vector<std::string> repeated(const std::string& name, int n, double ns) {
  std::vector<std::string> rows;
  for (int i = 0; i < n; ++i) rows.push_back(name + ":" + std::to_string(ns + i));
  return rows;
}

const run_result& find(const run_document& run, const std::string& kernel) {
  for (const auto& r : run.results) {
    if (r.kernel == kernel) return r;
  }
  FAIL("no configuration " << kernel);
  return run.results.front();
}

}  // namespace

TEST_CASE("gbench: names map to kernel, params, dtype and batch; measurement settings are dropped") {
  scratch s;
  std::vector<std::string> rows = repeated("BM_copy/1024/64", 8, 1000);
  for (const auto& r : repeated("BM_gemm/m:128/dtype:bf16/batch:8/iterations:50/real_time", 8, 2000)) rows.push_back(r);
  for (const auto& r : repeated("BM_scan/threads:2", 8, 3000)) rows.push_back(r);
  const run_document run = import_files(format::gbench, {s.write("a.json", gbench_doc(rows))});
  REQUIRE(run.results.size() == 3);
  const auto& copy = find(run, "BM_copy[arg0=1024,arg1=64]");
  CHECK(copy.runtime == "gbench");
  CHECK(copy.dtype == "none");
  CHECK(copy.batch == 1);
  CHECK(copy.device == "cpu");
  CHECK(copy.origin == "BM_copy/1024/64");
  CHECK(copy.samples_ms.size() == 8);
  CHECK(copy.samples_ms.front() == doctest::Approx(1e-3));  // 1000 ns
  CHECK(copy.groups.empty());                               // one file: one process
  const auto& gemm = find(run, "BM_gemm[m=128,timer=real_time]");
  CHECK(gemm.dtype == "bfloat16");
  CHECK(gemm.batch == 8);
  CHECK(gemm.params == std::vector<std::pair<std::string, std::string>>{
                           {"m", "128"}, {"dtype", "bf16"}, {"batch", "8"}, {"timer", "real_time"}});
  CHECK(find(run, "BM_scan[threads=2]").samples_ms.size() == 8);
  CHECK(run.env.harness == "gbench (release build)");
  CHECK(run.env.threads == 2);
  CHECK(run.env.device.rfind("cpu: ", 0) == 0);
  CHECK(run.env.clocks.at("cpu_mhz") == 2596);
  CHECK(run.created_at == "2026-12-03T09:27:05Z");
  // The same output imported again is the same environment and the same configurations.
  const run_document again = import_files(format::gbench, {s.write("b.json", gbench_doc(rows))});
  CHECK(again.env.env_id == run.env.env_id);
  CHECK(again.results[1].key() == run.results[1].key());
}

TEST_CASE("gbench: several files are the processes of one run; their contexts must agree") {
  scratch s;
  const auto a = s.write("a.json", gbench_doc(repeated("BM_x/8", 10, 500)));
  const auto b = s.write("b.json", gbench_doc(repeated("BM_x/8", 9, 700)));
  const run_document run = import_files(format::gbench, {a, b});
  REQUIRE(run.results.size() == 1);
  CHECK(run.results[0].groups == std::vector<std::int64_t>{10, 9});
  CHECK(run.results[0].samples_ms.size() == 19);
  std::string other = gbench_doc(repeated("BM_x/8", 9, 700));
  other.replace(other.find("\"num_cpus\": 2"), 13, "\"num_cpus\": 8");
  CHECK(error_of(format::gbench, {a, s.write("c.json", other)}) ==
        s.dir.string() + "/c.json: $.context: thread count \"8\" differs from \"2\" in " + a +
            ": import the files of one machine and harness at a time");
}

TEST_CASE("gbench: aggregates only are refused by default and kept, marked, with --allow-aggregates") {
  scratch s;
  const auto file =
      s.write("agg.json",
              gbench_doc({"BM_a/1@mean:1500", "BM_a/1@median:1400", "BM_a/1@stddev:30", "BM_a/1@cv:0.02", "BM_b:900"}));
  const std::string refused = error_of(format::gbench, {file});
  CHECK(refused == file +
                       ": $.benchmarks[0]: BM_a/1 has only aggregate rows (mean, median, stddev of 10 "
                       "repetitions), no per-sample times (and 1 more): run the benchmark without "
                       "--benchmark_report_aggregates_only (and, for JSON on standard output, without "
                       "--benchmark_display_aggregates_only) so that every repetition is written, or pass "
                       "--allow-aggregates to import them marked (the verdict abstains on them)");
  const run_document run = import_files(format::gbench, {file}, true);
  const auto& a = find(run, "BM_a[arg0=1]");
  REQUIRE(a.aggregates);
  CHECK(a.samples_ms.empty());
  CHECK(a.aggregates->count == 10);
  CHECK(*a.aggregates->mean_ms == doctest::Approx(1.5e-3));
  CHECK(*a.aggregates->median_ms == doctest::Approx(1.4e-3));
  CHECK(*a.aggregates->stddev_ms == doctest::Approx(3e-5));
  // One repetition is one mean over its iterations: an aggregate too.
  const auto& b = find(run, "BM_b");
  REQUIRE(b.aggregates);
  CHECK(b.aggregates->count == 1000);
}

TEST_CASE("gbench: bad input is one line naming file and JSON path, nothing imported") {
  scratch s;
  std::vector<std::string> rows = repeated("BM_x", 3, 10);
  const std::string good = gbench_doc(rows);
  // Truncated.
  const auto truncated = s.write("cut.json", good.substr(0, good.size() / 2));
  const std::string cut = error_of(format::gbench, {truncated});
  CHECK(cut.rfind(truncated + ":2:", 0) == 0);  // FILE:LINE:COLUMN of where the text stops
  CHECK(cut.find("malformed JSON") != std::string::npos);
  CHECK(cut.find("truncated") != std::string::npos);
  // Another tool's file.
  const auto pytest = s.write("pytest.json", R"({"machine_info": {}, "benchmarks": []})");
  CHECK(error_of(format::gbench, {pytest}) ==
        pytest +
            ": $: not Google Benchmark JSON (it has no \"context\" and \"benchmarks\"); it looks like "
            "pytest-benchmark JSON (--format pytest-benchmark)");
  const auto rnx_run = s.write("run.json", R"({"schema": "rnx.run/v1", "results": []})");
  CHECK(error_of(format::gbench, {rnx_run}).find("it looks like an rnx run document") != std::string::npos);
  // Mixed units within one benchmark.
  std::string mixed = gbench_doc(rows);
  mixed.replace(mixed.rfind("\"ns\""), 4, "\"us\"");
  CHECK(error_of(format::gbench, {s.write("mixed.json", mixed)}) ==
        s.dir.string() +
            "/mixed.json: $.benchmarks[2].time_unit: \"us\" where $.benchmarks[0].time_unit of the same "
            "benchmark BM_x says \"ns\": mixed units in one benchmark (were two outputs joined into one "
            "file?)");
  std::string unknown_unit = gbench_doc(rows, "min");
  CHECK(error_of(format::gbench, {s.write("unit.json", unknown_unit)}) ==
        s.dir.string() + "/unit.json: $.benchmarks[0].time_unit: expected a time unit ns, us, ms or s, got \"min\"");
  // Duplicate names: the same repetition twice, or two names that map to one configuration.
  std::string twice = gbench_doc(rows);
  twice.replace(twice.rfind("\"repetition_index\": 2"), 21, "\"repetition_index\": 1");
  CHECK(error_of(format::gbench, {s.write("twice.json", twice)}) ==
        s.dir.string() +
            "/twice.json: $.benchmarks[2]: duplicate benchmark BM_x (repetition 1 also at "
            "$.benchmarks[1]): each name appears once per repetition");
  std::vector<std::string> clash = repeated("BM_y/8/iterations:10", 2, 5);
  for (const auto& r : repeated("BM_y/8/iterations:20", 2, 5)) clash.push_back(r);
  CHECK(error_of(format::gbench, {s.write("clash.json", gbench_doc(clash))}) ==
        s.dir.string() +
            "/clash.json: $.benchmarks[2]: duplicate configuration BM_y[arg0=8]/gbench/none/b1 (also at "
            "$.benchmarks[0]): each benchmark name and parameter set may appear once per file");
  // Empty run.
  CHECK(error_of(format::gbench, {s.write("empty.json", gbench_doc({}))}) ==
        s.dir.string() +
            "/empty.json: $.benchmarks: no benchmarks in this run (an empty run: did a filter match "
            "nothing?)");
  CHECK(error_of(format::gbench, {(s.dir / "absent.json").string()}).find("cannot open file") != std::string::npos);
}

TEST_CASE("gbench: errors reported by the benchmark are error results with their message") {
  scratch s;
  std::string doc = gbench_doc(repeated("BM_z", 8, 10));
  doc.insert(doc.find("\"threads\""), R"("error_occurred": true, "error_message": "out of memory", )");
  const run_document run = import_files(format::gbench, {s.write("e.json", doc)});
  CHECK(run.results[0].status == result_status::error);
  CHECK(run.results[0].message == "out of memory");
}

TEST_CASE("pytest-benchmark: rounds are samples; params map like gbench's; commit and branch come along") {
  scratch s;
  const std::string doc =
      R"({"machine_info": {"python_version": "3.11.7", "cpu": {"brand_raw": "Test CPU", "count": 4}},
    "commit_info": {"id": "abc123", "branch": "feature", "dirty": false},
    "benchmarks": [
      {"name": "test_mm[cuda-float16-4]", "fullname": "bench/test_mm.py::test_mm[cuda-float16-4]",
       "params": {"device": "cuda", "dtype": "float16", "batch_size": 4}, "param": "cuda-float16-4",
       "options": {"timer": "perf_counter"}, "stats": {"rounds": 3, "median": 0.002, "data": [0.002, 0.0021, 0.0019]}},
      {"name": "test_ids[big]", "fullname": "bench/test_mm.py::test_ids[big]", "params": null, "param": "big",
       "stats": {"rounds": 2, "data": [0.5, 0.25]}}],
    "datetime": "2026-12-03T09:27:38.168135+00:00", "version": "5.3.1"})";
  const run_document run = import_files(format::pytest_benchmark, {s.write("p.json", doc)});
  const auto& mm = find(run, "bench/test_mm.py::test_mm[device=cuda]");
  CHECK(mm.dtype == "float16");
  CHECK(mm.batch == 4);
  CHECK(mm.device == "cuda");
  CHECK(mm.samples_ms == std::vector<double>{2.0, 2.1, 1.9});
  CHECK(find(run, "bench/test_mm.py::test_ids[id=big]").samples_ms == std::vector<double>{500, 250});
  CHECK(run.commit == "abc123");
  CHECK(run.branch == "feature");
  CHECK(run.env.python == "3.11.7");
  CHECK(run.env.cpu == "Test CPU");
  CHECK(run.env.threads == 4);
  CHECK(run.env.harness == "pytest-benchmark 5.3.1");
  CHECK(run.created_at == "2026-12-03T09:27:38Z");

  // A file saved without --benchmark-save-data has only the statistics.
  const auto summarized = s.write("stats.json", R"({"machine_info": {}, "benchmarks": [{"name": "test_a",
      "fullname": "t.py::test_a", "stats": {"rounds": 40, "mean": 0.001, "median": 0.0009, "stddev": 0.0001}}]})");
  CHECK(error_of(format::pytest_benchmark, {summarized}) ==
        summarized +
            ": $.benchmarks[0]: t.py::test_a has only the summary statistics of its 40 rounds (no "
            "stats.data), no per-sample times: import the file that --benchmark-json=FILE writes (it always "
            "holds every round's time), or save with --benchmark-save-data beside --benchmark-save / "
            "--benchmark-autosave (saved files hold the rounds only then), or pass --allow-aggregates to "
            "import it marked (the verdict abstains on it)");
  const run_document kept = import_files(format::pytest_benchmark, {summarized}, true);
  CHECK(kept.results[0].aggregates->count == 40);
  CHECK(*kept.results[0].aggregates->median_ms == doctest::Approx(0.9));

  const auto twice = s.write("twice.json", R"({"machine_info": {}, "benchmarks": [
      {"fullname": "t.py::test_a", "stats": {"data": [0.1]}}, {"fullname": "t.py::test_a", "stats": {"data": [0.1]}}]})");
  CHECK(error_of(format::pytest_benchmark, {twice}) ==
        twice +
            ": $.benchmarks[1]: duplicate configuration t.py::test_a/pytest-benchmark/none/b1 (also at "
            "$.benchmarks[0]): each benchmark name and parameter set may appear once per file");
  const auto negative = s.write("neg.json", R"({"machine_info": {}, "benchmarks": [
      {"fullname": "t.py::test_a", "stats": {"data": [0.1, -2]}}]})");
  CHECK(error_of(format::pytest_benchmark, {negative}) ==
        negative + ": $.benchmarks[0].stats.data[1]: expected a non-negative time in seconds, got -2");
  CHECK(error_of(format::pytest_benchmark, {s.write("empty.json", R"({"machine_info": {}, "benchmarks": []})")})
            .find(": $.benchmarks: no benchmarks in this run") != std::string::npos);
  const auto gbench = s.write("g.json", gbench_doc(repeated("BM_x", 8, 1)));
  CHECK(error_of(format::pytest_benchmark, {gbench}) ==
        gbench +
            ": $: not pytest-benchmark JSON (it has no \"machine_info\" and \"benchmarks\"); it looks like Google "
            "Benchmark JSON (--format gbench)");
}

TEST_CASE("nvbench: the --jsonbin fixture's sample files are read; axes are params, the type axis the dtype") {
  const run_document run = import_files(format::nvbench, {(fixtures / "nvbench" / "copy.json").string()});
  REQUIRE(run.results.size() == 3);
  const auto& f32 = run.results[0];
  CHECK(f32.kernel == "copy[Elements=1048576]");
  CHECK(f32.runtime == "nvbench");
  CHECK(f32.dtype == "float32");
  CHECK(f32.device == "cuda:0");
  CHECK(f32.origin == "copy [Device=0 T=F32 Elements=2^20]");
  REQUIRE(f32.samples_ms.size() == 12);
  CHECK(f32.samples_ms[0] == doctest::Approx(41.5e-3 * 0.99).epsilon(1e-6));  // seconds as float32 -> ms
  CHECK(run.results[1].dtype == "float16");
  const auto& int8 = run.results[2];
  CHECK(int8.kernel == "copy[T=I8,Elements=1048576]");  // I8 is no rnx dtype: it stays a parameter
  CHECK(int8.status == result_status::skipped);
  CHECK(int8.message == "Type not supported by this kernel.");
  CHECK(run.env.device == "NVIDIA H200");
  CHECK(run.env.compute_capability == "9.0");
  CHECK(run.env.harness == "nvbench 0.1.0");
  CHECK(run.env.clocks.at("sm_default_mhz") == 1980);
}

TEST_CASE("nvbench: --json output has only summaries; sample files must be whole") {
  const std::string summaries = (fixtures / "nvbench" / "copy-summaries.json").string();
  CHECK(error_of(format::nvbench, {summaries}) ==
        summaries +
            ": $.benchmarks[0].states[0]: copy [Device=0 T=F32 Elements=2^20] has only summaries (mean and "
            "relative spread of 12 cold samples, as --json writes them), no per-sample times (and 1 more): run "
            "the benchmark with --jsonbin FILE instead of --json FILE so nvbench writes every sample's time, "
            "and keep its FILE-bin folder beside it, or pass --allow-aggregates to import them marked (the "
            "verdict abstains on them)");
  const run_document kept = import_files(format::nvbench, {summaries}, true);
  REQUIRE(kept.results[0].aggregates);
  CHECK(kept.results[0].aggregates->count == 12);
  CHECK(*kept.results[0].aggregates->mean_ms == doctest::Approx(0.0415));
  CHECK(*kept.results[0].aggregates->stddev_ms == doctest::Approx(0.0415 * 0.004));

  scratch s;
  fs::copy(fixtures / "nvbench", s.dir, fs::copy_options::recursive);
  const std::string copy = (s.dir / "copy.json").string();
  // Copied from the machine that ran it: an absolute name from there is found in copy.json-bin/ beside the JSON.
  {
    std::ifstream in(copy);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string relative = "\"copy.json-bin/0.bin\"";
    text.replace(text.find(relative), relative.size(), "\"/gone/machine/copy.json-bin/0.bin\"");
    std::ofstream(copy, std::ios::trunc) << text;
  }
  CHECK(import_files(format::nvbench, {copy}).results[0].samples_ms.size() == 12);
  fs::resize_file(s.dir / "copy.json-bin" / "1.bin", 40);
  CHECK(error_of(format::nvbench, {copy}) ==
        copy + ": $.benchmarks[0].states[1].summaries[5].data[1].value: sample-time file " +
            (s.dir / "copy.json-bin" / "1.bin").string() +
            " does not hold 12 float32 values (48 bytes): truncated or from another run");
  fs::remove(s.dir / "copy.json-bin" / "1.bin");
  CHECK(error_of(format::nvbench, {copy})
            .find(": $.benchmarks[0].states[1].summaries[5].data[0].value: sample-time "
                  "file ") != std::string::npos);
  CHECK(error_of(format::nvbench, {copy}).find("not found (copy the JSON's -bin folder along with it)") !=
        std::string::npos);
}

TEST_CASE("options: --gbench-time cpu is for gbench only; a project is needed where the files name none") {
  importers::import_options o;
  o.fmt = format::nvbench;
  o.files = {(fixtures / "nvbench" / "copy.json").string()};
  o.project = "demo";
  o.gbench_cpu_time = true;
  CHECK_THROWS_WITH_AS(importers::import_run(o), doctest::Contains("--gbench-time cpu applies to --format gbench"),
                       error);
  o.gbench_cpu_time = false;
  o.project.clear();
  const std::string no_project =
      "no project to file the run under: pass --project NAME, or run rnx import beside "
      "the rnx.toml that names it ([project] name); " +
      o.files[0] +
      " names none (of the "
      "harnesses only pytest-benchmark records one, in commit_info.project)";
  CHECK_THROWS_WITH_AS(importers::import_run(o), no_project.c_str(), error);
}
