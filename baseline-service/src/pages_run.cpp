// The run page: a run's verdict evidence as a run_view (from the store, or from documents for `rnx report` and the
// gate's report.html), its JSON both ways, and its HTML. Every number is the run statistic the verdict compared.
#include "rnx/service/page_views.hpp"
#include "rnx/service/pages.hpp"

#include "pages_parts.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/stats/posterior.hpp"
#include "rnx/stats/run_statistic.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

namespace rnx::pages {

using namespace parts;

namespace {

constexpr std::size_t samples_per_process = 100;  // strip charts show at most this many quantiles per process

// Evenly spaced order statistics of one process's samples: the strip chart keeps its shape at any sample count.
std::vector<double> thinned(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  if (samples.size() <= samples_per_process) return samples;
  std::vector<double> out;
  for (std::size_t i = 0; i < samples_per_process; ++i) {
    out.push_back(samples[i * (samples.size() - 1) / (samples_per_process - 1)]);
  }
  return out;
}

// One side of a configuration; `verdict_ms` is what the verdict said this side's statistic is (base_ms, head_ms).
run_side side_of(const run_result& r, std::optional<double> verdict_ms, statistic stat) {
  run_side side;
  side.status = r.status;
  side.message = r.message;
  side.n = static_cast<std::int64_t>(r.samples_ms.size());
  side.number = number_of(r);
  // The verdict's own number where it judged this side: the terminal printed it. Its interval is the run
  // statistic's, which is the same statistic unless the project's gate compares means.
  if (verdict_ms) {
    side.number.ms = verdict_ms;
    if (stat != statistic::median) side.number.lo_ms = side.number.hi_ms = std::nullopt;
  }
  std::size_t at = 0;
  std::vector<std::int64_t> groups = r.groups;
  if (groups.empty()) groups.push_back(static_cast<std::int64_t>(r.samples_ms.size()));
  for (auto g : groups) {
    auto end = std::min(r.samples_ms.size(), at + static_cast<std::size_t>(std::max<std::int64_t>(g, 0)));
    side.processes.push_back(thinned(std::vector<double>(r.samples_ms.begin() + static_cast<std::ptrdiff_t>(at),
                                                         r.samples_ms.begin() + static_cast<std::ptrdiff_t>(end))));
    at = end;
  }
  return side;
}

run_header header_of(const run_document& d, const std::string& id) {
  return {id, d.commit, d.branch, d.base_branch, d.pull_request, d.env.env_id, d.created_at, false};
}

run_header header_of(const store::run_summary& s) {
  return {std::to_string(s.id), s.commit, s.branch, s.base_branch, s.pull_request, s.env_id, s.created_at, s.baseline};
}

bj::value opt(const std::optional<double>& v) { return v ? bj::value(*v) : bj::value(nullptr); }

std::optional<double> opt_num(const bj::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (!v) return std::nullopt;
  if (v->is_double()) return v->as_double();
  if (v->is_int64()) return static_cast<double>(v->as_int64());
  return std::nullopt;
}

std::string text_of(const bj::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

const bj::object* object_of(const bj::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_object() ? &v->as_object() : nullptr;
}

bj::object side_json(const run_side& s) {
  bj::array processes;
  for (const auto& p : s.processes) processes.push_back(bj::array(p.begin(), p.end()));
  bj::object out{
      {"status", to_string(s.status)}, {"message", s.message}, {"n", s.n}, {"processes", std::move(processes)}};
  write_number(out, s.number);
  return out;
}

run_side side_from_json(const bj::object& o) {
  run_side s;
  s.status = result_status_from_string(text_of(o, "status")).value_or(result_status::ok);
  s.message = text_of(o, "message");
  s.number = read_number(o);
  s.n = static_cast<std::int64_t>(opt_num(o, "n").value_or(0));
  if (const auto* p = o.if_contains("processes"); p && p->is_array()) {
    for (const auto& process : p->as_array()) {
      std::vector<double> samples;
      if (process.is_array()) {
        for (const auto& v : process.as_array()) {
          if (v.is_number()) samples.push_back(v.to_number<double>());
        }
      }
      s.processes.push_back(std::move(samples));
    }
  }
  return s;
}

std::optional<light_figures> light_from_json(const bj::object& o) {
  light_figures l;
  auto fraction = opt_num(o, "fraction");
  auto ideal = opt_num(o, "ideal_ms");
  if (!fraction || !ideal) return std::nullopt;
  l.measured.fraction = *fraction;
  l.measured.ideal_ms = *ideal;
  l.measured.compute_bound = text_of(o, "bound") == "compute";
  l.measured.elementwise = text_of(o, "bound") == "elementwise";
  l.error = opt_num(o, "peak_error").value_or(0);
  l.sheet_fraction = opt_num(o, "sheet_fraction");
  return l;
}

bj::object config_json(const run_config_row& c) {
  bj::object o = key_json(c.key);
  const auto* v = c.judged ? &*c.judged : nullptr;
  o["decision"] = v ? bj::value(to_string(v->result)) : bj::value(nullptr);
  o["ratio"] = v ? opt(v->ratio) : bj::value(nullptr);
  o["ci95"] = v && v->ci_lo && v->ci_hi ? bj::value(bj::array{*v->ci_lo, *v->ci_hi}) : bj::value(nullptr);
  o["p_faster"] = v ? opt(v->p_faster) : bj::value(nullptr);
  o["p_slower"] = v ? opt(v->p_slower) : bj::value(nullptr);
  o["p_equivalent"] = v ? opt(v->p_equivalent) : bj::value(nullptr);
  o["mde"] = v ? opt(v->mde) : bj::value(nullptr);
  o["n_base"] = v ? bj::value(v->n_base) : bj::value(nullptr);
  o["n_head"] = v ? bj::value(v->n_head) : bj::value(nullptr);
  o["change"] = v ? change_text(v->ratio, v->ci_lo, v->ci_hi) : "";
  o["reason"] = v ? v->reason : "";
  o["pairing"] = v ? to_string(v->pairing) : "";
  o["head"] = c.head ? bj::value(side_json(*c.head)) : bj::value(nullptr);
  o["base"] = c.base ? bj::value(side_json(*c.base)) : bj::value(nullptr);
  o["light"] = c.light ? bj::value(light_json(*c.light)) : bj::value(nullptr);
  return o;
}

run_config_row config_from_json(const bj::object& o) {
  run_config_row c;
  c.key = {text_of(o, "kernel"), text_of(o, "runtime"), text_of(o, "dtype"),
           static_cast<std::int64_t>(opt_num(o, "batch").value_or(0))};
  if (auto d = decision_from_string(text_of(o, "decision"))) {
    config_verdict v;
    v.key = c.key;
    v.result = *d;
    v.ratio = opt_num(o, "ratio");
    if (const auto* ci = o.if_contains("ci95"); ci && ci->is_array() && ci->as_array().size() == 2) {
      const auto& pair = ci->as_array();
      if (pair[0].is_number() && pair[1].is_number()) {
        v.ci_lo = pair[0].to_number<double>();
        v.ci_hi = pair[1].to_number<double>();
      }
    }
    v.p_faster = opt_num(o, "p_faster");
    v.p_slower = opt_num(o, "p_slower");
    v.p_equivalent = opt_num(o, "p_equivalent");
    v.mde = opt_num(o, "mde");
    v.n_base = static_cast<std::int64_t>(opt_num(o, "n_base").value_or(0));
    v.n_head = static_cast<std::int64_t>(opt_num(o, "n_head").value_or(0));
    v.reason = text_of(o, "reason");
    v.pairing = pairing_mode_from_string(text_of(o, "pairing")).value_or(pairing_mode::none);
    c.judged = std::move(v);
  }
  if (const auto* h = object_of(o, "head")) c.head = side_from_json(*h);
  if (const auto* b = object_of(o, "base")) c.base = side_from_json(*b);
  if (const auto* l = object_of(o, "light")) c.light = light_from_json(*l);
  return c;
}

bj::object environment_json(const environment& e) {
  return {{"env_id", e.env_id}, {"device", e.device}, {"cpu", e.cpu},       {"threads", e.threads},
          {"torch", e.torch},   {"cuda", e.cuda},     {"driver", e.driver}, {"os", e.os}};
}

environment environment_from_json(const bj::object& o) {
  environment e;
  e.env_id = text_of(o, "env_id");
  e.device = text_of(o, "device");
  e.cpu = text_of(o, "cpu");
  e.threads = static_cast<std::int64_t>(opt_num(o, "threads").value_or(0));
  e.torch = text_of(o, "torch");
  e.cuda = text_of(o, "cuda");
  e.driver = text_of(o, "driver");
  e.os = text_of(o, "os");
  return e;
}

}  // namespace

bj::object key_json(const config_key& k) {
  return {{"config", k.label()}, {"kernel", k.kernel}, {"runtime", k.runtime}, {"dtype", k.dtype}, {"batch", k.batch}};
}

store::run_number number_of(const run_result& r) {
  store::run_number n;
  n.unstable = r.unstable;
  n.unstable_reason = r.unstable ? r.message : "";
  if (r.status != result_status::ok) return n;
  if (auto s = stats::run_statistic({r.samples_ms, r.groups})) {
    n.ms = s->ms;
    n.lo_ms = s->lo_ms;
    n.hi_ms = s->hi_ms;
  }
  return n;
}

void write_number(bj::object& out, const store::run_number& n) {
  out["stat_ms"] = opt(n.ms);
  out["stat_lo_ms"] = opt(n.lo_ms);
  out["stat_hi_ms"] = opt(n.hi_ms);
  out["unstable"] = n.unstable;
  out["unstable_reason"] = n.unstable_reason;
}

store::run_number read_number(const bj::object& in) {
  store::run_number n;
  n.ms = opt_num(in, "stat_ms");
  n.lo_ms = opt_num(in, "stat_lo_ms");
  n.hi_ms = opt_num(in, "stat_hi_ms");
  const auto* u = in.if_contains("unstable");
  n.unstable = u && u->is_bool() && u->as_bool();
  n.unstable_reason = text_of(in, "unstable_reason");
  return n;
}

std::string unstable_text(const store::run_number& n) {
  if (!n.unstable) return "";
  if (n.unstable_reason.empty()) return "unstable";
  constexpr std::string_view prefix = "unstable: ";
  const bool prefixed = n.unstable_reason.compare(0, prefix.size(), prefix) == 0;
  return prefixed ? n.unstable_reason : std::string(prefix) + n.unstable_reason;
}

std::string unstable_summary(const store::run_number& n) {
  constexpr std::size_t most = 160;
  std::string line = n.unstable_reason.empty() ? "unstable" : "unstable: " + stats::unstable_line(n.unstable_reason);
  if (line.size() <= most) return line;
  const auto space = line.rfind(' ', most - 3);
  return line.substr(0, space == std::string::npos ? most - 3 : space) + "...";
}

run_view run_data(const run_document& head, const std::string& head_id, const run_document* base,
                  const std::string& base_id, const verdict_document* verdict) {
  std::map<config_key, const run_result*> base_results;
  if (base) {
    for (const auto& r : base->results) base_results[r.key()] = &r;
  }
  std::map<config_key, const config_verdict*> judged;
  if (verdict) {
    for (const auto& c : verdict->configs) judged[c.key] = &c;
  }
  const statistic stat = verdict ? verdict->policy.stat : statistic::median;
  run_view out;
  std::set<config_key> seen;
  auto add = [&](const config_key& key, const run_result* head_result) {
    seen.insert(key);
    run_config_row row;
    row.key = key;
    auto it = judged.find(key);
    const config_verdict* v = it == judged.end() ? nullptr : it->second;
    if (v) row.judged = *v;
    if (head_result) row.head = side_of(*head_result, v ? v->head_ms : std::nullopt, stat);
    if (auto b = base_results.find(key); b != base_results.end()) {
      row.base = side_of(*b->second, v ? v->base_ms : std::nullopt, stat);
    }
    if (head_result && row.head) row.light = light_of(*head_result, head.env, row.head->number.ms);
    out.configs.push_back(std::move(row));
  };
  for (const auto& r : head.results) add(r.key(), &r);
  // Configurations only the verdict knows (missing from the head) still get their row.
  for (const auto& [key, v] : judged) {
    if (!seen.count(key)) add(key, nullptr);
  }
  out.project = head.project;
  out.run = header_of(head, head_id);
  out.env = head.env;
  if (verdict) out.verdict = *verdict;
  out.rope = verdict ? verdict->policy.rope : gate_policy{}.rope;
  if (base) out.base_run = base_run_ref{base_id, base->commit, base->created_at, base->env.env_id};
  return out;
}

run_view run_data(store::database& db, std::int64_t run_id) {
  auto head = db.find_run(run_id);
  if (!head) throw error(errc::not_found, "run " + std::to_string(run_id) + " does not exist");
  std::optional<verdict_document> verdict;
  std::optional<store::verdict_kind> kind;
  std::optional<std::int64_t> base_id;
  if (auto row = db.verdict_of_run(run_id)) {
    verdict = verdict_from_json(json::parse(row->document, "stored verdict"), "stored verdict");
    kind = row->kind;
    // The stored run it compared with; a paired verdict names its base revision ("paired:REF") in the document
    // and its stored base run only here.
    base_id = row->baseline_run_id;
    if (!base_id && verdict->baseline) base_id = parse_positive_id(verdict->baseline->id);
  }
  std::optional<store::stored_run> base;
  if (base_id) base = db.find_run(*base_id);
  auto record = db.baseline_of_run(run_id);
  if (verdict) {
    verdict->reason = shown_reason(*verdict, record, head->summary);
    verdict->verdict = shown_overall(*verdict, record);
  }
  auto out = run_data(head->document, std::to_string(run_id), base ? &base->document : nullptr,
                      base ? std::to_string(base->summary.id) : "", verdict ? &*verdict : nullptr);
  out.run = header_of(head->summary);
  out.verdict_kind = kind;
  out.baseline_record = record;
  return out;
}

bj::object to_json(const run_view& v) {
  bj::array configs;
  for (const auto& c : v.configs) configs.push_back(config_json(c));
  bj::object run{{"id", v.run.id},
                 {"commit", v.run.commit},
                 {"branch", v.run.branch},
                 {"base_branch", v.run.base_branch},
                 {"pull_request", v.run.pull_request ? bj::value(*v.run.pull_request) : bj::value(nullptr)},
                 {"env_id", v.run.env_id},
                 {"created_at", v.run.created_at},
                 {"baseline", v.run.baseline}};
  bj::object out{{"project", v.project},
                 {"statistic", statistic_description},
                 {"run", std::move(run)},
                 {"environment", environment_json(v.env)},
                 {"verdict", v.verdict ? bj::value(to_json(*v.verdict)) : bj::value(nullptr)},
                 // "paired", "request", "regression"; "" without a stored verdict
                 {"verdict_kind", v.verdict_kind ? store::to_string(*v.verdict_kind) : ""},
                 {"rope", v.rope},
                 {"figures", to_string(v.figures)},
                 {"configs", std::move(configs)}};
  out["base_run"] = v.base_run ? bj::value(bj::object{{"id", v.base_run->id},
                                                      {"commit", v.base_run->commit},
                                                      {"created_at", v.base_run->created_at},
                                                      {"env_id", v.base_run->env_id}})
                               : bj::value(nullptr);
  const auto& r = v.baseline_record;
  out["baseline_record"] = r ? bj::value(bj::object{{"source", to_string(r->source)},
                                                    {"branch", r->branch},
                                                    {"accepted_by", r->accepted_by},
                                                    {"reason", r->reason},
                                                    {"created_at", r->created_at}})
                             : bj::value(nullptr);
  return out;
}

run_view run_view_from_json(const bj::object& o) {
  run_view v;
  v.project = text_of(o, "project");
  if (const auto* r = object_of(o, "run")) {
    v.run.id = text_of(*r, "id");
    v.run.commit = text_of(*r, "commit");
    v.run.branch = text_of(*r, "branch");
    v.run.base_branch = text_of(*r, "base_branch");
    if (auto pr = opt_num(*r, "pull_request")) v.run.pull_request = static_cast<std::int64_t>(*pr);
    v.run.env_id = text_of(*r, "env_id");
    v.run.created_at = text_of(*r, "created_at");
  }
  if (const auto* e = object_of(o, "environment")) v.env = environment_from_json(*e);
  // What a server sends is what was uploaded to it: reported, unless it says otherwise.
  v.figures = text_of(o, "figures") == "measured" ? figure_source::measured : figure_source::reported;
  if (const auto* verdict = o.if_contains("verdict"); verdict && verdict->is_object()) {
    v.verdict = verdict_from_json(*verdict, "the run page's verdict");
  }
  v.verdict_kind = store::verdict_kind_from_string(text_of(o, "verdict_kind"));
  v.rope = opt_num(o, "rope").value_or(gate_policy{}.rope);
  if (const auto* configs = o.if_contains("configs"); configs && configs->is_array()) {
    for (const auto& c : configs->as_array()) {
      if (c.is_object()) v.configs.push_back(config_from_json(c.as_object()));
    }
  }
  if (const auto* b = object_of(o, "base_run")) {
    v.base_run =
        base_run_ref{text_of(*b, "id"), text_of(*b, "commit"), text_of(*b, "created_at"), text_of(*b, "env_id")};
  }
  if (const auto* b = object_of(o, "baseline_record")) {
    store::baseline_record r;
    r.source = baseline_kind_from_string(text_of(*b, "source")).value_or(baseline_kind::push);
    r.branch = text_of(*b, "branch");
    r.accepted_by = text_of(*b, "accepted_by");
    r.reason = text_of(*b, "reason");
    r.created_at = text_of(*b, "created_at");
    v.baseline_record = std::move(r);
  }
  return v;
}

}  // namespace rnx::pages
