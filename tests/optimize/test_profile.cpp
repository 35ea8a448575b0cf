// Op profiles: self-time aggregation, Amdahl arithmetic, torch.profiler trace import, and the libtorch profile of
// the loop-over-heads attention kernel (matrix multiply among the top ops, with its exact call count).
#include "rnx/common/error.hpp"
#include "rnx/optimize/profile.hpp"
#include "rnx/optimize/profile_worker.hpp"
#include "rnx/common/process.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace rnx::optimize;
using rnx::process_options;
using rnx::process_result;
using rnx::run_process;
namespace fs = std::filesystem;

namespace {

// examples/kernels/attention.py loops over batch and heads: two 2-D matmuls (aten::mm) per (batch, head).
constexpr int heads = 8;
constexpr int batch = 2;

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("rnx-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
}

fs::path attention_manifest(const fs::path& dir) {
  write(dir / "rnx.toml",
        "[project]\nname = \"profile-test\"\n\n[defaults]\nruntimes = [\"eager\"]\ndtypes = [\"float32\"]\n"
        "batch = [2]\ndevice = \"cpu\"\n\n[[kernel]]\nname = \"attention\"\npath = \"" RNX_SOURCE_DIR
        "/examples/kernels/attention.py\"\ninputs = { q = \"B,8,128,64\", k = \"B,8,128,64\", v = \"B,8,128,64\" "
        "}\n\n[bench]\nthreads = 1\n\n"
        "[optimize]\nrewriter = \"openai\"\n");
  return dir / "rnx.toml";
}

const op_row* find_op(const op_profile& p, const std::string& name) {
  for (const auto& r : p.ops)
    if (r.name == name) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("aggregate: nested host ops get self time; shares are of the window; ranked by self time") {
  // matmul [0,100) calls bmm [10,90); softmax [100,130); a second thread's bmm [0,20). Window 200 us.
  std::vector<trace_event> events = {
      {"aten::matmul", false, "t1", 0, 100},   {"aten::bmm", false, "t1", 10, 80},
      {"aten::softmax", false, "t1", 100, 30}, {"aten::_softmax", false, "t1", 105, 20},
      {"aten::bmm", false, "t2", 0, 20},
  };
  op_profile p = aggregate(events, 0.2);
  REQUIRE(p.ops.size() == 4);
  CHECK(p.ranked_by == "self CPU time");
  CHECK(p.ops[0].name == "aten::bmm");
  CHECK(p.ops[0].calls == 2);
  CHECK(p.ops[0].self_ms == doctest::Approx(0.100));
  CHECK(p.ops[0].share == doctest::Approx(0.5));
  CHECK(p.ops[0].family == "matrix multiply");
  const op_row* matmul = find_op(p, "aten::matmul");
  REQUIRE(matmul);
  CHECK(matmul->self_ms == doctest::Approx(0.020));
  CHECK(matmul->total_ms == doctest::Approx(0.100));
  CHECK(find_op(p, "aten::softmax")->self_ms == doctest::Approx(0.010));
  CHECK(find_op(p, "aten::_softmax")->self_ms == doctest::Approx(0.020));

  // With GPU kernels present they are what is ranked.
  events.push_back({"ampere_sgemm_64x64_nn", true, "stream7", 20, 50});
  events.push_back({"softmax_warp_forward", true, "stream7", 110, 10});
  op_profile g = aggregate(events, 0);
  CHECK(g.ranked_by == "GPU kernel time");
  REQUIRE(g.ops.size() == 2);
  CHECK(g.ops[0].name == "ampere_sgemm_64x64_nn");
  CHECK(g.ops[0].family == "matrix multiply");
  CHECK(g.wall_ms == doctest::Approx(0.130));  // the span of all events
}

TEST_CASE("Amdahl: whole = 1 / ((1 - p) + p / k)") {
  CHECK(amdahl_speedup(0.6, 2) == doctest::Approx(1.0 / 0.7));
  CHECK(amdahl_speedup(0.6, 10) == doctest::Approx(1.0 / 0.46));
  CHECK(amdahl_speedup(0.6, INFINITY) == doctest::Approx(2.5));
  CHECK(amdahl_speedup(1.0, 10) == doctest::Approx(10));
  CHECK(std::isinf(amdahl_speedup(1.0, INFINITY)));
  CHECK(amdahl_speedup(0, 10) == 1.0);
  CHECK(amdahl_speedup(0.25, 1) == doctest::Approx(1.0));
  // Never more than the op's own speedup, never more than 1 / (1 - p).
  for (double p : {0.05, 0.3, 0.9}) {
    for (double k : {1.5, 4.0, 100.0}) {
      double s = amdahl_speedup(p, k);
      CHECK(s <= k + 1e-12);
      CHECK(s <= 1 / (1 - p) + 1e-12);
      CHECK(s >= 1.0);
    }
  }
}

TEST_CASE("import: a torch.profiler Chrome trace becomes the same table; bad files say what is wrong") {
  std::string trace = R"({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "python_function", "name": "run", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
    {"ph": "X", "cat": "cpu_op", "name": "aten::matmul", "pid": 1, "tid": 1, "ts": 100, "dur": 400, "args": {}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::bmm", "pid": 1, "tid": 1, "ts": 150, "dur": 300},
    {"ph": "X", "cat": "cpu_op", "name": "aten::softmax", "pid": 1, "tid": 1, "ts": 600, "dur": 100},
    {"ph": "i", "cat": "cpu_instant_event", "name": "mark", "pid": 1, "tid": 1, "ts": 700},
    {"ph": "X", "cat": "cpu_op", "name": "aten::bmm", "pid": 1, "tid": "2", "ts": 700.5, "dur": 200}
  ]})";
  op_profile p = import_trace_text(trace, "t.json");
  CHECK(p.source == "imported t.json");
  CHECK(p.wall_ms == doctest::Approx(0.8005));  // first cpu_op start to last end
  REQUIRE(p.ops.size() == 3);
  CHECK(p.ops[0].name == "aten::bmm");
  CHECK(p.ops[0].calls == 2);
  CHECK(p.ops[0].self_ms == doctest::Approx(0.5));
  CHECK(find_op(p, "aten::matmul")->self_ms == doctest::Approx(0.1));
  auto w = what_ifs(p, 1, {2.0});
  REQUIRE(w.size() == 1);
  CHECK(w[0].whole == doctest::Approx(1.0 / ((1 - 0.5 / 0.8005) + 0.5 / 0.8005 / 2)));

