// The runner end to end through real worker processes: every kernel kind, and every failure a kernel can cause
// (missing entry, wrong arity, shape mismatch, exception, divergence, segfault, hang) with its exact message.
#include "rnx/common/error.hpp"
#include "rnx/runner/bench.hpp"
#include "steer_checks.hpp"
#include "rnx/common/speed_of_light.hpp"
#include "rnx/runner/sample_stats.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path data = fs::path(RNX_TEST_DATA_DIR);
const fs::path examples = fs::path(RNX_SOURCE_DIR) / "examples" / "kernels";

fs::path write_manifest(const std::string& name, const std::string& body) {
  fs::path dir = fs::temp_directory_path() / ("rnx-bench-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path file = dir / (name + ".toml");
  std::ofstream out(file);
  out << "[project]\nname = \"runner-tests\"\n[defaults]\nbatch = [2]\ndevice = \"cpu\"\n"
      << "[bench]\nprocesses = 2\nsamples = 6\nmin_samples = 4\nbudget_ms = 30\nwarmup_ms = 10\nthreads = 1\n"
      << body;
  return file;
}

std::string kernel(const std::string& name, const fs::path& path, const std::string& extra) {
  return "[[kernel]]\nname = \"" + name + "\"\npath = \"" + path.string() + "\"\n" + extra + "\n";
}

rnx::runner::bench_options options_for(const fs::path& manifest) {
  rnx::runner::bench_options o;
  o.manifests = {manifest};
  o.worker = RNX_TEST_WORKER;
  o.cache_dir = fs::path(RNX_TEST_CACHE_DIR);
  return o;
}

std::map<std::string, rnx::run_result> by_label(const rnx::runner::bench_side& side) {
  std::map<std::string, rnx::run_result> out;
  for (const auto& r : side.results) out[r.key().label()] = r;
  return out;
}

}  // namespace

