// The orchestrator of `rnx bench`, step by step: build native kernels, then per round a sequential look, the
// in-process pairs, and each side's workers; each worker's events are read as typed events (worker_protocol.hpp).
#include "orchestrator.hpp"

#include "work.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/kernel_environment.hpp"
#include "rnx/common/process.hpp"
#include "rnx/runner/native_build.hpp"
#include "rnx/runner/python.hpp"
#include "rnx/runner/sample_stats.hpp"
#include "rnx/stats/verdict.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <random>
#include <sstream>
#include <variant>

namespace rnx::runner::detail {

namespace fs = std::filesystem;
namespace bj = boost::json;

namespace {

std::string fmt_ms(double ms) {
  std::ostringstream os;
  os << std::setprecision(4) << ms;
  return os.str();
}

// Rotating the start keeps any one configuration from always running first in a fresh process.
void rotate(std::vector<std::size_t>& v, int round) {
  if (!v.empty()) std::rotate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(round % v.size()), v.end());
}

bool cuda_listed() {
  std::string out;
  try {
    return run_capture({"nvidia-smi", "-L"}, out) == 0 && out.find("GPU") != std::string::npos;
  } catch (const error&) {
    return false;
  }
}

fs::path cache_dir_of(const bench_options& o) { return o.cache_dir.empty() ? default_cache_dir() : o.cache_dir; }

// The variables a kernel keeps although they are withheld ([bench] pass_env): the head manifest's; in a paired run
// only those both manifests name, so a change under test cannot grant its own kernels a credential.
std::vector<std::string> passed_variables(const std::vector<side_state>& sides) {
  std::vector<std::string> passed = sides.at(0).m.pass_env;
  for (std::size_t s = 1; s < sides.size(); ++s) {
    const std::vector<std::string>& other = sides[s].m.pass_env;
    passed.erase(
        std::remove_if(passed.begin(), passed.end(),
                       [&](const std::string& n) { return std::find(other.begin(), other.end(), n) == other.end(); }),
        passed.end());
  }
  return passed;
}

}  // namespace

std::string label(const planned& p) { return p.result.key().label(); }

bool orchestrator::cuda_visible() { return cuda_listed(); }

