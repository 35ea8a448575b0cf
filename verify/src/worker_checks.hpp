// Inside rnx-verify-worker: the job it runs, its result channel (worker_io.cpp), and the verifier that runs every
// check on one candidate: the order of its stages (worker_checks.cpp), one case (worker_cases.cpp), the correctness
// stages (worker_correctness.cpp), the audit stages (worker_audit.cpp) and timing (worker_timing.cpp);
// worker_main.cpp ties them together.
#pragma once

#include <Python.h>

#include "rnx/common/json.hpp"
#include "rnx/runner/kernel.hpp"
#include "rnx/runner/tolerance.hpp"
#include "rnx/verify/verify.hpp"
#include "candidate_remote.hpp"
#include "worker_events.hpp"
#include "worker_kernels.hpp"
#include "worker_tensors.hpp"

#include <ATen/ATen.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rnx::verify::detail {

using runner::py_ref;

// The job as the worker runs it: the file the verifier wrote (job_file.hpp) and its inputs' shapes parsed.
struct job : job_file {
  std::vector<input_spec> shapes;  // inputs[i] parsed
};

job read_job(const std::filesystem::path& path);

// The result channel: one event a line (worker_events.hpp, written with its to_json) on the descriptor the verifier
// gave (--result-fd).
void set_result_fd(int fd);
void emit(const boost::json::object& event);
// One "check" line: the row `id` (its group from the check table) with its outcome, for `dtype` where one applies.
void emit_check(check_id id, outcome result, const std::string& detail, double seconds, std::string_view dtype = {});
double now_s();
std::string fmt(double v);

// Threads of this process (native) and of its Python interpreter.
int native_threads();
int python_threads();

// The audit row of the candidate's source, read without running it.
void emit_static_scan(const job& j, bool kernelbench);

// ---- the candidate's process, restarted after a crash ----

// The threads of a process by id, with the CPU time each has used (milliseconds; /proc/PID/task/TID/sched where the
// kernel keeps it, else utime + stime in clock ticks).
std::map<long, double> thread_cpu_ms(pid_t pid);

// The candidate's process for the whole run: started and loaded once, and started and loaded again when it ends on
// its own during a case (a crash, an exit), so one crash costs that case's row, not every row after it.
class candidate_slot {
 public:
  candidate_slot(std::filesystem::path job_path, at::Device device);
  remote_candidate& get() { return *current_; }
  // Loads the candidate in the current process; the error when it does not load.
  std::string load();
  // After a call failed: where the process ended on its own (not killed here for breaking the protocol, nor by its
  // seccomp filter) and fewer than max_restarts happened, starts a new one, loads the candidate in it and returns how
  // the old one ended; "" otherwise (the process still runs, or it stays gone).
  std::string restart_if_ended(const std::string& during);
  static constexpr int max_restarts = 3;
  const std::vector<std::string>& restarts() const { return restarts_; }
  // The current process's threads before the candidate was imported (native: id -> CPU ms; Python: a count).
  const std::map<long, double>& threads_before() const { return threads_before_; }
  int python_threads_before() const { return current_->python_threads_before(); }
  // Globals patched, in every process the run had.
  std::vector<std::string> patched() const;
  candidate_costs costs() const;
  // A process of the run that its seccomp filter killed (its end, as remote_candidate::ended says it).
  const std::string& killed_by_filter() const { return killed_by_filter_; }

 private:
  void start();
  std::filesystem::path job_path_;
  at::Device device_;
  std::unique_ptr<remote_candidate> current_;
  std::map<long, double> threads_before_;
  std::vector<std::string> restarts_;
  std::vector<std::string> patched_before_;  // of processes already ended
  candidate_costs costs_before_;
  std::string killed_by_filter_;
};

// ---- one verification case ----

// Draws of the stability stage's rounding spread (case_spec::rounding_draws).
inline constexpr int stability_rounding_draws = 4;

struct case_spec {
  std::string label;
  shape_variant shape;
  std::uint64_t seed = 0;
  std::function<at::Tensor(const at::Tensor&)> transform;  // on the float32 base values
  layout lay = layout::contiguous;
  // Adversarial cases (the stability stage): the reference in the dtype is also run on this many copies of the
  // inputs moved by the dtype's rounding step, and the yardstick is its largest error over all of them. On
  // ill-conditioned inputs one evaluation's error is a single draw from a heavy tail: an honest reordering of the
  // same arithmetic lands elsewhere in it (nn.MultiheadAttention against its own projections and SDPA written out,
  // on x * 10^U(-3,3): 0.258 against the reference's 0.0496; the reference itself on inputs moved by one ulp:
  // up to 2.4 times its own error).
  int rounding_draws = 0;
};

struct case_result {
  // narrowed: the candidate refused, or got wrong, a layout the reference's own inputs never have (a narrowing of
  // the contract, reported for review with its fix); on inputs like the reference's own every failure is a fail.
  enum class state { pass, fail, not_applicable, narrowed } status = state::pass;
  std::string message;
  double err = 0;
  double yard = 0;  // the eager reference's own error in this dtype: the honest-rounding yardstick
  double ref_max = 0;
  double allowance = 0;  // the accumulation allowance applied (tolerance_for)
  std::vector<at::Tensor> out;
  std::vector<at::Tensor> ref64;
};

// The judge: runs the reference here and the candidate in its own process (`candidate`), and decides every row.
class verifier {
 public:
  verifier(job j, kernel_pair& pair, candidate_slot& candidate) : job_(std::move(j)), pair_(pair), slot_(candidate) {}

