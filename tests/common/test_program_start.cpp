// rnx::start_program (common/include/rnx/common/process.hpp): starts from many threads at once while other threads
// allocate (the child after fork allocates nothing, so no allocator lock held at the fork can stop it), descriptors
// placed even where a source has another's target number, inherited descriptors closed, a bound CPU, a child that
// dies with its parent, and a program or folder that is not there reported without a child left behind. No timing is
// asserted: ctest's TIMEOUT bounds the run.
#include "rnx/common/error.hpp"
#include "rnx/common/process.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace rnx;

namespace {

// How the child ended: its exit status, or 128 + the signal that ended it.
int wait_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs the plan with a pipe on the child's stdout; returns what it wrote and its exit status.
std::pair<std::string, int> output_of(program_start plan) {
  int out[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  plan.descriptors.emplace_back(out[1], 1);
  const pid_t pid = start_program(plan);
  ::close(out[1]);
  std::string text;
  char buffer[4096];
  ssize_t got;
  while ((got = ::read(out[0], buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(got));
  ::close(out[0]);
  return {text, wait_status(pid)};
}

bool no_child_left() { return ::waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD; }

}  // namespace

TEST_CASE("start_program: 1,000 starts from 8 threads while 2 threads allocate; every one exits 0") {
  constexpr int threads = 8;
  constexpr int starts_each = 125;
  std::atomic<bool> starting{true};
  std::vector<std::thread> allocators;
  allocators.reserve(2);
  for (int a = 0; a < 2; ++a) {
    allocators.emplace_back([&starting, a] {
      std::vector<std::unique_ptr<char[]>> held(64);
      for (std::size_t i = 0; starting.load(std::memory_order_relaxed); ++i) {
        const std::size_t size = 16 + (i * 7919 + static_cast<std::size_t>(a)) % 65536;
        held[i % held.size()] = std::make_unique<char[]>(size);
        held[i % held.size()][size - 1] = 1;  // touched, so the allocation is not optimised away
        void* raw = std::malloc(size);
        std::free(raw);
      }
    });
  }
  std::atomic<int> clean{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> lanes;
  lanes.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    lanes.emplace_back([&] {
      program_start plan;
      plan.argv = {"/bin/true"};
      plan.to_null = {0, 1, 2};
      plan.own_group = true;
      plan.close_others = true;
      for (int i = 0; i < starts_each; ++i) {
        try {
          (wait_status(start_program(plan)) == 0 ? clean : failed)++;
        } catch (const error&) {
          failed++;
        }
      }
    });
  }
  for (auto& l : lanes) l.join();
  starting = false;
  for (auto& a : allocators) a.join();
  CHECK(clean.load() == threads * starts_each);
  CHECK(failed.load() == 0);
  CHECK(no_child_left());
}

TEST_CASE("start_program: two descriptors swapped into each other's numbers each reach the child") {
  int first[2], second[2];
  REQUIRE(::pipe2(first, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(second, O_CLOEXEC) == 0);
  program_start plan;
  const std::string script =
      "printf first >&" + std::to_string(second[1]) + "; printf second >&" + std::to_string(first[1]);
  plan.argv = {"sh", "-c", script};
  plan.descriptors = {{first[1], second[1]}, {second[1], first[1]}};
  const pid_t pid = start_program(plan);
  ::close(first[1]);
  ::close(second[1]);
  CHECK(wait_status(pid) == 0);
  char buffer[16] = {};
  CHECK(::read(first[0], buffer, sizeof buffer - 1) == 5);
  CHECK(std::string(buffer) == "first");
  std::memset(buffer, 0, sizeof buffer);
  CHECK(::read(second[0], buffer, sizeof buffer - 1) == 6);
  CHECK(std::string(buffer) == "second");
  for (int fd : {first[0], second[0]}) ::close(fd);
}

TEST_CASE("start_program: close_others closes an inherited descriptor; without it the child keeps it") {
  const int inherited = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC: a library's forgotten descriptor
  REQUIRE(inherited > 2);
  program_start plan;
  plan.argv = {"sh", "-c", "test -e /proc/self/fd/" + std::to_string(inherited)};
  CHECK(wait_status(start_program(plan)) == 0);
  plan.close_others = true;
  CHECK(wait_status(start_program(plan)) == 1);
  ::close(inherited);
}

TEST_CASE("start_program: folder, environment, process group and cores as planned") {
  cpu_set_t allowed;
  REQUIRE(::sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  int core = 0;
  while (!CPU_ISSET(core, &allowed)) ++core;
  program_start plan;
  plan.argv = {"sh", "-c",
               "pwd; printf '%s\\n' \"$RNX_START_TEST\"; test \"$(cut -d' ' -f5 /proc/$$/stat)\" -eq $$ && echo group; "
               "grep Cpus_allowed_list /proc/self/status | tr -d ' \\t'"};
  plan.cwd = "/";
  plan.env_set["RNX_START_TEST"] = "planned";
  plan.own_group = true;
  plan.cores = {core};
  const auto [text, status] = output_of(plan);
  CHECK(status == 0);
  CHECK(text == "/\nplanned\ngroup\nCpus_allowed_list:" + std::to_string(core) + "\n");
}

TEST_CASE("start_program: a missing program or folder throws not_found naming it and leaves no child") {
  program_start missing;
  missing.argv = {"rnx-no-such-program-here"};
  try {
    start_program(missing);
    FAIL("no error");
  } catch (const error& e) {
    CHECK(e.code() == errc::not_found);
    CHECK(std::string(e.what()).find("rnx-no-such-program-here") != std::string::npos);
  }
  program_start nowhere;
  nowhere.argv = {"/bin/true"};
  nowhere.cwd = "/rnx-no-such-folder";
  try {
    start_program(nowhere);
    FAIL("no error");
  } catch (const error& e) {
    CHECK(e.code() == errc::not_found);
    CHECK(std::string(e.what()).find("/rnx-no-such-folder") != std::string::npos);
  }
  program_start not_executable;
  not_executable.argv = {"/etc/passwd"};
  CHECK_THROWS_AS(start_program(not_executable), error);
  CHECK(no_child_left());
}

TEST_CASE("start_program: die_with_parent kills the child when the process that started it ends") {
  // This process adopts the orphan (a subreaper), so it can wait for the grandchild after its parent is gone.
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  int report[2];
  REQUIRE(::pipe(report) == 0);
  const pid_t parent = ::fork();
  REQUIRE(parent >= 0);
  if (parent == 0) {
    program_start plan;
    plan.argv = {"sleep", "20"};  // ended by the signal long before; ctest's TIMEOUT bounds a failure
    plan.die_with_parent = true;
    const pid_t child = start_program(plan);
    if (::write(report[1], &child, sizeof child) != static_cast<ssize_t>(sizeof child)) ::_exit(3);
    ::_exit(0);
  }
  ::close(report[1]);
  pid_t child = -1;
  REQUIRE(::read(report[0], &child, sizeof child) == static_cast<ssize_t>(sizeof child));
  ::close(report[0]);
  CHECK(wait_status(parent) == 0);
  CHECK(wait_status(child) == 128 + SIGKILL);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}