TEST_CASE("kernels of every kind run in several processes; bad kernels fail alone with exact messages") {
  const fs::path d = data / "kernels";
  std::string body;
  body += kernel("double", d / "double.py", "inputs = { x = \"B,16\" }\nruntimes = [\"eager\", \"torchscript\"]");
  body += kernel("kernelbench", d / "kb_relu.py", "batch = [4]");
  body += kernel("scripted", examples / "scaled_tanh.pt",
                 "inputs = { x = \"B,64\" }\nruntimes = [\"torchscript\", \"eager\"]");
  body += kernel("native", d / "add.cpp", "inputs = { a = \"B,32\", b = \"B,32\" }\nbytes = \"3*4*B*32\"");
  body += kernel("missing_entry", d / "double.py", "inputs = { x = \"B,16\" }\nentry = \"nope\"");
  body += kernel("arity", d / "two_args.py", "inputs = { x = \"B,16\" }");
  body += kernel("unbound", d / "two_args.py", "inputs = { a = \"B,16\" }");
  body += kernel("swapped", d / "matmul.py", "inputs = { b = \"16,4\", a = \"B,16\" }");
  body += kernel("mismatch", d / "matmul.py", "inputs = { a = \"B,16\", b = \"8,4\" }");
  body += kernel("raises", d / "raises.py", "inputs = { x = \"B,16\" }");
  body += kernel("diverges", d / "half_internal.py", "inputs = { x = \"B,256\" }");
  body += kernel("segfault", d / "segfault.py", "inputs = { x = \"B,16\" }");
  body += kernel("flood", d / "flood.py", "inputs = { x = \"B,16\" }");
  body += kernel("hang", d / "hang.py", "inputs = { x = \"B,16\" }\ntimeout_s = 4");
  body += kernel("broken_cpp", d / "broken.cpp", "inputs = { a = \"B,16\" }");
  body += kernel("gpu_only", d / "double.py", "inputs = { x = \"B,16\" }\ndevice = \"cuda\"");
  body += kernel("no_bf16_onnx", d / "double.py",
                 "inputs = { x = \"B,16\" }\nruntimes = [\"onnxruntime\"]\ndtypes = [\"bfloat16\"]");
  // doctest re-enters the test case for every SUBCASE; the run happens once.
  static const std::vector<rnx::runner::bench_side> sides =
      rnx::runner::run_bench(options_for(write_manifest("kinds", body)));
  REQUIRE(sides.size() == 1);
  const auto r = by_label(sides[0]);
  const std::string dp = (d / "double.py").string();

  SUBCASE("healthy kernels: samples from two processes, recorded in groups, checked against float64") {
    for (const char* label :
         {"double/eager/float32/b2", "double/torchscript/float32/b2", "kernelbench/eager/float32/b4",
          "scripted/torchscript/float32/b2", "native/eager/float32/b2"}) {
      CAPTURE(label);
      const auto& res = r.at(label);
      CAPTURE(res.message);
      CHECK(res.status == rnx::result_status::ok);
      REQUIRE(res.groups.size() == 2);
      CHECK(std::accumulate(res.groups.begin(), res.groups.end(), std::int64_t{0}) ==
            static_cast<std::int64_t>(res.samples_ms.size()));
      CHECK(res.groups[0] >= 4);
      CHECK(res.groups[0] <= 6);
      for (double s : res.samples_ms) CHECK(s > 0);
      REQUIRE(res.max_abs_err.has_value());
      CHECK(*res.max_abs_err <= res.tol->atol + res.tol->rtol * 10);
      CHECK(res.device == "cpu");
    }
    CHECK(sides[0].env.env_id == rnx::compute_env_id(sides[0].env));
    CHECK(sides[0].env.threads == 1);
    // The machine's peaks, measured by the first worker and kept in the cache by env_id for every later run.
    CHECK(sides[0].env.peaks.at(rnx::gemm_peak_name("float32")) > 0);
    CHECK(sides[0].env.peaks.at(std::string(rnx::copy_peak_name)) > 0);
    CHECK(fs::exists(fs::path(RNX_TEST_CACHE_DIR) / "peaks" / (sides[0].env.env_id + ".json")));
    CHECK_FALSE(sides[0].env.torch.empty());
    CHECK_FALSE(sides[0].env.python.empty());
  }

  SUBCASE("every runtime carries the eager reference's work; a native kernel only what it declares") {
    for (const char* label : {"double/eager/float32/b2", "double/torchscript/float32/b2"}) {
      CAPTURE(label);
      REQUIRE(r.at(label).work);
      CHECK(r.at(label).work->source == rnx::work_source::counted);
      CHECK(*r.at(label).work->flops == 0);               // x * 2: the counter counts no elementwise work
      CHECK(*r.at(label).work->bytes == 2 * 4 * 2 * 16);  // read and written once
    }
    const auto& kb = r.at("kernelbench/eager/float32/b4").work;
    REQUIRE(kb);
    CHECK(*kb->flops == 2 * 4 * 32 * 32);                       // Linear(32, 32) at batch 4
    CHECK(*kb->bytes == 4 * (4 * 32 + 32 * 32 + 32 + 4 * 32));  // input, weight, bias, output
    const auto& native = r.at("native/eager/float32/b2").work;
    REQUIRE(native);
    CHECK(native->source == rnx::work_source::declared);
    CHECK_FALSE(native->flops);
    CHECK(*native->bytes == 3 * 4 * 2 * 32);
    CHECK_FALSE(r.at("scripted/torchscript/float32/b2").work);  // nothing counted, nothing declared
  }

  SUBCASE("a runtime that does not apply is skipped with the reason") {
    CHECK(r.at("scripted/eager/float32/b2").status == rnx::result_status::skipped);
    CHECK(r.at("scripted/eager/float32/b2").message ==
          "eager does not apply to a TorchScript .pt file (it is already compiled); list runtimes = [\"torchscript\"] "
          "for this kernel");
    CHECK(r.at("no_bf16_onnx/onnxruntime/bfloat16/b2").status == rnx::result_status::skipped);
    CHECK(r.at("no_bf16_onnx/onnxruntime/bfloat16/b2").message ==
          "onnxruntime: numpy has no bfloat16, so bfloat16 inputs cannot be fed");
    const auto& gpu = r.at("gpu_only/eager/float32/b2");
    if (gpu.status != rnx::result_status::ok) {
      CHECK(gpu.status == rnx::result_status::skipped);
      CHECK(gpu.message ==
            "device cuda: CUDA is not available here (no GPU, or a CPU-only torch); run on a GPU machine "
            "or set device = \"cpu\"");
    }
  }

  SUBCASE("missing entry") {
    CHECK(r.at("missing_entry/eager/float32/b2").status == rnx::result_status::error);
    CHECK(r.at("missing_entry/eager/float32/b2").message ==
          "kernel \"missing_entry\": loading " + dp +
              " failed: entry 'nope' not found (functions defined there: run); set entry = \"NAME\" for this kernel in "
              "rnx.toml");
  }

  SUBCASE("wrong arity") {
    CHECK(r.at("arity/eager/float32/b2").status == rnx::result_status::error);
    CHECK(r.at("arity/eager/float32/b2").message ==
          "kernel \"arity\" (" + (d / "two_args.py").string() +
              "): input(s) x of the manifest are not parameters of entry 'run(a, b)' (parameters: a, b; inputs: x); "
              "inputs are bound by name: name each input after the parameter it is for");
    CHECK(r.at("unbound/eager/float32/b2").status == rnx::result_status::error);
    CHECK(r.at("unbound/eager/float32/b2").message ==
          "kernel \"unbound\" (" + (d / "two_args.py").string() +
              "): parameter(s) b of entry 'run(a, b)' have no input in the manifest (inputs: a); add them to the "
              "kernel's inputs table");
  }

  SUBCASE("inputs are bound by name, not by the order the manifest lists them in") {
    // matmul.py: run(a, b) = a @ b; bound by position, (16, 4) @ (2, 16) would not multiply.
    const auto& res = r.at("swapped/eager/float32/b2");
    CAPTURE(res.message);
    CHECK(res.status == rnx::result_status::ok);
  }

  SUBCASE("shape mismatch") {
    const std::string mp = (d / "matmul.py").string();
    CHECK(r.at("mismatch/eager/float32/b2").status == rnx::result_status::error);
    CHECK(r.at("mismatch/eager/float32/b2").message ==
          "kernel \"mismatch\" (" + mp +
              ") failed: RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x16 and "
              "8x4) (at " +
              mp + ":3) [inputs: a=[2, 16], b=[8, 4]]");
  }

  SUBCASE("a Python exception") {
    const std::string rp = (d / "raises.py").string();
    CHECK(r.at("raises/eager/float32/b2").status == rnx::result_status::error);
    CHECK(r.at("raises/eager/float32/b2").message == "kernel \"raises\" (" + rp +
                                                         ") failed: ValueError: negative sizes are not supported (at " +
                                                         rp + ":3) [inputs: x=[2, 16]]");
  }

  SUBCASE("a diverging result is diverged, with errors, and is not timed") {
    const auto& res = r.at("diverges/eager/float32/b2");
    CHECK(res.status == rnx::result_status::diverged);
    CHECK(res.samples_ms.empty());
    REQUIRE(res.max_abs_err.has_value());
    CHECK(*res.max_abs_err > 1e-4);
    CHECK(res.message.rfind("eager output differs from the float64 eager reference: output 0: ", 0) == 0);
    // Rounding explains little of a float16 computation behind a float32 kernel: the yardstick stays near float32's.
    CHECK(res.message.find(" of 512 elements outside rtol=1.3e-06, atol=") != std::string::npos);
    CHECK(res.message.find("counted only up to 256x the ") != std::string::npos);
    REQUIRE(res.tol.has_value());
    CHECK(res.tol->atol < 2e-3);
  }

  SUBCASE("a segfault costs only its own configuration") {
    const auto& res = r.at("segfault/eager/float32/b2");
    CHECK(res.status == rnx::result_status::error);
    CHECK(res.message.rfind("the worker process crashed (killed by signal 11 (Segmentation fault)) while running this "
                            "configuration",
                            0) == 0);
  }

  SUBCASE("a kernel flooding the result pipe is stopped at the one message maximum, with the reason") {
    const auto& res = r.at("flood/eager/float32/b2");
    CHECK(res.status == rnx::result_status::error);
    CHECK(res.message.rfind("the worker process crashed (it wrote a message longer than 32 MiB (the most a "
                            "worker's message may take) and was stopped) while running this configuration",
                            0) == 0);
  }

  SUBCASE("a hang is killed after its timeout") {
    const auto& res = r.at("hang/eager/float32/b2");
    CHECK(res.status == rnx::result_status::error);
    CHECK(res.message ==
          "timed out: no result within 4 s, the worker was killed (a hang?); if the kernel is just slow, "
          "raise timeout_s for it in rnx.toml");
  }

  SUBCASE("a C++ kernel that does not compile shows the compiler's complaint") {
    const auto& res = r.at("broken_cpp/eager/float32/b2");
    CHECK(res.status == rnx::result_status::error);
    CHECK(res.message.rfind((d / "broken.cpp").string() + ": compiling the kernel failed (", 0) == 0);
    CHECK(res.message.find("'undeclared_thing' was not declared in this scope") != std::string::npos);
  }
}

