// The timing ledger and its two renderings: a table for people, JSON for the benchmark scripts.
#include "bench_timing.hpp"

#include "rnx/common/error.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>

namespace rnx::runner {

namespace bj = boost::json;

std::string_view to_string(prestart_mode mode) {
  switch (mode) {
    case prestart_mode::automatic: return "auto";
    case prestart_mode::on: return "on";
    case prestart_mode::off: return "off";
  }
  return "auto";
}

prestart_mode parse_prestart_mode(std::string_view text) {
  for (prestart_mode m : {prestart_mode::automatic, prestart_mode::on, prestart_mode::off}) {
    if (text == to_string(m)) return m;
  }
  throw error(errc::usage, "--prestart " + std::string(text) + ": use auto, on or off");
}

namespace {

double seconds(detail::clock_type::time_point t) { return std::chrono::duration<double>(t.time_since_epoch()).count(); }

}  // namespace

void print_timing(std::ostream& os, const bench_timing& t) {
  const double start_total = t.start_exec_s + t.start_python_s + t.start_device_s + t.start_fingerprint_s;
  const double config_total = t.control_s + t.load_s + t.inputs_s + t.bind_s + t.check_s + t.warmup_s + t.sampling_s +
                              t.measure_other_s + t.audit_s;
  char line[256];
  auto row = [&](const char* what, double s, const char* note) {
    std::snprintf(line, sizeof line, "  %-34s %8.2f s  %s\n", what, s, note);
    os << line;
  };
  std::snprintf(line, sizeof line, "where the time went: %.1f s of wall time, %d worker processes, %d device lane%s\n",
                t.total_s, t.workers, t.lanes, t.lanes == 1 ? "" : "s");
  os << line;
  row("worker start, waited for", t.worker_start_s, "(wall time the lanes waited for a worker's ready)");
  row("worker start, hidden by prestart", t.start_hidden_s, "(done while another worker measured)");
  row("  exec + libtorch to main()", t.start_exec_s, "per-phase sums over all workers:");
  row("  Python, torch, compiler imports", t.start_python_s, "");
  row("  device (CUDA context, cores)", t.start_device_s, "");
  row("  fingerprint", t.start_fingerprint_s, "");
  row("  (all start phases)", start_total, "");
  row("control (base beside its twin)", t.control_s, "per-configuration steps, summed over processes:");
  row("kernel load", t.load_s, "");
  row("inputs", t.inputs_s, "");
  row("bind (runtime)", t.bind_s, "");
  row("reference checks + work count", t.check_s, "");
  row("warm-up", t.warmup_s, "");
  row("sampling", t.sampling_s, "");
  row("measuring, other", t.measure_other_s, "(input pools, calibrating calls per sample)");
  row("audit of timed outputs", t.audit_s, "");
  row("(all configuration steps)", config_total, "");
  if (!t.configs.empty()) {
    os << "  per configuration (busy time over its processes):\n";
    for (const auto& c : t.configs) {
      std::snprintf(line, sizeof line,
                    "    %-44s %-9s %2d processes %7.2f s (control %.2f, load %.2f, inputs %.2f, bind %.2f, check "
                    "%.2f, warm-up %.2f, sampling %.2f, audit %.2f)\n",
                    c.label.c_str(), c.measured_on.empty() ? "-" : c.measured_on.c_str(), c.processes, c.busy_s,
                    c.control_s, c.load_s, c.inputs_s, c.bind_s, c.check_s, c.warmup_s, c.sampling_s, c.audit_s);
      os << line;
    }
  }
}

bj::object timing_json(const bench_timing& t) {
  bj::array configs;
  for (const auto& c : t.configs) {
    configs.push_back(bj::object{{"config", c.label},
                                 {"measured_on", c.measured_on},
                                 {"processes", c.processes},
                                 {"busy_s", c.busy_s},
                                 {"control_s", c.control_s},
                                 {"load_s", c.load_s},
                                 {"inputs_s", c.inputs_s},
                                 {"bind_s", c.bind_s},
                                 {"check_s", c.check_s},
                                 {"warmup_s", c.warmup_s},
                                 {"sampling_s", c.sampling_s},
                                 {"audit_s", c.audit_s}});
  }
  return bj::object{{"total_s", t.total_s},
                    {"workers", t.workers},
                    {"lanes", t.lanes},
                    {"worker_start_waited_s", t.worker_start_s},
                    {"start_hidden_s", t.start_hidden_s},
                    {"start_exec_s", t.start_exec_s},
                    {"start_python_s", t.start_python_s},
                    {"start_device_s", t.start_device_s},
                    {"start_fingerprint_s", t.start_fingerprint_s},
                    {"control_s", t.control_s},
                    {"load_s", t.load_s},
                    {"inputs_s", t.inputs_s},
                    {"bind_s", t.bind_s},
                    {"check_s", t.check_s},
                    {"warmup_s", t.warmup_s},
                    {"sampling_s", t.sampling_s},
                    {"measure_other_s", t.measure_other_s},
                    {"audit_s", t.audit_s},
                    {"configs", std::move(configs)}};
}

namespace detail {

void timing_ledger::worker_started() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++t_.workers;
}

void timing_ledger::on_ready(const worker_clock& clock, clock_type::time_point launched,
                             clock_type::time_point released) {
  const auto now = clock_type::now();
  std::lock_guard<std::mutex> lock(mutex_);
  t_.worker_start_s += std::chrono::duration<double>(now - released).count();
  const double launch_s = seconds(launched);
  t_.start_exec_s += std::max(0.0, clock.main - launch_s);
  t_.start_python_s += std::max(0.0, clock.python - clock.main);
  // Between "released" and "device": the job read, the manifest, the cores bound and the device opened.
  t_.start_device_s += std::max(0.0, clock.device - clock.released);
  t_.start_fingerprint_s += std::max(0.0, clock.ready - clock.device);
  if (released != launched) {
    t_.start_hidden_s += std::max(0.0, std::min(clock.python, seconds(released)) - launch_s);
  }
}

void timing_ledger::on_result(std::optional<double> warmup_ms, double sampling_ms, const config_phases& phases,
                              const std::string& label, const std::string& measured_on) {
  std::lock_guard<std::mutex> lock(mutex_);
  const double warmup = warmup_ms.value_or(0) / 1000;
  const double sampling = sampling_ms / 1000;
  t_.warmup_s += warmup;
  t_.sampling_s += sampling;
  const double control = phases.control / 1000;
  const double load = phases.load / 1000;
  const double inputs = phases.inputs / 1000;
  const double bind = phases.bind / 1000;
  const double check = phases.check / 1000;
  const double measure = phases.measure / 1000;
  const double audit = phases.audit / 1000;
  t_.control_s += control;
  t_.load_s += load;
  t_.inputs_s += inputs;
  t_.bind_s += bind;
  t_.check_s += check;
  t_.measure_other_s += std::max(0.0, measure - warmup - sampling);
  t_.audit_s += audit;
  auto [it, fresh] = config_index_.emplace(label, t_.configs.size());
  if (fresh) t_.configs.push_back(config_timing{label, measured_on});
  config_timing& c = t_.configs[it->second];
  ++c.processes;
  c.busy_s += control + load + inputs + bind + check + measure + audit;
  c.control_s += control;
  c.load_s += load;
  c.inputs_s += inputs;
  c.bind_s += bind;
  c.check_s += check;
  c.audit_s += audit;
  c.warmup_s += warmup;
  c.sampling_s += sampling;
}

bench_timing timing_ledger::take(double total_s, int lanes) {
  std::lock_guard<std::mutex> lock(mutex_);
  bench_timing out = t_;
  out.total_s = total_s;
  out.lanes = lanes;
  return out;
}

}  // namespace detail

}  // namespace rnx::runner
