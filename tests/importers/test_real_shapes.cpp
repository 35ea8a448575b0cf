// rnx::importers on the shapes real harness files take (fixtures/real_shapes/, written for these tests): complexity
// rows, one repetition, parameters pytest-benchmark could not serialize, time stamps with any UTC offset or none,
// nvbench before format 1.0 and on two GPU models, configurations missing from some files, and where the project
// comes from. Each asserts the exact message and what was imported.
#include "rnx/common/error.hpp"
#include "rnx/importers/import.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

using namespace rnx;
using importers::format;

namespace {

namespace fs = std::filesystem;

const fs::path shapes = fs::path(RNX_IMPORT_FIXTURES) / "real_shapes";

std::string shape(const std::string& name) { return (shapes / name).string(); }

struct imported {
  run_document run;
  importers::import_summary summary;
};

imported import_shapes(format f, const std::vector<std::string>& names, bool allow_aggregates = false,
                       const std::string& project = "demo") {
  importers::import_options o;
  o.fmt = f;
  for (const auto& n : names) o.files.push_back(shape(n));
  o.project = project;
  o.allow_aggregates = allow_aggregates;
  imported out;
  out.run = importers::import_run(o, &out.summary);
  return out;
}

std::string refusal(format f, const std::vector<std::string>& names, bool allow_aggregates = false) {
  try {
    import_shapes(f, names, allow_aggregates);
  } catch (const error& e) {
    return e.what();
  }
  return "(imported)";
}

std::vector<std::string> kernels(const run_document& run) {
  std::vector<std::string> out;
  for (const auto& r : run.results) out.push_back(r.key().label());
  return out;
}

// A one-benchmark Google Benchmark file with eight repetitions and the given context date.
std::string gbench_dated(const std::string& date) {
  std::string rows;
  for (int i = 0; i < 8; ++i) {
    rows += std::string(i ? "," : "") + R"({"name": "BM_a", "run_name": "BM_a", "run_type": "iteration", )" +
            R"("repetition_index": )" + std::to_string(i) + R"(, "iterations": 10, "real_time": )" +
            std::to_string(100 + i) + R"(, "cpu_time": 100, "time_unit": "ns"})";
  }
  return R"({"context": {"date": ")" + date + R"(", "num_cpus": 2}, "benchmarks": [)" + rows + "]}";
}

struct scratch_file {
  fs::path path;
  explicit scratch_file(const std::string& text) {
    static int n = 0;
    path = fs::temp_directory_path() /
           ("rnx-real-shapes-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".json");
    std::ofstream(path, std::ios::binary) << text;
  }
  ~scratch_file() { fs::remove(path); }
};

imported import_dated(const std::string& date) {
  scratch_file file(gbench_dated(date));
  importers::import_options o;
  o.files = {file.path.string()};
  o.project = "demo";
  imported out;
  out.run = importers::import_run(o, &out.summary);
  for (auto& note : out.summary.notes) {
    if (note.rfind(file.path.string(), 0) == 0) note.replace(0, file.path.string().size(), "FILE");
  }
  return out;
}

}  // namespace

TEST_CASE("real shapes: ->Complexity() rows are left out with a note, with or without --allow-aggregates") {
  const std::string note = shape("gbench-complexity.json") +
                           ": $.benchmarks[36]: left out 2 complexity rows (BM_sort_BigO, BM_sort_RMS): "
                           "->Complexity() fits a curve over a family's sizes, which measures no one configuration; "
                           "each size's own rows are imported";
  for (bool allow : {false, true}) {
    CAPTURE(allow);
    const imported got = import_shapes(format::gbench, {"gbench-complexity.json"}, allow);
    CHECK(kernels(got.run) == std::vector<std::string>{"BM_sort[arg0=1024]/gbench/none/b1",
                                                       "BM_sort[arg0=4096]/gbench/none/b1",
                                                       "BM_sort[arg0=16384]/gbench/none/b1"});
    for (const auto& r : got.run.results) {
      CHECK(r.samples_ms.size() == 8);
      CHECK_FALSE(r.aggregates);
    }
    CHECK(got.summary.notes == std::vector<std::string>{note});
    CHECK(got.summary.warnings.empty());
  }
  // Run with the default single repetition, as complexity benchmarks usually are: the sizes' own rows are what stops
  // the import, with the message for one repetition; --allow-aggregates keeps them marked.
  CHECK(refusal(format::gbench, {"gbench-complexity-one-repetition.json"}) ==
        shape("gbench-complexity-one-repetition.json") +
            ": $.benchmarks[0]: BM_sort/1024 has a single repetition (one mean over its 1655 iterations), no "
            "per-sample times (and 2 more): run the benchmark with --benchmark_repetitions=10 (a verdict needs 8 a "
            "side; add --benchmark_enable_random_interleaving=true) so that every repetition is a sample, or pass "
            "--allow-aggregates to import them marked (the verdict abstains on them)");
  const imported kept = import_shapes(format::gbench, {"gbench-complexity-one-repetition.json"}, true);
  REQUIRE(kept.run.results.size() == 3);
  CHECK(kept.summary.aggregates_only == 3);
  CHECK(kept.run.results[0].aggregates->count == 1655);
  CHECK(kept.summary.notes.size() == 1);
  CHECK(kept.summary.notes[0].find(": $.benchmarks[3]: left out 2 complexity rows (BM_sort_BigO, BM_sort_RMS)") !=
        std::string::npos);
}

TEST_CASE("real shapes: a single repetition is told so, not called aggregates only") {
  CHECK(refusal(format::gbench, {"gbench-one-repetition.json"}) ==
        shape("gbench-one-repetition.json") +
            ": $.benchmarks[0]: BM_copy/4096 has a single repetition (one mean over its 1000 iterations), no "
            "per-sample times (and 1 more): run the benchmark with --benchmark_repetitions=10 (a verdict needs 8 a "
            "side; add --benchmark_enable_random_interleaving=true) so that every repetition is a sample, or pass "
            "--allow-aggregates to import them marked (the verdict abstains on them)");
  CHECK(refusal(format::gbench, {"gbench-aggregates-only.json"}) ==
        shape("gbench-aggregates-only.json") +
            ": $.benchmarks[0]: BM_copy/4096 has only aggregate rows (mean, median, stddev of 8 repetitions), no "
            "per-sample times (and 1 more): run the benchmark without --benchmark_report_aggregates_only (and, for "
            "JSON on standard output, without --benchmark_display_aggregates_only) so that every repetition is "
            "written, or pass --allow-aggregates to import them marked (the verdict abstains on them)");
  const imported one = import_shapes(format::gbench, {"gbench-one-repetition.json"}, true);
  CHECK(one.run.results[0].aggregates->count == 1000);
  CHECK(*one.run.results[0].aggregates->mean_ms == doctest::Approx(821.0e-6).epsilon(0.03));
  const imported agg = import_shapes(format::gbench, {"gbench-aggregates-only.json"}, true);
  CHECK(agg.run.results[0].aggregates->count == 8);
  CHECK(agg.run.results[0].aggregates->stddev_ms.has_value());
}

TEST_CASE("real shapes: Google Benchmark before run_type: repetitions under one name, NAME_mean rows, a naive date") {
  const imported got = import_shapes(format::gbench, {"gbench-old-naive-date.json"});
  REQUIRE(got.run.results.size() == 1);
  CHECK(got.run.results[0].kernel == "BM_copy[arg0=4096]");
  CHECK(got.run.results[0].samples_ms.size() == 8);
  CHECK(got.run.env.harness == "gbench (release build)");
  CHECK(got.run.created_at == "2018-06-05T15:33:09Z");
  CHECK(got.summary.notes ==
        std::vector<std::string>{shape("gbench-old-naive-date.json") +
                                 ": $.context.date: \"2018-06-05 15:33:09\" has no UTC offset: taken as UTC (older "
                                 "Google Benchmark versions wrote the local time of the machine that ran it, without "
                                 "its offset)"});
}

TEST_CASE("real shapes: pytest-benchmark parameters it could not serialize are named by the test id") {
  const imported one = import_shapes(format::pytest_benchmark, {"pytest-unserializable-run1.json"});
  const imported two = import_shapes(format::pytest_benchmark, {"pytest-unserializable-run2.json"});
  const std::vector<std::string> expected = {
      "tests/test_codec.py::test_encode[codec=codec0]/pytest-benchmark/float32/b1",
      "tests/test_codec.py::test_encode[codec=codec1]/pytest-benchmark/float32/b1",
      "tests/test_codec.py::test_decode[impl=fast_path]/pytest-benchmark/none/b1",
      "tests/test_codec.py::test_decode_batch[id=small]/pytest-benchmark/float16/b4",
      // A parametrized fixture beside a mark: the id's parts are in another order than params, so the whole id.
      "tests/test_codec.py::test_stream[id=codec0-float32]/pytest-benchmark/float32/b1",
      "tests/test_codec.py::test_roundtrip/pytest-benchmark/none/b1"};
  // Two runs of one suite, the objects at other addresses: the same configurations.
  CHECK(kernels(one.run) == expected);
  CHECK(kernels(two.run) == expected);
  CHECK(one.run.results[0].params ==
        std::vector<std::pair<std::string, std::string>>{{"codec", "codec0"}, {"dtype", "float32"}});
  CHECK(one.run.results[0].origin == "tests/test_codec.py::test_encode[codec0-float32]");
  CHECK(one.summary.notes.front() ==
        shape("pytest-unserializable-run1.json") +
            ": $.benchmarks[0].params.codec: UNSERIALIZABLE[<codec.Codec object at 0x7f3a2c1d5e50>] is named "
            "codec=codec0, from the test id (and 4 more parameters like it): pytest-benchmark writes the repr of a "
            "value it cannot write as JSON, and the memory address in it changes every run; the test id does not, "
            "so runs of one suite share configurations");
  // As two processes of one run: every configuration in both, one group each.
  const imported both =
      import_shapes(format::pytest_benchmark, {"pytest-unserializable-run1.json", "pytest-unserializable-run2.json"});
  CHECK(kernels(both.run) == expected);
  CHECK(both.summary.warnings.empty());
  for (const auto& r : both.run.results) CHECK(r.groups == std::vector<std::int64_t>{10, 10});
}

TEST_CASE("real shapes: an unserializable value inside a list parameter is named by the test id too") {
  scratch_file file(R"({"machine_info": {}, "benchmarks": [{"fullname": "t.py::test_pad[shape0-4]",
      "params": {"shape": [8, "UNSERIALIZABLE[<object object at 0x7f11aa0c4e10>]"], "batch_size": 4},
      "param": "shape0-4", "stats": {"data": [0.001, 0.002]}}], "datetime": "2026-12-03T09:27:05+00:00"})");
  importers::import_options o;
  o.fmt = format::pytest_benchmark;
  o.files = {file.path.string()};
  o.project = "demo";
  importers::import_summary summary;
  const run_document run = importers::import_run(o, &summary);
  CHECK(kernels(run) == std::vector<std::string>{"t.py::test_pad[shape=shape0]/pytest-benchmark/none/b4"});
  REQUIRE(summary.notes.size() == 1);
  CHECK(summary.notes[0].find(": $.benchmarks[0].params.shape: [8,\"UNSERIALIZABLE[<object object at "
                              "0x7f11aa0c4e10>]\"] is named shape=shape0, from the test id:") != std::string::npos);
}