TEST_CASE("the reference check's yardstick: untouched long reductions are ok, real divergences are diverged") {
  const fs::path d = data / "kernels";
  std::string body;
  body += kernel("gemm", d / "gemm.py", "inputs = { a = \"B,4096\", b = \"4096,B\" }\nbatch = [256]");
  body += kernel("cumsum", d / "cumsum.py", "inputs = { x = \"B,32768\" }\nbatch = [4]");
  body += kernel("one_off", d / "one_element_off.py", "inputs = { x = \"B,256\" }");
  body += kernel("nan", d / "nan_in_dtype.py", "inputs = { x = \"B,256\" }");
  body += kernel("traced", d / "traced_only.py", "inputs = { x = \"B,256\" }\nruntimes = [\"eager\", \"torchscript\"]");
  body += kernel("strict", d / "gemm.py",
                 "inputs = { a = \"B,4096\", b = \"4096,B\" }\nbatch = [64]\n"
                 "tolerance = { float32 = { rtol = 1e-9, atol = 1e-9 } }");
  static const std::vector<rnx::runner::bench_side> sides =
      rnx::runner::run_bench(options_for(write_manifest("yardstick", body)));
  REQUIRE(sides.size() == 1);
  const auto r = by_label(sides[0]);

  SUBCASE("a float32 GEMM with K = 4096 and a 32768-long cumsum, untouched, are ok") {
    for (const char* label : {"gemm/eager/float32/b256", "cumsum/eager/float32/b4"}) {
      CAPTURE(label);
      const auto& res = r.at(label);
      CAPTURE(res.message);
      CHECK(res.status == rnx::result_status::ok);
      REQUIRE(res.tol.has_value());
      REQUIRE(res.max_abs_err.has_value());
      CHECK(res.tol->rtol == doctest::Approx(1.3e-6));
    }
    // The GEMM's own rounding is above torch.testing's float32 atol; the applied atol grew with it.
    CHECK(*r.at("gemm/eager/float32/b256").max_abs_err > 1e-5);
    CHECK(r.at("gemm/eager/float32/b256").tol->atol > 1e-5);
  }

  SUBCASE("a manifest tolerance is the base: stricter than the dtype's own rounding, the yardstick still widens it") {
    const auto& res = r.at("strict/eager/float32/b64");
    CAPTURE(res.message);
    CHECK(res.status == rnx::result_status::ok);
    REQUIRE(res.tol.has_value());
    CHECK(res.tol->rtol == doctest::Approx(1e-9));
    CHECK(res.tol->atol > 1e-9);
  }

  SUBCASE("1e-3 at one element, a NaN, and a runtime-specific error are diverged, naming the yardstick") {
    for (const char* label : {"one_off/eager/float32/b2", "nan/eager/float32/b2", "traced/torchscript/float32/b2"}) {
      CAPTURE(label);
      const auto& res = r.at(label);
      CAPTURE(res.message);
      CHECK(res.status == rnx::result_status::diverged);
      CHECK(res.samples_ms.empty());
      CHECK(res.message.find("; tolerance rtol=1.3e-06, atol=1e-05 (the base tolerance; 4x the eager float32 "
                             "computation's 99th-percentile error against float64, ") != std::string::npos);
    }
    CHECK(r.at("one_off/eager/float32/b2").message.find("1 of 512 elements outside") != std::string::npos);
    CHECK(r.at("nan/eager/float32/b2").message.find("got nan") != std::string::npos);
    CHECK(r.at("traced/torchscript/float32/b2").message.rfind("torchscript output differs", 0) == 0);
    // The same kernel's eager runtime is right.
    CHECK(r.at("traced/eager/float32/b2").status == rnx::result_status::ok);
  }
}

