// The one way rnx starts a child program: argv only, never a shell string, so no argument (a git ref, a path) can
// be read as shell syntax. run_process gives the child stdin text, a folder, extra environment and a deadline and
// drains its stdout and stderr with poll(), so a chatty child never deadlocks rnx; run_capture is the short form
// for a helper whose output is read as one string.
//
//   std::string out;
//   int status = rnx::run_capture({"git", "-C", repo, "rev-parse", ref}, out, rnx::capture::stdout_only);
//
// Both start their child with start_program, which a caller that wires the child's descriptors itself uses
// directly (the runner's worker: a result pipe on fd 3, a job pipe on stdin, its lane's cores; the verifier's
// candidate host: its channel on fds 4 and 5, killed with its parent). One other place forks itself, because its
// child needs set-up no plan here offers: the sandbox (sandbox/src/launch.cpp: namespaces, mounts, seccomp,
// dropped privileges).
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <sys/types.h>
#include <utility>
#include <string>
#include <vector>

namespace rnx {

// The most one message from a worker process may take (a line of the runner's or the verify worker's output, read
// through rnx::message_lines): the code such a worker runs is not trusted, and a reader that buffers until a
// terminator would otherwise grow without limit. A worker that writes past it is stopped, with that reason.
inline constexpr std::size_t max_worker_message_bytes = std::size_t{32} << 20;

// Where the child's stdout and stderr go.
enum class capture {
  stdout_and_stderr,  // both into process_result::out, interleaved as written
  stdout_only,        // stdout into out; stderr to /dev/null
  separately,         // stdout into out, stderr into err
  inherit,            // both to rnx's own stdout and stderr (the user sees the child's output live)
};

struct process_options {
  capture what = capture::separately;
  std::filesystem::path cwd;                   // empty = rnx's current folder
  std::map<std::string, std::string> env_set;  // added to / replacing the inherited environment
  std::vector<std::string> env_unset;          // names removed from the inherited environment (env_set wins)
  std::string input;                           // written to the child's stdin, then closed (empty: EOF at once)
  // None: wait as long as the child runs. With a deadline the child runs in its own process group, and the
  // deadline kills the whole group (a shell script's python too).
  std::optional<std::chrono::milliseconds> timeout;
  std::size_t max_output = 32u << 20;  // bytes kept of each captured stream; the rest is read and dropped
};

struct process_result {
  int exit_code = -1;  // -1 when killed by a signal or the deadline
  int signal = 0;      // the signal that ended it, else 0
  bool timed_out = false;
  std::string out;
  std::string err;
};

// How one child program starts. start_program builds everything the child needs (the program's path, argv and
// environment as C arrays, the descriptor moves) before it forks, so that the child, forked perhaps from one of
// several threads while another holds the allocator's lock, makes only async-signal-safe calls until execve.
struct program_start {
  std::vector<std::string> argv;               // argv[0] is looked up on PATH when it has no '/'
  std::map<std::string, std::string> env_set;  // added to / replacing the inherited environment
  // Names removed from the inherited environment (a kernel's process: rnx::kernel_withheld_variables); env_set wins.
  std::vector<std::string> env_unset;
  std::filesystem::path cwd;                     // empty = rnx's current folder
  std::vector<std::pair<int, int>> descriptors;  // {our descriptor, its number in the child}
  std::vector<int> to_null;                      // the child's descriptors opened on /dev/null
  bool own_group = false;                        // its own process group (a kill of the group ends its children)
  std::vector<int> cores;                        // CPUs the child is bound to before it execs; empty = ours
  bool close_others = false;                     // every descriptor but 0-2 and the ones above closed in the child
  // Killed (SIGKILL) when the thread that started it ends; a parent that is already gone by the time the child
  // arms this is seen too, and the child then never runs its program.
  bool die_with_parent = false;
};

// Starts the program and returns its pid, once the child has exec'd. A program that cannot start (missing, not
// executable, a folder that is not there) throws rnx::error(not_found) naming it, and leaves no child behind.
pid_t start_program(const program_start& start);

// argv[0] is looked up on PATH when it has no '/'. A program that cannot start throws rnx::error(not_found) naming
// it; a non-zero exit is reported in the result, not thrown.
process_result run_process(const std::vector<std::string>& argv, const process_options& options = {});

// Runs argv with LC_ALL=C, capturing its stdout (and stderr, unless stdout_only) into `output`; returns the exit
// status (128 + signal when killed, 127 with a message in `output` when it cannot be executed). `what` is
// stdout_only or stdout_and_stderr (any other value reads as stdout_and_stderr).
int run_capture(const std::vector<std::string>& argv, std::string& output, capture what = capture::stdout_and_stderr);

// "Segmentation fault" for SIGSEGV and so on.
std::string signal_name(int signal_number);

// Where one of rnx's helper programs is (rnx-runner-worker, rnx-profile-worker): the environment variable
// `env_var` when set and not empty, else `name` beside the running executable when it is there, else `name`
// (looked up on PATH when started).
std::filesystem::path helper_program_path(const char* env_var, const char* name);

}  // namespace rnx