  CHECK_THROWS_WITH_AS(import_trace_text("{\"traceEvents\": [", "bad.json"), doctest::Contains("bad.json:1:"),
                       rnx::error);
  CHECK_THROWS_WITH_AS(
      import_trace_text(R"({"traceEvents": [{"ph": "X", "cat": "python_function", "name": "f", "ts": 0, "dur": 1}]})",
                        "py.json"),
      doctest::Contains("python_function (1)"), rnx::error);
  CHECK_THROWS_WITH_AS(
      import_trace_text(R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": "x"}]})", "n.json"),
      doctest::Contains("$.traceEvents[0]"), rnx::error);
  CHECK_THROWS_AS(import_trace_text("[1, 2]", "arr.json"), rnx::error);
  CHECK_THROWS_WITH_AS(import_trace("/nonexistent/trace.json"), doctest::Contains("--import"), rnx::error);
}

TEST_CASE("the libtorch profile of the loop attention example names matrix multiply with its call count") {
  fs::path dir = fresh_dir("profile");
  fs::path manifest = attention_manifest(dir);
  profile_options o;
  o.calls = 5;
  o.warmup_calls = 2;
  op_profile p = profile_in_worker(manifest, "attention", o, std::chrono::seconds(300), RNX_PROFILE_WORKER_PATH);
  CHECK(p.kernel == "attention");
  CHECK(p.device == "cpu");
  CHECK(p.batch == 2);
  CHECK(p.profiled_calls == 5);
  CHECK(p.ranked_by == "self CPU time");
  REQUIRE(p.ops.size() >= 3);
  MESSAGE(render_profile_text(p, 8, {2.0, 10.0}));

  // Matrix multiply is among the top three ops, with two mm calls per (batch, head) per kernel call.
  int rank = -1;
  for (int i = 0; i < 3; ++i)
    if (p.ops[i].family == "matrix multiply") rank = i;
  REQUIRE(rank >= 0);
  const op_row* mm = find_op(p, "aten::mm");
  REQUIRE(mm);
  CHECK(mm->family == "matrix multiply");
  CHECK(mm->calls == 2 * batch * heads * 5);
  CHECK(find_op(p, "aten::matmul")->calls == 2 * batch * heads * 5);
  CHECK(find_op(p, "aten::_softmax")->calls == batch * heads * 5);

  // Shares are self time over the measured window; the what-ifs follow Amdahl's law from those numbers.
  double sum = 0;
  for (const auto& r : p.ops) {
    CHECK(r.share == doctest::Approx(r.self_ms / p.wall_ms));
    sum += r.self_ms;
  }
  CHECK(sum <= p.wall_ms * 1.0001);
  for (const auto& w : what_ifs(p, 3, {2.0, 10.0, INFINITY})) {
    const op_row* r = find_op(p, w.op);
    double share = r->self_ms / p.wall_ms;
    double expected = std::isinf(w.k) ? 1 / (1 - share) : 1 / ((1 - share) + share / w.k);
    CHECK(w.whole == doctest::Approx(expected));
    CHECK(w.whole > 1.0);
  }
  fs::remove_all(dir);
}

TEST_CASE("a trace exported by torch.profiler imports with the same call counts") {
  fs::path dir = fresh_dir("trace");
  std::string script =
      "import sys, torch\nsys.path.insert(0, sys.argv[1])\nfrom attention import run\n"
      "torch.manual_seed(0)\nq, k, v = (torch.randn(2, 8, 128, 64) for _ in range(3))\nrun(q, k, v)\n"
      "with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:\n"
      "    for _ in range(3):\n        run(q, k, v)\n"
      "prof.export_chrome_trace(sys.argv[2])\n";
  write(dir / "make_trace.py", script);
  process_options po;
  po.timeout = std::chrono::seconds(180);
  auto r = run_process(
      {"python3", (dir / "make_trace.py").string(), RNX_SOURCE_DIR "/examples/kernels", (dir / "trace.json").string()},
      po);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  op_profile p = import_trace(dir / "trace.json");
  const op_row* mm = find_op(p, "aten::mm");
  REQUIRE(mm);
  CHECK(mm->calls == 2 * batch * heads * 3);
  CHECK(mm->family == "matrix multiply");
  bool top3 = false;
  for (int i = 0; i < 3 && i < static_cast<int>(p.ops.size()); ++i) top3 = top3 || p.ops[i].family == "matrix multiply";
  CHECK(top3);
  fs::remove_all(dir);
}