TEST_CASE("paired runs: base and head share worker processes in blocks, or say why they cannot") {
  const fs::path d = data / "kernels";
  std::string body;
  body += kernel("double", d / "double.py", "inputs = { x = \"B,16\" }\nruntimes = [\"eager\", \"torchscript\"]");
  body += kernel("helper", d / "with_helper" / "uses_helper.py", "inputs = { x = \"B,16\" }");
  body += kernel("native", d / "add.cpp", "inputs = { x = \"B,16\", y = \"B,16\" }");
  body += kernel("square", d / "kb_square.py", "batch = [1, 4]");
  fs::path head = write_manifest("paired-head", body);
  // The base: the same kernels in another file (a worktree of the base revision would be another folder).
  fs::path base = write_manifest("paired-base", body);
  auto o = options_for(head);
  o.manifests.push_back(base);
  o.processes = 2;
  o.max_processes = 2;
  const auto sides = rnx::runner::run_bench(o);
  REQUIRE(sides.size() == 2);
  REQUIRE(sides[0].pairing.has_value());
  REQUIRE(sides[1].pairing.has_value());
  CHECK(sides[0].pairing->id == sides[1].pairing->id);
  CHECK(sides[0].pairing->side == rnx::pair_side::head);
  CHECK(sides[1].pairing->side == rnx::pair_side::base);
  CHECK(sides[0].pairing->block == 4);
  CHECK(sides[0].pairing->looks == 1);
  auto h = by_label(sides[0]);
  auto b = by_label(sides[1]);

  SUBCASE("in-process: whole blocks of four, the same samples per process on both sides") {
    for (const std::string label : {"double/eager/float32/b2", "double/torchscript/float32/b2"}) {
      INFO(label);
      const auto& hr = h.at(label);
      const auto& br = b.at(label);
      REQUIRE(hr.status == rnx::result_status::ok);
      REQUIRE(br.status == rnx::result_status::ok);
      // A few samples of microsecond calls: the control or the load-order check can read noise as a steer, and the
      // pair then goes on by process pairing, saying so; the blocks are not then this subcase's to check.
      if (rnx::test::split_by_steer_check(hr)) {
        MESSAGE(label << ": " << hr.pairing_reason);
        continue;
      }
      CHECK(hr.pairing == rnx::pairing_mode::in_process);
      CHECK(br.pairing == rnx::pairing_mode::in_process);
      CHECK(hr.pairing_reason.empty());
      // Two processes, less one where a control tripped and the next cleared it (that process is not counted).
      CHECK(!hr.groups.empty());
      CHECK(hr.groups.size() <= 2);
      CHECK(hr.groups == br.groups);
      for (auto g : hr.groups) CHECK(g % 4 == 0);
      // The side loaded first in each process, recorded alike on both documents (the verdict's two arms).
      CHECK(hr.first_sides.size() == hr.groups.size());
      CHECK(hr.first_sides == br.first_sides);
      CHECK(hr.samples_ms.size() == br.samples_ms.size());
      CHECK(hr.max_abs_err.has_value());  // each side checked against its own float64 reference
      CHECK(br.max_abs_err.has_value());
    }
  }

  SUBCASE("a kernel importing from its folder falls back to separate processes, with the reason") {
    const auto& hr = h.at("helper/eager/float32/b2");
    REQUIRE(hr.status == rnx::result_status::ok);
    CHECK(hr.pairing == rnx::pairing_mode::process);
    CHECK(hr.pairing_reason == (d / "with_helper" / "uses_helper.py").string() +
                                   " imports modules from its own folder (scale_helper), which two revisions in one "
                                   "process would share");
    CHECK(b.at("helper/eager/float32/b2").pairing == rnx::pairing_mode::process);
    CHECK(hr.groups.size() == 2);
  }

  SUBCASE("C++ kernels are paired by process") {
    const auto& hr = h.at("native/eager/float32/b2");
    CHECK(hr.pairing == rnx::pairing_mode::process);
    CHECK(hr.pairing_reason ==
          "C++/CUDA kernels of two revisions cannot share a process: both export the same symbols");
  }

  SUBCASE("a KernelBench file without batch_size is measured once, and says why") {
    CHECK(h.count("square/eager/float32/b4") == 0);
    const auto& hr = h.at("square/eager/float32/b1");
    REQUIRE(hr.status == rnx::result_status::ok);
    CHECK(hr.message == "measured once, at batch 1, not at 4: " + (d / "kb_square.py").string() +
                            " sets no module-level batch_size, so get_inputs() makes the same inputs at every batch");
    // In-process, unless a steering check read noise as a steer (see the in-process subcase), which it then says.
    CHECK_MESSAGE((hr.pairing == rnx::pairing_mode::in_process || rnx::test::split_by_steer_check(hr)),
                  hr.pairing_reason);
  }
}

