// rnx::run_process and rnx::run_capture (common/include/rnx/common/process.hpp) on real programs: stdin text, a
// folder, extra environment, separate or merged or inherited output, a deadline that ends the child's process group,
// a program that does not exist, and arguments that a shell would have expanded passed as plain text.
#include "rnx/common/error.hpp"
#include "rnx/common/process.hpp"

#include <doctest/doctest.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

using namespace rnx;
namespace fs = std::filesystem;

namespace {

struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string pattern = (fs::temp_directory_path() / "rnx-process-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = fs::canonical(pattern);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("run_process: stdin text comes back on stdout, stderr apart, exit status reported") {
  process_options o;
  o.input = "line one\nline two\n";
  process_result r = run_process({"sh", "-c", "cat; echo oops >&2; exit 3", "ignored"}, o);
  CHECK(r.out == "line one\nline two\n");
  CHECK(r.err == "oops\n");
  CHECK(r.exit_code == 3);
  CHECK(r.signal == 0);
  CHECK_FALSE(r.timed_out);
}

TEST_CASE("run_process: four MiB through cat both ways without a deadlock; max_output keeps the head") {
  process_options o;
  o.input = std::string(4u << 20, 'x');
  process_result whole = run_process({"cat"}, o);
  CHECK(whole.exit_code == 0);
  CHECK(whole.out == o.input);
  o.max_output = 1000;
  process_result head = run_process({"cat"}, o);
  CHECK(head.exit_code == 0);
  CHECK(head.out == std::string(1000, 'x'));
}

TEST_CASE("run_process: folder and environment; the inherited environment stays") {
  temp_dir dir;
  process_options o;
  o.cwd = dir.path;
  o.env_set["RNX_PROCESS_TEST"] = "set by the test";
  process_result r = run_process({"sh", "-c", "pwd; printf '%s\\n' \"$RNX_PROCESS_TEST\"; test -n \"$PATH\""}, o);
  CHECK(r.exit_code == 0);
  CHECK(r.out == dir.path.string() + "\nset by the test\n");
}

TEST_CASE("run_process: the deadline kills the child and what it started; the result says so") {
  process_options o;
  o.timeout = std::chrono::milliseconds(300);
  process_result r = run_process({"sh", "-c", "sleep 60 & sleep 60; echo never"}, o);
  CHECK(r.timed_out);
  CHECK(r.exit_code == -1);
  CHECK(r.signal == SIGKILL);
  CHECK(r.out.empty());
  SUBCASE("a child that closes its output and keeps running still has the deadline") {
    process_result quiet = run_process({"sh", "-c", "exec >&- 2>&-; sleep 60"}, o);
    CHECK(quiet.timed_out);
    CHECK(quiet.signal == SIGKILL);
  }
}

TEST_CASE("run_process: capture modes") {
  process_options o;
  const std::vector<std::string> both{"sh", "-c", "echo out; echo err >&2"};
  o.what = capture::stdout_and_stderr;
  process_result merged = run_process(both, o);
  CHECK(merged.out.find("out\n") != std::string::npos);
  CHECK(merged.out.find("err\n") != std::string::npos);
  CHECK(merged.err.empty());
  o.what = capture::stdout_only;
  process_result only = run_process(both, o);
  CHECK(only.out == "out\n");
  CHECK(only.err.empty());
  o.what = capture::inherit;
  process_result shown = run_process({"sh", "-c", "exit 4"}, o);
  CHECK(shown.exit_code == 4);
  CHECK(shown.out.empty());
}

TEST_CASE("a program that does not exist: run_process throws not_found naming it; run_capture returns 127") {
  try {
    run_process({"rnx-no-such-program-here"});
    FAIL("no error");
  } catch (const error& e) {
    CHECK(e.code() == errc::not_found);
    CHECK(std::string(e.what()).find("rnx-no-such-program-here") != std::string::npos);
  }
  std::string out;
  CHECK(run_capture({"rnx-no-such-program-here"}, out) == 127);
  CHECK(out.find("rnx-no-such-program-here") != std::string::npos);
}

TEST_CASE("run_capture: LC_ALL=C, stdout_only, 128 + signal when killed") {
  std::string out;
  CHECK(run_capture({"sh", "-c", "printf '%s' \"$LC_ALL\"; echo hidden >&2"}, out, capture::stdout_only) == 0);
  CHECK(out == "C");
  std::string merged;
  CHECK(run_capture({"sh", "-c", "echo shown >&2"}, merged) == 0);
  CHECK(merged == "shown\n");
  std::string none;
  CHECK(run_capture({"sh", "-c", "kill -TERM $$"}, none) == 128 + SIGTERM);
}

TEST_CASE("arguments a shell would expand reach the program as plain text and run nothing") {
  temp_dir dir;
  const std::string marker = (dir.path / "touched").string();
  for (const std::string& arg :
       {"x'$(touch " + marker + ")'", "$(touch " + marker + ")", "`touch " + marker + "`", "main;touch " + marker}) {
    std::string out;
    CHECK(run_capture({"printf", "%s", arg}, out) == 0);
    CHECK(out == arg);
  }
  CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("helper_program_path: the environment variable first, else the bare name when none stands beside rnx") {
  ::setenv("RNX_TEST_HELPER_PATH", "/opt/elsewhere/rnx-helper", 1);
  CHECK(helper_program_path("RNX_TEST_HELPER_PATH", "rnx-no-such-helper") == fs::path("/opt/elsewhere/rnx-helper"));
  ::setenv("RNX_TEST_HELPER_PATH", "", 1);
  CHECK(helper_program_path("RNX_TEST_HELPER_PATH", "rnx-no-such-helper") == fs::path("rnx-no-such-helper"));
  ::unsetenv("RNX_TEST_HELPER_PATH");
  CHECK(helper_program_path("RNX_TEST_HELPER_PATH", "rnx-no-such-helper") == fs::path("rnx-no-such-helper"));
  const fs::path self = fs::read_symlink("/proc/self/exe");
  CHECK(helper_program_path("RNX_TEST_HELPER_PATH", self.filename().c_str()) == self);
}