TEST_CASE("real shapes: pytest-benchmark's naive time stamps are UTC, and the import says so") {
  const imported got =
      import_shapes(format::pytest_benchmark, {"pytest-unserializable-run1.json", "pytest-unserializable-run2.json"});
  CHECK(got.run.created_at == "2026-11-30T14:20:07Z");  // the earliest file's
  CHECK(got.summary.notes.back() ==
        shape("pytest-unserializable-run1.json") +
            ": $.datetime: \"2026-11-30T14:20:07.512345\" has no UTC offset (likewise in 1 more file): taken as UTC "
            "(pytest-benchmark before 5.0 wrote datetime.utcnow(), UTC without an offset)");
}

TEST_CASE("real shapes: a saved pytest-benchmark file without its rounds gets the advice that fits it") {
  CHECK(refusal(format::pytest_benchmark, {"pytest-autosaved.json"}) ==
        shape("pytest-autosaved.json") +
            ": $.benchmarks[0]: tests/test_codec.py::test_roundtrip has only the summary statistics of its 10 rounds "
            "(no stats.data), no per-sample times: import the file that --benchmark-json=FILE writes (it always "
            "holds every round's time), or save with --benchmark-save-data beside --benchmark-save / "
            "--benchmark-autosave (saved files hold the rounds only then), or pass --allow-aggregates to import it "
            "marked (the verdict abstains on it)");
  const imported kept = import_shapes(format::pytest_benchmark, {"pytest-autosaved.json"}, true);
  CHECK(kept.run.created_at == "2026-11-30T14:40:12Z");
  CHECK(kept.summary.notes.empty());  // an offset: nothing assumed
}

