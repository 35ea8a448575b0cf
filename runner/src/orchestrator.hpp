// The orchestrator of `rnx bench`: runs rounds of worker processes over the planned configurations, with
// timeouts and sequential looks, and merges what each worker reports into the plan.
#pragma once

#include "bench_plan.hpp"
#include "bench_timing.hpp"
#include "scheduler.hpp"
#include "worker_protocol.hpp"
#include "worker_run.hpp"

#include "rnx/runner/bench.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rnx::runner::detail {

// "kernel/runtime/dtype/bN": how the progress lines name a configuration.
std::string label(const planned& p);

// What the device lanes of one run share: the sides' environments and clocks, the progress stream, the ledger.
struct lane_shared {
  std::mutex mutex;
  timing_ledger ledger;
  int job_counter = 0;
};

class orchestrator {
 public:
  // Measures `members` (plan indices; a configuration with its partner) on `lane` (nullptr: the manifest's or
  // --device's device, no lane), starting each worker ahead of its turn when `prestart` (docs/scaling.md).
  orchestrator(const bench_options& o, std::vector<side_state>& sides, std::vector<planned>& plan,
               std::vector<std::size_t> members, const device_lane* lane, int prestart, lane_shared& shared);

  // Compiling .cpp/.cu kernels once, before the lanes start, keeps the compiler out of the workers' timeouts.
  void prebuild_native();
  // Every round of this lane's configurations, until each is measured, decided by a look, or failed.
  void run();
  // Looks of the sequential schedule (1 outside paired runs).
  int looks() const { return looks_; }
  static bool cuda_visible();

 private:
  // What the orchestrator knows of the one worker process it is reading.
  struct worker_session {
    std::size_t side = 0;
    int round = 0;
    bool joint = false;  // in-process pairs: both sides in this worker
    clock_type::time_point launched;
    clock_type::time_point released;  // when it got its job (a prestarted worker's launch came earlier)
    clock_type::time_point started;   // of the configuration running now (or the launch)
    double limit_s = 60;              // for the configuration running now (or for starting at all)
    bool ready = false;
    bool timed_out = false;
    std::optional<std::size_t> current;  // the configuration started and not yet reported
    std::set<std::size_t> settled;       // configurations it reported (or failed on)
  };

  // Steps of run().
  void run_one_round(int round);
  void look(int round);
  // A pair whose base was timed alone in this process (the control) against its base beside the head: a base the
  // head slowed in two processes in a row was steered, and the pair goes on by process pairing.
  void judge_control(int round, planned& head);
  bool grant_confirmations(int round);
  void settle_unconfirmed_control(int round, planned& head);
  void drop_last_process(planned& head);
  // A pair whose ratio depends on which side was loaded first (a head that behaves by its order) is steered too.
  void check_orders(int round, planned& head);
  void drop_in_process(int round, planned& head, const std::string& reason);
  void report_construction_orders();

  // One round of one side (or of the in-process pairs): workers until every pending configuration is settled.
  void run_round(std::size_t side, int round, std::vector<std::size_t> pending, bool joint);
  worker_job make_job(std::size_t side, int round, const std::vector<std::size_t>& pending, bool joint) const;
  std::filesystem::path write_job_file(const worker_job& job);

  // One worker process over `pending`; returns the configurations it settled (including ones it crashed on).
  std::set<std::size_t> run_worker(std::size_t side, int round, const std::filesystem::path& job_path,
                                   const std::vector<std::size_t>& pending, bool joint);
  void read_events(worker_run& w, worker_session& s);
  void on_event(worker_session& s, const ready_event& e);
  void on_event(worker_session& s, const start_event& e);
  void on_event(worker_session& s, const result_event& e);
  // After the worker ended: whatever it did not report is settled as failed, so each round makes progress.
  void settle_unreported(worker_run& w, worker_session& s, const std::vector<std::size_t>& pending);
  void settle_never_started(worker_run& w, worker_session& s, const std::vector<std::size_t>& pending,
                            const std::string& how);
  void settle_interrupted(worker_run& w, worker_session& s, const std::string& how);

  // Folds one process's outcome of one side into its configuration.
  void merge(std::size_t side, int round, planned& p, const side_outcome& outcome);
  void split_pair(planned& head, const std::string& reason);
  void fail_with_partner(std::size_t i, const std::string& message, bool joint);

  bool runs_in(const planned& p, int round) const;
  double base_budget_ms(const planned& p) const;
  double budget_left_ms(const planned& p) const;
  std::pair<double, int> process_budget(const planned& p, int round) const;

  // The worker for a job and when its process started: the one prestarted for it (released with the job; the
  // next one starts at once, importing while this one measures), else a fresh one.
  std::pair<std::unique_ptr<worker_run>, clock_type::time_point> take_worker(const std::filesystem::path& job_path);
  void start_ahead();  // prestart: starts workers until prestart_ wait for a job
  // A CPU lane's cores (its workers are bound to them from exec); empty for a GPU lane or no lane.
  std::vector<int> lane_cores() const { return lane_ ? lane_->cores : std::vector<int>{}; }

  void progress(const std::string& line, bool permanent = false);
  void report(int round, const planned& p);

  const bench_options& o_;
  std::vector<side_state>& sides_;
  std::vector<planned>& plan_;
  std::vector<std::size_t> members_;
  const device_lane* lane_ = nullptr;
  int prestart_ = 0;  // workers started ahead of their turn (0: each started when its job is ready)
  lane_shared& shared_;
  struct started_worker {
    std::unique_ptr<worker_run> run;
    clock_type::time_point launched;
  };
  std::deque<started_worker> ahead_;  // prestart: the workers that take the next jobs, the oldest first
  std::filesystem::path worker_;
  std::vector<std::string> withheld_env_;  // removed from an uncontained worker's environment (kernel_environment.hpp)
  int total_rounds_ = 0;
  int looks_ = 1;
  gate_policy policy_;
  std::uint64_t pairing_seed_ = 0;
};

}  // namespace rnx::runner::detail