TEST_CASE("self-check: a module with weights paired with itself loads twice; the side loaded first alternates") {
  // What `rnx bench --self-check` runs: the same manifest as head and base. No timing is asserted: only that both
  // sides were loaded separately (two imports per worker, under the base's and the head's module names, and the
  // base's twin for the control where the base goes first), that they
  // were measured in-process, and that the side imported first alternates from one process to the next.
  const fs::path d = data / "kernels";
  const fs::path log = fs::temp_directory_path() / ("rnx-import-log-" + std::to_string(::getpid()));
  fs::remove(log);
  ::setenv("RNX_TEST_IMPORT_LOG", log.c_str(), 1);
  const fs::path m = write_manifest("self-check", kernel("norm", d / "kb_norm_logged.py", "batch = [4]"));
  auto o = options_for(m);
  o.manifests.push_back(m);
  o.processes = 2;
  o.max_processes = 2;
  std::ostringstream progress;
  o.log = &progress;
  const auto sides = rnx::runner::run_bench(o);
  ::unsetenv("RNX_TEST_IMPORT_LOG");
  REQUIRE(sides.size() == 2);
  const rnx::run_result hr = by_label(sides[0]).at("norm/eager/float32/b4");
  const rnx::run_result br = by_label(sides[1]).at("norm/eager/float32/b4");
  REQUIRE(hr.status == rnx::result_status::ok);
  REQUIRE(br.status == rnx::result_status::ok);
  INFO("pairing reason: " << hr.pairing_reason << "\nprogress:\n" << progress.str());

  // Imports per worker process, in the order they happened.
  std::vector<std::string> pids;
  std::map<std::string, std::vector<std::string>> imports;
  std::ifstream in(log);
  for (std::string pid, name; in >> pid >> name;) {
    if (!imports.count(pid)) pids.push_back(pid);
    imports[pid].push_back(name);
  }
  // A process with the base first imports the base's twin for the control (the base's file once more) before the
  // head (docs/runner.md, the control).
  const std::vector<std::string> base_first{"rnx_base_norm", "rnx_twin_norm", "rnx_head_norm"};
  const std::vector<std::string> head_first{"rnx_head_norm", "rnx_base_norm"};
  // A loaded machine can read its control as a steer (a base slower beside its head than alone): the run says so,
  // and goes on as the control rule says (docs/runner.md); the pairs are identical code, so that is noise.
  const bool tripped = progress.str().find("[control] norm/eager/float32/b4: the base ran") != std::string::npos &&
                       progress.str().find("this process's samples are not counted") != std::string::npos;
  if (!tripped && rnx::test::split_by_steer_check(hr)) {
    // The load-order check read the two processes' ratios apart (noise on a loaded machine): both orders ran, and
    // the pair went on by process pairing, saying why.
    CHECK(br.pairing == rnx::pairing_mode::process);
    CHECK(hr.pairing_reason.find("the order the two were loaded in") != std::string::npos);
    REQUIRE(pids.size() >= 2);
    CHECK(imports[pids[0]] == base_first);
    CHECK(imports[pids[1]] == head_first);
  } else if (!tripped) {
    CHECK(hr.pairing == rnx::pairing_mode::in_process);
    CHECK(br.pairing == rnx::pairing_mode::in_process);
    CHECK(hr.groups.size() == 2);
    CHECK(hr.groups == br.groups);
    REQUIRE(pids.size() == 2);
    CHECK(imports[pids[0]] == base_first);
    CHECK(imports[pids[1]] == head_first);
    CHECK(progress.str().find("[pairing] norm/eager/float32/b4: side loaded first per process: base, head (base "
                              "first in 1 of 2)") != std::string::npos);
  } else if (hr.pairing == rnx::pairing_mode::in_process) {
    // Confirmed within the limit by the very next process, which loaded the base first again; the first is not
    // counted.
    CHECK(br.pairing == rnx::pairing_mode::in_process);
    CHECK(hr.groups.size() == 1);
    CHECK(hr.groups == br.groups);
    REQUIRE(pids.size() == 2);
    CHECK(imports[pids[0]] == base_first);
    CHECK(imports[pids[1]] == base_first);
    CHECK(progress.str().find("[pairing] norm/eager/float32/b4: side loaded first per process: base (base first in "
                              "1 of 1)") != std::string::npos);
  } else {
    CHECK(br.pairing == rnx::pairing_mode::process);
    CHECK(hr.pairing_reason.find("beside the head its time beside its twin") != std::string::npos);
    CHECK(rnx::test::split_by_steer_check(hr));
  }
  fs::remove(log);
}