TEST_CASE("real shapes: time stamps with any UTC offset are converted to UTC") {
  CHECK(import_shapes(format::gbench, {"gbench-offset-east.json"}).run.created_at == "2026-12-01T07:30:00Z");
  const imported west = import_shapes(format::gbench, {"gbench-offset-west.json"});
  CHECK(west.run.created_at == "2026-12-01T04:15:45Z");  // the next day in UTC
  CHECK(west.summary.notes.empty());
  CHECK(import_dated("2026-01-01T01:00:00+02:00").run.created_at == "2025-12-31T23:00:00Z");
  CHECK(import_dated("2026-12-03T09:27:05.25Z").run.created_at == "2026-12-03T09:27:05Z");
  CHECK(import_dated("2026-12-03T09:27:05+0530").run.created_at == "2026-12-03T03:57:05Z");
  CHECK(import_dated("2026-12-03T20:00:00-05").run.created_at == "2026-12-04T01:00:00Z");
  CHECK(import_dated("2024-02-29T23:30:00-01:00").run.created_at == "2024-03-01T00:30:00Z");
  const imported oldest = import_dated("12/03/16 09:27:05");  // the C locale's %x %X
  CHECK(oldest.run.created_at == "2016-12-03T09:27:05Z");
  CHECK(oldest.summary.notes.size() == 1);
  // A stamp it cannot read is said, and then (only then) the import's own time is used.
  for (const std::string bad : {"yesterday", "2026-02-30T10:00:00Z", "2026-12-03T09:27:05+25:00"}) {
    CAPTURE(bad);
    const imported got = import_dated(bad);
    CHECK(got.summary.notes.size() == 2);
    CHECK(got.summary.notes[0] == "FILE: $.context.date: \"" + bad +
                                      "\" is no date and time rnx reads (ISO 8601, e.g. "
                                      "2026-12-03T09:27:05+02:00); left out of created_at");
    CHECK(got.summary.notes[1] ==
          "created_at is the time of the import, " + got.run.created_at + ": no file has a time stamp rnx reads");
  }
}