  void run_all();

 private:
  tolerance tol_for(at::ScalarType dtype) const {
    std::string name(runner::dtype_name(dtype));
    if (auto it = job_.tolerances.find(name); it != job_.tolerances.end()) return {it->second.rtol, it->second.atol};
    return default_tolerance(name);
  }
  std::vector<at::Tensor> candidate_call(const std::vector<at::Tensor>& inputs, at::ScalarType dtype,
                                         const shape_variant& shape);
  std::vector<at::Tensor> make_base(const case_spec& c);
  bool reference_accepts(const std::vector<at::Tensor>& base, const case_spec& c, at::ScalarType dtype);
  bool foreign_layout(const case_spec& c, const std::vector<at::Tensor>& base) const;
  // A failed candidate call of case `c`: restarts the process where it ended (candidate_slot) and says so.
  std::string after_failed_call(const case_spec& c);
  // The base tolerance of `dtype` with atol widened to the accumulation allowance of a reduction (its N-term sum's
  // rounding in this dtype: accumulation_allowance), and the allowance's description ("" when it adds nothing).
  std::pair<tolerance, std::string> tolerance_for(const std::vector<at::Tensor>& wide,
                                                  const std::vector<at::Tensor>& ref64, at::ScalarType dtype,
                                                  const shape_variant& shape);
  double accumulation_allowance(const std::vector<at::Tensor>& wide, const std::vector<at::Tensor>& ref64,
                                at::ScalarType dtype, const shape_variant& shape, std::int64_t& terms);
  // Records (up to four each) the inputs the candidate's call of case `c` modified and the outputs sharing an input's
  // memory.
  void note_side_effects(const case_spec& c, const std::vector<at::Tensor>& inputs,
                         const std::vector<at::Tensor>& before);
  case_result evaluate(const case_spec& c, at::ScalarType dtype);
  // The reference's yardstick on one input set (`refdt`: the reference in `dtype`, `ref64`: in float64 on `wide`),
  // with the TF32 input-rounding error measured too where the reference dispatches convolutions or matrix products
  // and torch allows TF32 for them in `dtype` here (tolerance.hpp).
  runner::yardstick reference_yard(const std::vector<at::Tensor>& refdt, const std::vector<at::Tensor>& ref64,
                                   const std::vector<at::Tensor>& wide, at::ScalarType dtype,
                                   const shape_variant& shape);
  double rounding_spread(const case_spec& c, const std::vector<at::Tensor>& ref64, const std::vector<at::Tensor>& wide,
                         at::ScalarType dtype);
  // Emits the row `id` of one dtype, timed from `started`.
  void row(check_id id, outcome result, const std::string& detail, double started, at::ScalarType dtype);
  // What the stages of one dtype share: the declared batches, the smoke shape, the sizes the sweep varies, and
  // the seed counter (each stage draws its seeds in turn, so every case gets the same inputs in every run).
  struct dtype_run {
    at::ScalarType dtype = at::kFloat;
    std::vector<std::int64_t> declared;
    bool batched = false;
    shape_variant smoke_shape;
    std::vector<std::pair<std::string, std::int64_t>> dims;
    std::uint64_t base_seed = 0;
    std::uint64_t counter = 0;
    std::uint64_t next_seed() { return base_seed + 7919 * (++counter) + 104729 * static_cast<std::uint64_t>(dtype); }
  };
  dtype_run start_dtype(at::ScalarType dtype) const;
  static const std::vector<void (verifier::*)(dtype_run&)>& stages();
  // Runs the stages in order for one dtype, one report row (or two) each.
  void run_dtype(at::ScalarType dtype);
  void stage_smoke(dtype_run& run);
  void stage_shape_sweep(dtype_run& run);
  void stage_stability(dtype_run& run);
  void stage_determinism(dtype_run& run);
  void stage_edge_cases(dtype_run& run);
  void stage_fresh_inputs(dtype_run& run);
  void stage_stale_memory(dtype_run& run);
  void stage_ignored_inputs(dtype_run& run);
  void stage_precision(dtype_run& run);
  void stage_hidden_work(dtype_run& run);
  void stage_implausible_speedup(dtype_run& run);
  // The implausible_speedup row: timing on fresh inputs, a share of the timed outputs checked.
  void timed_speedup(const shape_variant& shape, at::ScalarType dtype, const std::function<std::uint64_t()>& next_seed,
                     double started);
  // `base` with one element of each floating input set to another element's value.
  std::vector<at::Tensor> rewritten_twin(const std::vector<at::Tensor>& base, std::uint64_t seed);
  // Empty when `out` is right for the inputs `base` (the yardstick of every stage), else why not.
  std::string check_timed_output(const std::vector<at::Tensor>& out, const std::vector<at::Tensor>& base,
                                 at::ScalarType dtype, const shape_variant& shape);

  // The module-parameter case of ignored_inputs: the reference and the candidate with their parameters perturbed.
  std::string perturbed_parameters(const shape_variant& shape, at::ScalarType dtype, std::uint64_t seed,
                                   outcome& result);
  remote_candidate& candidate() { return slot_.get(); }

  job job_;
  kernel_pair& pair_;
  candidate_slot& slot_;
  std::vector<std::string> mutations_;
  std::vector<std::string> aliasing_;
  std::string current_;
};

}  // namespace rnx::verify::detail