orchestrator::orchestrator(const bench_options& o, std::vector<side_state>& sides, std::vector<planned>& plan,
                           std::vector<std::size_t> members, const device_lane* lane, int prestart, lane_shared& shared)
    : o_(o),
      sides_(sides),
      plan_(plan),
      members_(std::move(members)),
      lane_(lane),
      prestart_(prestart),
      shared_(shared) {
  worker_ = o.worker.empty() ? default_worker_path() : o.worker;
  withheld_env_ = kernel_withheld_variables(passed_variables(sides_));
  for (std::size_t i : members_) {
    const planned& p = plan_[i];
    total_rounds_ = std::max(total_rounds_, p.max_processes);
    looks_ = std::max(looks_, p.max_processes - p.processes + 1);
  }
  policy_ = o.policy.value_or(sides_[0].m.gate);
  std::random_device entropy;
  pairing_seed_ = (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
}

void orchestrator::run() {
  for (int round = 0; round < total_rounds_; ++round) {
    run_one_round(round);
    if (round + 1 < total_rounds_) continue;
    if (grant_confirmations(round)) continue;
    // The last round: pairs no look decided are judged on everything measured, so their orders are checked here
    // (a steered one gets rounds of process pairing, which extend the loop).
    for (std::size_t i : members_) {
      planned& p = plan_[i];
      if (p.side != 0 || !p.partner || !p.in_process || p.failed || plan_[*p.partner].failed) continue;
      if (p.control_trip) {
        settle_unconfirmed_control(round + 1, p);
      } else if (!p.decided) {
        check_orders(round + 1, p);
      }
    }
  }
  ahead_.clear();  // workers started for rounds that did not come
  {
    std::lock_guard<std::mutex> lock(shared_.mutex);
    if (o_.live && o_.log) *o_.log << "\r\033[K" << std::flush;
  }
  report_construction_orders();
}

void orchestrator::run_one_round(int round) {
  look(round);
  // In-process pairs first: a pair that cannot share its process falls back to the per-side workers below, in
  // this same round.
  std::vector<std::size_t> joint;
  for (std::size_t i : members_) {
    if (plan_[i].side == 0 && plan_[i].in_process && runs_in(plan_[i], round)) joint.push_back(i);
  }
  rotate(joint, round);
  run_round(0, round, joint, true);
  // Alternating the side order per round keeps drift from favouring head or base in a paired run.
  std::vector<std::size_t> order;
  for (std::size_t s = 0; s < sides_.size(); ++s) order.push_back(s);
  if (round % 2 == 1) std::reverse(order.begin(), order.end());
  for (std::size_t s : order) {
    std::vector<std::size_t> pending;
    for (std::size_t i : members_) {
      if (plan_[i].side == s && !plan_[i].in_process && runs_in(plan_[i], round)) pending.push_back(i);
    }
    rotate(pending, round);
    run_round(s, round, pending, false);
  }
}

// After the last round: every in-process pair whose control found its base moved in its last process, and has not
// had one, gets one process more (past max_processes) with the base first, where a second control confirms the
// trip or clears it (docs/runner.md, the control). Without it, a single drifting window in the last process sent the
// whole pair to process pairing: a false trip then cost the pair every in-process sample it had. True when a round
// was added.
bool orchestrator::grant_confirmations(int round) {
  bool granted = false;
  for (std::size_t i : members_) {
    planned& p = plan_[i];
    if (p.side != 0 || !p.partner || !p.in_process || p.failed || plan_[*p.partner].failed) continue;
    if (!p.control_trip || p.confirm_round >= 0) continue;
    p.confirm_round = round + 1;
    granted = true;
  }
  if (granted) total_rounds_ = std::max(total_rounds_, round + 2);
  return granted;
}

// A steered pair: its in-process samples dropped, measured by process pairing from this round on, counted afresh.
void orchestrator::drop_in_process(int round, planned& head, const std::string& reason) {
  planned& base = plan_[*head.partner];
  for (planned* p : {&head, &base}) {
    p->result.samples_ms.clear();
    p->result.groups.clear();
    p->process_notes.clear();
    p->result.first_sides.clear();
    p->rounds_done = 0;
    p->spent_ms = 0;
    p->decided = false;
    p->round_offset = round;
  }
  total_rounds_ = std::max(total_rounds_, round + head.max_processes);
  split_pair(head, reason);
}

// One line per in-process pair: which side was loaded and bound first in each of its processes.
void orchestrator::report_construction_orders() {
  for (std::size_t i : members_) {
    const planned& p = plan_[i];
    if (p.side != 0 || !p.in_process || p.result.first_sides.empty()) continue;
    std::string orders;
    int base_first = 0;
    for (const auto& f : p.result.first_sides) {
      orders += (orders.empty() ? "" : ", ") + std::string(to_string(f));
      base_first += f == pair_side::base;
    }
    std::ostringstream os;
    os << "[pairing] " << label(p) << ": side loaded first per process: " << orders << " (base first in " << base_first
       << " of " << p.result.first_sides.size() << ")";
    progress(os.str(), true);
  }
}

bool orchestrator::runs_in(const planned& p, int round) const {
  if (p.failed || p.decided) return false;
  if (p.control_trip && round == p.confirm_round) return true;  // the process granted to confirm a control
  round -= p.round_offset;
  if (p.partner && plan_[*p.partner].failed) return round < p.processes;  // nothing left to pair it with
  if (round >= p.processes && budget_left_ms(p) < 0.25 * base_budget_ms(p)) return false;  // total budget spent
  return round < p.max_processes;
}

// The manifest's (or --budget-ms's) timed budget of one process and side.
double orchestrator::base_budget_ms(const planned& p) const { return o_.budget_ms.value_or(p.bench.budget_ms); }

// What is left of this side's share of the configuration's total budget (a pair's two sides share it equally).
double orchestrator::budget_left_ms(const planned& p) const {
  const double share = 1000 * p.bench.total_budget_s * (p.partner ? 0.5 : 1.0);
  return std::max(0.0, share - p.spent_ms);
}

// The timed budget of this side in the process of `round`: the manifest's for the first `processes` (at most an
// equal share of what is left); after a look, the head's budget_factor times it (docs/runner.md: doubled at each look
// that leaves the pair undecided where a longer process would tell more than another one), never more than what the
// total budget has left. Samples are capped in proportion.
std::pair<double, int> orchestrator::process_budget(const planned& p, int round) const {
  const double base = base_budget_ms(p);
  const int samples = o_.max_samples.value_or(p.bench.max_samples);
  // A process granted to confirm a control: one process's budget, whatever the total has left.
  const planned& head = p.side == 0 || !p.partner ? p : plan_[*p.partner];
  if (head.control_trip && round == head.confirm_round) return {base, samples};
  round -= p.round_offset;
  const double left = budget_left_ms(p);
  if (round < p.processes) {
    return {std::min(base, left / static_cast<double>(p.processes - round)), samples};
  }
  const double factor = head.budget_factor;
  const double budget = std::min(base * factor, left);
  const double scale = base > 0 ? budget / base : 1.0;
  return {budget, static_cast<int>(std::min(100000.0, std::ceil(samples * std::max(1.0, scale))))};
}

// A look of the sequential schedule, before `round`: every pair that has had its first `processes` rounds and is
// decided at its look's threshold stops (docs/statistics.md, alpha spending). The verdict later applies the last
// look's threshold, never higher than an earlier one, to the same samples, so it reaches the same decision.
void orchestrator::look(int round) {
  if (sides_.size() < 2) return;
  const pairing_info schedule{"", pair_side::head, "", in_process_block, looks_};
  for (std::size_t i : members_) {
    planned& head = plan_[i];
    const int local = round - head.round_offset;
    if (head.side != 0 || !head.partner || head.decided || head.failed || local < head.processes) continue;
    // An in-process pair alternates which side is loaded first (where each side's weights land) from process to
    // process: it is judged only after an even number of processes, when both orders count equally.
    if (head.in_process && local % 2 == 1) continue;
    if (head.control_trip) continue;  // a control found the base moved: nothing is decided until another confirms
    planned& base = plan_[*head.partner];
    if (base.failed || head.rounds_done != local || base.rounds_done != local) continue;
    check_orders(round, head);
    if (!head.in_process && head.rounds_done == 0) continue;  // steered: measured afresh by process pairing
    // This configuration's last look is the schedule's last (the verdict), so one with fewer looks skips early ones.
    const int index = std::clamp(looks_ - (head.max_processes - local), 1, looks_);
    const stats::comparison c = stats::compare_measured(base.result, head.result, policy_, schedule, index);
    if (c.result == decision::abstain) {
      if (!c.spread || stats::longer_processes_help(*c.spread))
        head.budget_factor = std::min(1024.0, 2 * head.budget_factor);
      continue;
    }
    head.decided = base.decided = true;
    std::ostringstream os;
    os << "[look " << (local - head.processes + 1) << "/" << looks_ << "] " << std::left << std::setw(44) << label(head)
       << " " << to_string(c.result) << " after " << round << " processes";
    if (c.ratio) os << " (ratio " << std::fixed << std::setprecision(3) << *c.ratio << ")";
    progress(os.str(), true);
  }
}

// Compiling .cpp/.cu kernels once here keeps the compiler out of the workers' timeouts.
void orchestrator::prebuild_native() {
  std::set<const kernel_spec*> done;
  for (auto& p : plan_) {
    if (!p.spec->native() || done.count(p.spec)) continue;
    done.insert(p.spec);
    if (p.spec->kind() == kernel_kind::cuda && !cuda_visible()) continue;  // the worker reports it as skipped
    progress("building " + p.spec->path + " ...");
    try {
      build_native_kernel(*p.spec, sides_[p.side].m.cuda_arch, cache_dir_of(o_));
    } catch (const runtime_unavailable& e) {
      for (auto& q : plan_) {
        if (q.spec == p.spec) set_failed(q, result_status::skipped, e.what());
      }
    } catch (const error& e) {
      for (auto& q : plan_) {
        if (q.spec == p.spec) set_failed(q, result_status::error, e.what());
      }
    }
  }
}

void orchestrator::progress(const std::string& line, bool permanent) {
  if (!o_.log) return;
  std::lock_guard<std::mutex> lock(shared_.mutex);
  if (o_.live) {
    *o_.log << "\r\033[K" << line << (permanent ? "\n" : "") << std::flush;
  } else if (permanent) {
    *o_.log << line << "\n" << std::flush;
  }
}

worker_job orchestrator::make_job(std::size_t side, int round, const std::vector<std::size_t>& pending,
                                  bool joint) const {
  worker_job job;
  job.manifest = fs::absolute(sides_[side].manifest_path).string();
  if (joint) job.base_manifest = fs::absolute(sides_[1].manifest_path).string();
  job.pairing_seed = pairing_seed_ ^ (static_cast<std::uint64_t>(round) << 48);
  job.cuda_arch = sides_[side].m.cuda_arch;
  job.cache_dir = cache_dir_of(o_).string();
  job.device_override = lane_ ? lane_->device : o_.device;
  bool any_gpu = job.device_override.empty() ? false : device_kind_from_string(job.device_override) != device_kind::cpu;
  for (std::size_t i : pending) {
    any_gpu =
        any_gpu || (job.device_override.empty() && device_kind_from_string(plan_[i].spec->device) != device_kind::cpu);
  }
  job.fingerprint_device =
      lane_ ? lane_->device : std::string(to_string(any_gpu ? device_kind::automatic : device_kind::cpu));
  if (lane_) job.cores = lane_->cores;
  job.overrides = {o_.min_samples, o_.max_samples, o_.budget_ms, o_.warmup_ms};
  job.fresh_inputs = o_.fresh_inputs;
  for (std::size_t i : pending) {
    const planned& p = plan_[i];
    job_config c{i, p.result.kernel, p.result.runtime, p.result.dtype, p.result.batch, !p.checked};
    c.tol = p.result.tol;
    if (joint) {
      c.base_index = *p.partner;
      c.check_base = !plan_[*p.partner].checked;
      c.base_tol = plan_[*p.partner].result.tol;
      // Which side is loaded and bound first alternates from one process of the configuration to the next.
      // A control beyond its limit is timed again in the very next process (its base first), not one in two.
      c.base_first = p.control_trip || (p.result.first_sides.size() + i) % 2 == 0;
      // Every process with the base first times the base alone before loading the head (the control): a head
      // can tell a process whose control has run (it shares the interpreter), so a control in only some processes
      // would be one it could wait out.
      c.control_base = c.base_first;
    }
    const auto [budget_ms, max_samples] = process_budget(p, round);
    c.budget_ms = budget_ms;
    c.max_samples = std::max(max_samples, o_.min_samples.value_or(p.bench.min_samples));
    job.configs.push_back(std::move(c));
  }
  return job;
}

fs::path orchestrator::write_job_file(const worker_job& job) {
  int number = 0;
  {
    std::lock_guard<std::mutex> lock(shared_.mutex);
    number = shared_.job_counter++;
  }
  fs::path job_path =
      fs::temp_directory_path() / ("rnx-job-" + std::to_string(::getpid()) + "-" + std::to_string(number) + ".json");
  std::ofstream out(job_path);
  out << json::serialize(to_json(job));
  if (!out) throw error(errc::internal, job_path.string() + ": cannot write the worker job");
  return job_path;
}

void orchestrator::run_round(std::size_t side, int round, std::vector<std::size_t> pending, bool joint) {
  while (!pending.empty()) {
    const fs::path job_path = write_job_file(make_job(side, round, pending, joint));
    std::set<std::size_t> finished = run_worker(side, round, job_path, pending, joint);
    std::error_code ec;
    fs::remove(job_path, ec);
    std::vector<std::size_t> rest;
    for (std::size_t i : pending) {
      if (!finished.count(i) && !(joint && !plan_[i].in_process)) rest.push_back(i);
    }
    pending = std::move(rest);
  }
}

// A pair that cannot share its worker: from now on each side runs in processes of its own.
void orchestrator::split_pair(planned& head, const std::string& reason) {
  planned& base = plan_[*head.partner];
  head.in_process = base.in_process = false;
  head.result.pairing = base.result.pairing = pairing_mode::process;
  head.result.pairing_reason = base.result.pairing_reason = reason;
  progress("[pairing] " + label(head) + ": measured in separate processes: " + reason, true);
}

std::set<std::size_t> orchestrator::run_worker(std::size_t side, int round, const fs::path& job_path,
                                               const std::vector<std::size_t>& pending, bool joint) {
  auto [worker, launched] = take_worker(job_path);
  worker_run& w = *worker;
  worker_session s;
  s.side = side;
  s.round = round;
  s.joint = joint;
  s.launched = launched;
  s.released = s.started = clock_type::now();
  // Starting Python and importing torch takes seconds; a worker that cannot even start gets a minute.
  s.limit_s = 60;
  read_events(w, s);
  settle_unreported(w, s, pending);
  return s.settled;
}

// Reads the worker's events until its output ends, killing it when the configuration running (or the start)
// outlasts its time.
void orchestrator::read_events(worker_run& w, worker_session& s) {
  while (!w.finished()) {
    const double elapsed_ms = std::chrono::duration<double, std::milli>(clock_type::now() - s.started).count();
    const double left_ms = s.limit_s * 1000 - elapsed_ms;
    if (left_ms <= 0) {
      w.kill();
      s.timed_out = true;
      return;
    }
    for (const std::string& line : w.poll_lines(static_cast<int>(std::min(left_ms, 1000.0)))) {
      if (auto event = event_from_line(line)) {
        std::visit([&](const auto& e) { on_event(s, e); }, *event);
      }
    }
  }
}

void orchestrator::on_event(worker_session& s, const ready_event& e) {
  s.ready = true;
  shared_.ledger.on_ready(e.clock, s.launched, s.released);
  std::lock_guard<std::mutex> lock(shared_.mutex);
  for (std::size_t side = 0; side < sides_.size(); ++side) {
    if ((side == s.side || s.joint) && !sides_[side].env) {
      sides_[side].env = run_from_json(bj::object{{"schema", run_schema_id},
                                                  {"project", "x"},
                                                  {"environment", e.environment},
                                                  {"results", bj::array{}}},
                                       "worker environment")
                             .env;
    }
  }
}

void orchestrator::on_event(worker_session& s, const start_event& e) {
  s.current = e.index;
  s.started = clock_type::now();
  // Both sides of a pair are measured in this one configuration's time.
  s.limit_s = plan_[e.index].timeout_s * (s.joint ? 2 : 1);
  progress("[" + std::to_string(s.round + 1) + "/" + std::to_string(total_rounds_) + "] " + label(plan_[e.index]) +
           (s.joint ? " (paired in-process)" : "") + " ...");
}

void orchestrator::on_event(worker_session& s, const result_event& e) {
  shared_.ledger.on_result(e.warmup_ms, e.sampling_ms, e.phases_ms, label(plan_[e.index]), lane_ ? lane_->name : "");
  planned& p = plan_[e.index];
  if (e.pair_fallback) {
    split_pair(p, *e.pair_fallback);
  } else {
    if (e.base) {
      // One process timed both sides in sampling_ms: each side's share of the budget is charged half.
      planned& base = plan_[*p.partner];
      base.spent_ms += e.sampling_ms / 2;
      p.spent_ms += e.sampling_ms / 2;
      if (e.first_side) {
        p.result.first_sides.push_back(*e.first_side);
        base.result.first_sides.push_back(*e.first_side);
      }
      base.control_ms = e.base->control_ms;
      merge(1, s.round, base, *e.base);
    } else {
      p.spent_ms += e.sampling_ms;
    }
    merge(s.side, s.round, p, e.head);
    if (e.base && !plan_[*p.partner].control_ms.empty() && !p.failed && !plan_[*p.partner].failed) {
      judge_control(s.round, p);
    }
  }
  s.settled.insert(e.index);
  s.current.reset();
}

void orchestrator::settle_unreported(worker_run& w, worker_session& s, const std::vector<std::size_t>& pending) {
  bool clean = false;
  const std::string how = w.wait_description(clean);
  if (!s.ready && s.settled.empty()) {
    settle_never_started(w, s, pending, how);
  } else if (s.current) {
    settle_interrupted(w, s, how);
  } else if (!clean && s.settled.size() < pending.size()) {
    // Died between configurations: settle the next one so the loop always makes progress.
    for (std::size_t i : pending) {
      if (s.settled.count(i)) continue;
      fail_with_partner(i, "the worker process ended (" + how + ") before this configuration started: " + w.log_tail(),
                        s.joint);
      s.settled.insert(i);
      report(s.round, plan_[i]);
      break;
    }
  }
}

// Nothing ran: the same failure would repeat for every configuration, so it is reported on all of them.
void orchestrator::settle_never_started(worker_run& w, worker_session& s, const std::vector<std::size_t>& pending,
                                        const std::string& how) {
  const std::string message = "the worker process " + worker_.string() + " failed before running any kernel (" +
                              (s.timed_out ? "no answer within 60 s" : how) + "): " + w.log_tail();
  for (std::size_t i : pending) {
    fail_with_partner(i, message, s.joint);
    s.settled.insert(i);
    report(s.round, plan_[i]);
  }
}

// The worker hung (killed on its timeout) or crashed in the configuration it had started.
void orchestrator::settle_interrupted(worker_run& w, worker_session& s, const std::string& how) {
  planned& p = plan_[*s.current];
  std::string message;
  if (s.timed_out) {
    std::ostringstream os;
    os << "timed out: no result within " << p.timeout_s << " s, the worker was killed (a hang?); if the kernel is "
       << "just slow, raise timeout_s for it in rnx.toml";
    message = os.str();
  } else {
    message = "the worker process crashed (" + how + ") while running this configuration";
  }
  const std::string tail = w.log_tail();
  if (!tail.empty()) message += "; last output: " + tail;
  if (s.joint) {
    // Which side crashed or hung is not known yet: each side on its own will tell.
    split_pair(p, "the shared worker failed on it (" + message + ")");
  } else {
    set_failed(p, result_status::error, message);
    report(s.round, p);
  }
  s.settled.insert(*s.current);
}

void orchestrator::fail_with_partner(std::size_t i, const std::string& message, bool joint) {
  set_failed(plan_[i], result_status::error, message);
  if (joint) set_failed(plan_[*plan_[i].partner], result_status::error, message);
}

void orchestrator::merge(std::size_t side, int round, planned& p, const side_outcome& outcome) {
  p.result.device = outcome.device;
  if (lane_) p.result.measured_on = lane_->name;
  if (outcome.check) {
    p.checked = true;
    p.result.max_abs_err = outcome.check->max_abs_err;
    p.result.rel_err = outcome.check->rel_err;
    p.result.tol = outcome.check->tol;
  }
  if (outcome.work) p.result.work = with_counted(p.result.work, *outcome.work);
  if (outcome.bound) p.result.bound = outcome.bound;
  if (!outcome.work_error.empty()) add_note(p, "work not counted: " + outcome.work_error);
  if (!outcome.inputs_note.empty() && p.note.find(outcome.inputs_note) == std::string::npos) {
    add_note(p, outcome.inputs_note);
  }
  if (outcome.status == result_status::ok) {
    const auto& samples = outcome.samples_ms;
    p.result.samples_ms.insert(p.result.samples_ms.end(), samples.begin(), samples.end());
    p.result.groups.push_back(static_cast<std::int64_t>(samples.size()));
    p.result.inputs = outcome.inputs;
    p.result.l2 = outcome.l2;
    if (const auto& d = outcome.disturbed) {
      std::ostringstream os;
      os << d->migrations << " migrations, "
         << d->minor_faults / std::max<std::int64_t>(1, static_cast<std::int64_t>(samples.size()))
         << " page faults per sample, " << d->preempted_samples << " preempted";
      p.process_notes.push_back(os.str());
    }
    {
      std::lock_guard<std::mutex> lock(shared_.mutex);
      auto& clocks = sides_[side].sm_clocks;
      clocks.insert(clocks.end(), outcome.sm_mhz.begin(), outcome.sm_mhz.end());
    }
    ++p.rounds_done;
  } else {
    set_failed(p, outcome.status, outcome.message);
  }
  report(round, p);
}

void orchestrator::report(int round, const planned& p) {
  std::ostringstream os;
  const bool last = p.failed || p.rounds_done >= p.processes;
  if (o_.live && !last) return;  // a terminal shows each configuration once, when it is done
  os << "[" << (round + 1) << "/" << total_rounds_ << "] " << std::left << std::setw(44) << label(p) << " "
     << std::setw(8) << to_string(p.result.status);
  if (lane_) os << " [" << lane_->name << "]";
  if (!p.failed && !p.result.groups.empty()) {
    std::vector<double> last_group(p.result.samples_ms.end() - p.result.groups.back(), p.result.samples_ms.end());
    os << " median " << fmt_ms(median(last_group)) << " ms (" << last_group.size() << " samples)";
  } else if (p.failed) {
    std::string first_line = p.result.message.substr(0, p.result.message.find('\n'));
    if (first_line.size() > 160) first_line = first_line.substr(0, 157) + "...";
    os << " " << first_line;
  }
  progress(os.str(), true);
}

std::pair<std::unique_ptr<worker_run>, clock_type::time_point> orchestrator::take_worker(const fs::path& job_path) {
  if (prestart_ <= 0) {
    shared_.ledger.worker_started();
    return {std::make_unique<worker_run>(worker_, job_path, o_.contain, lane_cores(), withheld_env_),
            clock_type::now()};
  }
  start_ahead();
  started_worker taken = std::move(ahead_.front());
  ahead_.pop_front();
  taken.run->release(job_path);
  start_ahead();
  return {std::move(taken.run), taken.launched};
}

void orchestrator::start_ahead() {
  while (ahead_.size() < static_cast<std::size_t>(prestart_)) {
    shared_.ledger.worker_started();
    const auto launched = clock_type::now();
    ahead_.push_back({std::make_unique<worker_run>(worker_, lane_cores(), withheld_env_), launched});
  }
}

}  // namespace rnx::runner::detail