TEST_CASE("real shapes: nvbench before format 1.0, after it, and on two GPU models are refused plainly") {
  CHECK(refusal(format::nvbench, {"nvbench-before-format-1.json"}) ==
        shape("nvbench-before-format-1.json") +
            ": $.meta.version.json: no JSON format version: nvbench has written one since format 1.0, so this file "
            "is older (a format other than 1.x): rnx reads nvbench's JSON format 1.x only; run the benchmark again "
            "with an nvbench that writes format 1.x (--jsonbin FILE)");
  CHECK(refusal(format::nvbench, {"nvbench-format-2.json"}) ==
        shape("nvbench-format-2.json") +
            ": $.meta.version.json: JSON format 2.0.0, a format other than 1.x: rnx reads nvbench's JSON format 1.x "
            "only; run the benchmark again with an nvbench that writes format 1.x (--jsonbin FILE)");
  CHECK(refusal(format::nvbench, {"nvbench-two-gpu-models.json"}, true) ==
        shape("nvbench-two-gpu-models.json") +
            ": $.benchmarks[0].states[1].device: states on NVIDIA H200 (device 0) and NVIDIA A100-SXM4-40GB (device "
            "1): one environment a run; run the benchmark once per GPU model with nvbench's own device option (the "
            "benchmark's -d ID / --devices ID) and import each file separately");
}

TEST_CASE("real shapes: a configuration missing from some files is named, with the files") {
  const imported got =
      import_shapes(format::gbench, {"gbench-process-1.json", "gbench-process-2.json", "gbench-process-3.json"});
  REQUIRE(got.run.results.size() == 2);
  CHECK(got.run.results[0].groups == std::vector<std::int64_t>{8, 8, 8});
  CHECK(got.run.results[1].kernel == "BM_fill[arg0=4096]");
  CHECK(got.run.results[1].groups == std::vector<std::int64_t>{8, 8});
  CHECK(got.summary.warnings ==
        std::vector<std::string>{
            "1 configuration is missing from " + shape("gbench-process-2.json") +
            " (in 2 of 3 files): BM_fill[arg0=4096]/gbench/none/b1; its result holds the samples of the files that "
            "have it, one process group each (was it filtered out or renamed there, or did the harness stop before "
            "it?)"});
  CHECK(got.run.created_at == "2026-12-01T08:00:05Z");
  // The same files in another order: the same words for the file that lacks it.
  const imported again =
      import_shapes(format::gbench, {"gbench-process-2.json", "gbench-process-1.json", "gbench-process-3.json"});
  CHECK(again.summary.warnings.size() == 1);
  CHECK(again.summary.warnings[0].rfind(
            "1 configuration is missing from " + shape("gbench-process-2.json") + " (in 2 of 3 files)", 0) == 0);
}

TEST_CASE("real shapes: without --project the project the harness recorded is taken, and said") {
  const imported got = import_shapes(format::pytest_benchmark, {"pytest-unserializable-run1.json"}, false, "");
  CHECK(got.run.project == "shapes-demo");
  CHECK(std::set<std::string>(got.summary.notes.begin(), got.summary.notes.end())
            .count("project \"shapes-demo\" from " + shape("pytest-unserializable-run1.json") +
                   ": $.commit_info.project (no --project given)") == 1);
  // --project wins over the harness's.
  CHECK(import_shapes(format::pytest_benchmark, {"pytest-unserializable-run1.json"}).run.project == "demo");
}