TEST_CASE("a control beyond its limit in the last process is confirmed or cleared in one process more") {
  // A head that steers its base in the second process whose control ran, and in no other: with three processes,
  // the base first in the first and the third, that is the last one, and the schedule has no process left to
  // confirm it. It gets one more (the base first): there the head does not steer, the control clears the trip, and
  // the pair stays in-process with the tripped process left out (docs/runner.md, the control). Windows of 300 ms,
  // so that the machine's drift trips no other control (where one does, the test says so and stops).
  const fs::path d = data / "kernels";
  const fs::path count = fs::temp_directory_path() / ("rnx-steer-count-" + std::to_string(::getpid()));
  fs::remove(count);
  ::setenv("RNX_TEST_STEER_COUNT", count.c_str(), 1);
  const std::string inputs = "inputs = { a = \"B,192,192\", b = \"192,192\" }\nbatch = [1]";
  const fs::path head = write_manifest("steer-head", kernel("mm", d / "steer_late_head.py", inputs));
  const fs::path base = write_manifest("steer-base", kernel("mm", d / "steer_base.py", inputs));
  auto o = options_for(head);
  o.manifests.push_back(base);
  o.processes = 3;
  o.max_processes = 3;
  o.budget_ms = 300;
  std::ostringstream progress;
  o.log = &progress;
  const auto sides = rnx::runner::run_bench(o);
  ::unsetenv("RNX_TEST_STEER_COUNT");
  fs::remove(count);
  REQUIRE(sides.size() == 2);
  const rnx::run_result hr = by_label(sides[0]).at("mm/eager/float32/b1");
  INFO("pairing reason: " << hr.pairing_reason << "\nprogress:\n" << progress.str());
  REQUIRE(hr.status == rnx::result_status::ok);
  // Never settled by the schedule running out.
  CHECK(progress.str().find("no later process could time it again") == std::string::npos);
  if (rnx::test::split_by_steer_check(hr)) {
    // A loaded machine read another window as a steer and a second control confirmed one: the pair went on by
    // process pairing, saying so (the control's own rule; not what this test is about).
    MESSAGE("measured by process pairing: " << hr.pairing_reason);
    return;
  }
  // The steered process tripped and the control of the granted fourth process cleared it.
  CHECK(hr.pairing == rnx::pairing_mode::in_process);
  CHECK(progress.str().find("(a second control; the first found") != std::string::npos);
  CHECK(progress.str().find("[4/4]") != std::string::npos);
}

TEST_CASE("filters select configurations; an unknown kernel is a usage error naming the choices") {
  std::string body = kernel("double", data / "kernels" / "double.py", "inputs = { x = \"B,8\" }\nbatch = [1, 2]");
  fs::path manifest = write_manifest("filters", body);
  auto o = options_for(manifest);
  o.filters.kernels = {"nope"};
  try {
    rnx::runner::run_bench(o);
    FAIL("expected a usage error");
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::usage);
    CHECK(std::string(e.what()) == "--kernel nope: no such kernel in " + manifest.string() + " (kernels: double)");
  }
  o.filters.kernels = {"double"};
  o.filters.batches = {2};
  o.processes = 1;
  auto sides = rnx::runner::run_bench(o);
  REQUIRE(sides[0].results.size() == 1);
  CHECK(sides[0].results[0].batch == 2);
  CHECK(sides[0].results[0].groups.size() == 1);
}

TEST_CASE("instability: disagreeing process medians and bimodal samples are named with figures") {
  std::vector<double> steady;
  for (int p = 0; p < 3; ++p) {
    for (int i = 0; i < 10; ++i) steady.push_back(1.0 + 0.01 * ((i * 7 + p) % 5));
  }
  CHECK_FALSE(rnx::runner::instability(steady, {10, 10, 10}).has_value());

  std::vector<double> split;
  split.reserve(20);
  for (int i = 0; i < 10; ++i) split.push_back(0.73 + 0.001 * (i % 3));
  for (int i = 0; i < 10; ++i) split.push_back(18.0 + 0.01 * (i % 3));
  auto why = rnx::runner::instability(split, {10, 10});
  REQUIRE(why.has_value());
  CHECK(why->rfind("process medians disagree: 0.731, 18.01 ms (max/min 24.6x)", 0) == 0);
  // Its advice is what the printing commands accept; a side of a paired run is not told to measure paired.
  CHECK(why->find("rnx bench --pair BASE, rnx gate --mode paired") != std::string::npos);
  auto paired_why = rnx::runner::instability(split, {10, 10}, true);
  REQUIRE(paired_why.has_value());
  CHECK(paired_why->find("--pair") == std::string::npos);
  CHECK(paired_why->find("rerun on a quieter machine") != std::string::npos);

  std::vector<double> bimodal;
  bimodal.reserve(20);
  for (int i = 0; i < 20; ++i) bimodal.push_back(i % 2 ? 2.0 + 0.001 * i : 1.0 + 0.001 * i);
  auto why2 = rnx::runner::instability(bimodal, {});
  REQUIRE(why2.has_value());
  CHECK(why2->rfind("samples are bimodal: 50% near 1.009 ms and 50% near 2.01 ms", 0) == 0);

  // Two clusters of whole processes (drift between processes, 1.4 against 2.3 ms) are not bimodality and stay
  // below the 3x disagreement rule; a bimodal process among steady ones is named with its number.
  std::vector<double> drift;
  for (int p = 0; p < 4; ++p) {
    for (int i = 0; i < 10; ++i) drift.push_back((p % 2 ? 2.3 : 1.4) + 0.001 * i);
  }
  CHECK_FALSE(rnx::runner::instability(drift, {10, 10, 10, 10}).has_value());
  std::vector<double> one_bimodal(steady);
  for (int i = 0; i < 10; ++i) one_bimodal[10 + static_cast<std::size_t>(i)] = i % 2 ? 2.0 + 0.001 * i : 1.0;
  auto why3 = rnx::runner::instability(one_bimodal, {10, 10, 10});
  REQUIRE(why3.has_value());
  CHECK(why3->rfind("process 2: samples are bimodal: 50% near 1 ms and 50% near 2.005 ms", 0) == 0);

  CHECK(rnx::runner::median({3, 1, 2}) == 2);
  CHECK(rnx::runner::median_ci_relative_halfwidth({1, 1, 1, 1, 1, 1, 1}) == 0);
}
