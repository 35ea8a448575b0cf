// The two baseline backends of the gate: rnx-server over HTTP, and rnx::store in-process.
#include "gate_backend.hpp"

#include "rnx/common/text.hpp"
#include "rnx/common/error.hpp"
#include "rnx/http/client.hpp"
#include "rnx/common/json.hpp"
#include "rnx/service/changes.hpp"
#include "rnx/service/run_groups.hpp"
#include "rnx/service/verdicts.hpp"

#include <boost/json.hpp>

#include <filesystem>
#include <iostream>

namespace rnx::gate {

namespace bj = boost::json;

namespace {

// Both the service and the store refuse a second upload of an identical document, naming the first
// ("... already stored as run 12 ..."): a re-run CI job then reuses that run instead of failing.
std::optional<std::string> existing_run_id(std::string_view message) {
  constexpr std::string_view marker = "already stored as run ";
  auto at = message.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string id;
  for (std::size_t i = at + marker.size(); i < message.size() && message[i] >= '0' && message[i] <= '9'; ++i) {
    id += message[i];
  }
  if (id.empty()) return std::nullopt;
  return id;
}

bj::object policy_json(const gate_policy& p) {
  return bj::object{{"rope", p.rope},
                    {"probability", p.probability},
                    {"min_samples", p.min_samples},
                    {"resamples", p.resamples},
                    {"statistic", to_string(p.stat)},
                    {"on_abstain", p.on_abstain == overall::pass    ? "pass"
                                   : p.on_abstain == overall::block ? "block"
                                                                    : "warn"},
                    {"report_only", p.report_only}};
}

std::string json_string(const bj::object& o, std::string_view key) {
  if (const auto* v = o.if_contains(key); v && v->is_string()) return std::string(v->get_string());
  return {};
}

stored_run_ref run_ref_from_json(const bj::value& v) {
  stored_run_ref ref;
  const auto* o = v.if_object();
  if (!o) return ref;
  ref.id = json_string(*o, "id");
  ref.commit = json_string(*o, "commit");
  ref.branch = json_string(*o, "branch");
  ref.env_id = json_string(*o, "env_id");
  ref.created_at = json_string(*o, "created_at");
  if (const auto* pr = o->if_contains("pull_request"); pr && pr->is_int64()) ref.pull_request = pr->get_int64();
  return ref;
}

class service_backend final : public baseline_backend {
 public:
  service_backend(std::string url, std::string token, std::chrono::milliseconds timeout)
      : url_(std::move(url)), token_(std::move(token)), timeout_(timeout) {
    while (!url_.empty() && url_.back() == '/') url_.pop_back();
  }

  std::string describe() const override { return "service " + url_; }

  uploaded_run upload(const run_document& run) override {
    try {
      bj::value body = call("POST", "/api/v1/runs", json::serialize(to_json(run)));
      uploaded_run out;
      const auto& o = body.as_object();
      out.id = json_string(o, "id");
      if (const auto* b = o.if_contains("baseline"); b && b->is_bool()) out.baseline = b->get_bool();
      if (out.id.empty()) throw error(errc::unavailable, describe() + " answered POST /api/v1/runs without a run id");
      return out;
    } catch (const error& e) {
      if (e.code() != errc::conflict) throw;
      auto id = existing_run_id(e.what());
      if (!id) throw;
      return uploaded_run{*id, run.pull_request == std::nullopt, true};
    }
  }

  verdict_document judge(const std::string& run_id, const gate_policy& policy) override {
    bj::object request{{"policy", policy_json(policy)}};
    bj::value body = call("POST", "/api/v1/runs/" + run_id + "/verdict", json::serialize(request));
    try {
      return verdict_from_json(body, describe() + " verdict");
    } catch (const error& e) {
      // A verdict the gate cannot read is the service's fault, not the user's: WARN, not exit 2.
      throw error(errc::unavailable, e.what());
    }
  }

  void check_reachable() override { call("GET", "/healthz", ""); }

  void check_access(const std::string& project, bool push) override {
    if (token_.empty()) {
      throw error(errc::unauthorized, describe() +
                                          " needs a token and RNX_TOKEN is empty: set RNX_TOKEN to a token "
                                          "of project " +
                                          project + " (`rnx-server admin token create --project " + project +
                                          "`; in GitHub Actions the `token` input, a secret)");
    }
    bj::value body = call("GET", "/api/v1/projects/" + percent_encode(project) + "/token", "");
    if (!push) return;
    const auto* allows = body.as_object().if_contains("allows");
    bool may = false;
    if (allows && allows->is_array()) {
      const std::string_view needed = store::identifier(store::token_action::move_baseline);
      for (const auto& a : allows->get_array()) may = may || (a.is_string() && a.get_string() == needed);
    }
    if (!may) {
      throw error(errc::forbidden, "RNX_TOKEN of project " + project + " has the " +
                                       json_string(body.as_object(), "scope") +
                                       " scope, which cannot upload a push run (it becomes the branch's baseline): "
                                       "give push jobs a baseline token (`rnx-server admin token create --project " +
                                       project + " --scope baseline`, the secret RNX_BASELINE_TOKEN)");
    }
  }

  verdict_document record_paired(const std::string& head_run_id, const std::string& base_run_id,
                                 const gate_policy& policy, const verdict_document& decided) override {
    bj::object request{{"base_run_id", base_run_id}, {"policy", policy_json(policy)}, {"verdict", to_json(decided)}};
    bj::value body =
        call("POST", "/api/v1/runs/" + percent_encode(head_run_id) + "/paired-verdict", json::serialize(request));
    try {
      return verdict_from_json(body, describe() + " paired verdict");
    } catch (const error& e) {
      throw error(errc::unavailable, e.what());
    }
  }

  std::vector<stored_run_ref> runs_of_branch(const std::string& project, const std::string& branch,
                                             int limit) override {
    std::string target = "/api/v1/projects/" + percent_encode(project) + "/runs?branch=" + percent_encode(branch) +
                         "&limit=" + std::to_string(limit);
    bj::value body = call("GET", target, "");
    std::vector<stored_run_ref> out;
    if (const auto* runs = body.as_object().if_contains("runs"); runs && runs->is_array()) {
      for (const auto& r : runs->get_array()) out.push_back(run_ref_from_json(r));
    }
    return out;
  }

  accepted_baseline accept(const std::string& run_id, const std::string& accepted_by,
                           const std::string& reason) override {
    bj::object request{{"run_id", run_id}, {"accepted_by", accepted_by}, {"reason", reason}};
    bj::value body = call("POST", "/api/v1/baselines", json::serialize(request));
    const auto& o = body.as_object();
    return {json_string(o, "run_id"), json_string(o, "branch"), json_string(o, "env_id")};
  }

  std::vector<config_numbers> recent_numbers(const std::string& project, const std::string& env_id,
                                             int limit) override {
    bj::value body = call("GET",
                          "/api/v1/projects/" + percent_encode(project) + "/history?env_id=" + percent_encode(env_id) +
                              "&limit=" + std::to_string(limit),
                          "");
    std::vector<config_numbers> out;
    const auto* series = body.as_object().if_contains("series");
    if (!series || !series->is_array()) return out;
    for (const auto& sv : series->get_array()) {
      const auto* s = sv.if_object();
      if (!s) continue;
      config_numbers m;
      m.key = {json_string(*s, "kernel"), json_string(*s, "runtime"), json_string(*s, "dtype"), 0};
      if (const auto* b = s->if_contains("batch"); b && b->is_int64()) m.key.batch = b->get_int64();
      if (const auto* points = s->if_contains("points"); points && points->is_array()) {
        for (const auto& p : points->get_array()) {
          const auto* o = p.if_object();
          const auto* stat = o ? o->if_contains("stat_ms") : nullptr;
          if (stat && stat->is_number()) m.points.emplace_back(json_string(*o, "run_id"), stat->to_number<double>());
        }
      }
      out.push_back(std::move(m));
    }
    return out;
  }

  // The service's run list marks baselines but not how they became one: pushed runs of the branch are what it
  // can name (baseline_source "push"); a pull request's accepted run, filed under its own branch, is not listed.
  std::vector<stored_run_ref> baseline_history(const std::string& project, const std::string& branch,
                                               const std::string& env_id, int limit) override {
    std::string target = "/api/v1/projects/" + percent_encode(project) + "/runs?branch=" + percent_encode(branch) +
                         "&env_id=" + percent_encode(env_id) + "&limit=" + std::to_string(limit);
    bj::value body = call("GET", target, "");
    std::vector<stored_run_ref> out;
    if (const auto* runs = body.as_object().if_contains("runs"); runs && runs->is_array()) {
      for (const auto& r : runs->get_array()) {
        const auto* o = r.if_object();
        const auto* b = o ? o->if_contains("baseline") : nullptr;
        if (!b || !b->is_bool() || !b->get_bool()) continue;
        stored_run_ref ref = run_ref_from_json(r);
        if (ref.env_id != env_id) continue;
        ref.baseline_source = ref.pull_request ? baseline_kind::unknown : baseline_kind::push;
        out.push_back(std::move(ref));
      }
    }
    return out;
  }

  run_document fetch_run(const std::string& run_id) override {
    bj::value body = call("GET", "/api/v1/runs/" + percent_encode(run_id), "");
    const auto* doc = body.as_object().if_contains("document");
    if (!doc) {
      throw error(errc::unavailable, describe() + " answered GET /api/v1/runs/" + run_id + " without a document");
    }
    return run_from_json(*doc, describe() + " run " + run_id, kernel_names::as_stored);
  }

  std::vector<pages::page> report_pages(const std::string&, const std::string& run_id) override {
    bj::value body = call("GET", "/api/v1/runs/" + percent_encode(run_id) + "/evidence", "");
    pages::link_style links;
    links.report = true;
    return {pages::run_page(body.as_object(), links)};
  }

  store::group_state upload_shard(const run_document& shard) override {
    bj::value body = call("POST", "/api/v1/runs", json::serialize(to_json(shard)));
    return read_group(body, "POST /api/v1/runs");
  }

  group_outcome judge_group(const std::string& project, const std::string& group, const gate_policy& policy) override {
    bj::object request{{"policy", policy_json(policy)}};
    bj::value body =
        call("POST", "/api/v1/projects/" + percent_encode(project) + "/groups/" + percent_encode(group) + "/verdict",
             json::serialize(request));
    group_outcome out;
    out.state = read_group(body, "the run group's verdict");
    if (const auto* v = body.as_object().if_contains("verdict")) {
      try {
        out.verdict = verdict_from_json(*v, describe() + " verdict");
      } catch (const error& e) {
        throw error(errc::unavailable, e.what());
      }
    }
    return out;
  }

 private:
  store::group_state read_group(const bj::value& body, std::string_view what) {
    const auto* group = body.as_object().if_contains("group");
    if (!group) throw error(errc::unavailable, describe() + " answered " + std::string(what) + " without the group");
    try {
      return store::group_state_from_json(*group, describe() + " group");
    } catch (const error& e) {
      throw error(errc::unavailable, e.what());
    }
  }

  // Returns the JSON body of a 2xx answer. 5xx and network failures are `unavailable`; a 4xx keeps
  // the service's own error code and message (they name what to fix).
  bj::value call(std::string_view method, const std::string& target, const std::string& body) {
    http::header_list headers{{"Accept", "application/json"}, {"User-Agent", "rnx-gate"}};
    if (!token_.empty()) headers.emplace_back("Authorization", "Bearer " + token_);
    if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
    const std::string url = url_ + target;
    http::response r = http::request(method, url, headers, body, timeout_);
    const std::string what = std::string(method) + " " + url + " answered " + std::to_string(r.status);
    if (r.status >= 500) throw error(errc::unavailable, what + service_message(r.body));
    bj::value parsed;
    try {
      parsed = json::parse(r.body, url);
    } catch (const std::exception&) {
      throw error(errc::unavailable, what + " with a body that is not JSON; is " + url_ + " an rnx-server?");
    }
    if (r.status / 100 == 2) {
      if (!parsed.is_object()) throw error(errc::unavailable, what + " with JSON that is not an object");
      return parsed;
    }
    const std::string message = what + service_message(r.body);
    switch (r.status) {
      case 401: throw error(errc::unauthorized, message + " (set RNX_TOKEN to a token of this project)");
      // The service says which: a token of another project, or one whose scope does not allow the request.
      case 403: throw error(errc::forbidden, message);
      case 404: throw error(errc::not_found, message);
      case 409: throw error(errc::conflict, message);
      case 413: throw error(errc::too_large, message);
      case 400: throw error(errc::bad_input, message);
      default: break;
    }
    if (r.status == 408 || r.status == 429) throw error(errc::unavailable, message);
    throw error(errc::invalid, message);
  }

  static std::string service_message(const std::string& body) {
    try {
      bj::value v = json::parse(body, "the service's error");
      if (const auto* e = v.as_object().if_contains("error"); e && e->is_object()) {
        if (const auto* m = e->as_object().if_contains("message"); m && m->is_string()) {
          return ": " + std::string(m->get_string());
        }
      }
    } catch (const std::exception&) {
      // Not the service's JSON error shape; the status says what is known.
    }
    return {};
  }

  std::string url_;
  std::string token_;
  std::chrono::milliseconds timeout_;
};

class embedded_backend final : public baseline_backend {
 public:
  embedded_backend(const std::string& path, std::chrono::seconds group_timeout)
      : path_(path), db_(prepare_path(path)), group_timeout_(group_timeout) {}

  std::string describe() const override { return "embedded store " + path_; }

  uploaded_run upload(const run_document& run) override {
    auto project = db_.ensure_project(run.project);
    try {
      auto outcome = store::upload_run(db_, project.id, run);
      if (outcome.baseline) announce_changes(outcome.run.id);
      return uploaded_run{std::to_string(outcome.run.id), outcome.baseline.has_value(), false};
    } catch (const error& e) {
      if (e.code() != errc::conflict) throw;
      auto id = existing_run_id(e.what());
      if (!id) throw;
      return uploaded_run{*id, run.pull_request == std::nullopt, true};
    }
  }

  void check_reachable() override {}
  void check_access(const std::string&, bool) override {}

  verdict_document record_paired(const std::string& head_run_id, const std::string& base_run_id,
                                 const gate_policy& policy, const verdict_document& decided) override {
    auto head = db_.find_run_summary(to_id(head_run_id));
    if (!head) throw error(errc::not_found, "run " + head_run_id + " does not exist in " + describe());
    auto project = db_.find_project(head->project);
    if (!project) throw error(errc::internal, "run " + head_run_id + " has no project in " + describe());
    return store::record_paired_verdict(db_, project->id, head->id, to_id(base_run_id), policy, decided).verdict;
  }

  verdict_document judge(const std::string& run_id, const gate_policy& policy) override {
    return store::judge_stored_run(db_, to_id(run_id), policy, store::advice_route{path_}).verdict;
  }

  std::vector<stored_run_ref> runs_of_branch(const std::string& project, const std::string& branch,
                                             int limit) override {
    std::vector<stored_run_ref> out;
    auto p = db_.find_project(project);
    if (!p) return out;
    store::run_filter filter;
    filter.branch = branch;
    filter.limit = limit;
    for (const auto& s : db_.list_runs(p->id, filter)) {
      out.push_back({std::to_string(s.id), s.commit, s.branch, s.env_id, s.pull_request, s.created_at});
    }
    return out;
  }

  accepted_baseline accept(const std::string& run_id, const std::string& accepted_by,
                           const std::string& reason) override {
    const std::int64_t id = to_id(run_id);
    auto stored = db_.find_run(id);
    if (!stored) throw error(errc::not_found, "run " + run_id + " does not exist in " + describe());
    auto project = db_.find_project(stored->summary.project);
    if (!project) throw error(errc::internal, "run " + run_id + " has no project in " + describe());
    auto record = store::accept_run(db_, project->id, id, accepted_by, reason, 0);
    return {std::to_string(record.run_id), record.branch, record.env_id};
  }

  std::vector<config_numbers> recent_numbers(const std::string& project, const std::string& env_id,
                                             int limit) override {
    std::vector<config_numbers> out;
    auto p = db_.find_project(project);
    if (!p) return out;
    store::run_filter filter;
    filter.env_id = env_id;
    filter.limit = limit;
    for (const auto& s : db_.history(p->id, filter)) {
      config_numbers m{s.key, {}};
      for (const auto& point : s.points) {
        if (point.number.ms) m.points.emplace_back(std::to_string(point.run_id), *point.number.ms);
      }
      out.push_back(std::move(m));
    }
    return out;
  }

  std::vector<stored_run_ref> baseline_history(const std::string& project, const std::string& branch,
                                               const std::string& env_id, int limit) override {
    std::vector<stored_run_ref> out;
    auto p = db_.find_project(project);
    if (!p) return out;
    // Every run of the environment, not only the branch's own: an accepted pull request run is filed under its
    // pull request's branch and is a baseline of the branch it was accepted into.
    store::run_filter filter;
    filter.env_id = env_id;
    filter.limit = 10 * limit;
    for (const auto& s : db_.list_runs(p->id, filter)) {
      if (!s.baseline) continue;
      auto record = db_.baseline_of_run(s.id);
      if (!record || record->branch != branch) continue;
      out.push_back({std::to_string(s.id), s.commit, s.branch, s.env_id, s.pull_request, s.created_at, record->source});
      if (static_cast<int>(out.size()) >= limit) break;
    }
    return out;
  }

  run_document fetch_run(const std::string& run_id) override {
    auto stored = db_.find_run(to_id(run_id));
    if (!stored) throw error(errc::not_found, "run " + run_id + " does not exist in " + describe());
    return stored->document;
  }

  std::vector<pages::page> report_pages(const std::string& project, const std::string& run_id) override {
    auto p = db_.find_project(project);
    if (!p) throw error(errc::not_found, "project " + project + " is not in " + describe());
    return pages::report_pages(db_, *p, to_id(run_id));
  }

  store::group_state upload_shard(const run_document& shard) override {
    return store::receive_shard(db_, db_.ensure_project(shard.project).id, shard, group_timeout_);
  }

  group_outcome judge_group(const std::string& project, const std::string& group, const gate_policy& policy) override {
    auto p = db_.find_project(project);
    if (!p) throw error(errc::not_found, "project " + project + " is not in " + describe());
    auto judged = store::judge_run_group(db_, p->id, group, policy, group_timeout_, store::advice_route{path_});
    group_outcome out{std::move(judged.state), std::nullopt};
    if (judged.judged) out.verdict = std::move(judged.judged->verdict);
    return out;
  }

 private:
  // The change points this push run revealed in its branch's history (stored for `rnx changes`), one line each;
  // a failed scan is a warning, never a failed upload.
  void announce_changes(std::int64_t run_id) {
    try {
      for (const auto& c : store::detect_changes(db_, run_id)) {
        std::cerr << "rnx: change point on " << c.branch << ": " << c.key.label() << " x" << c.ratio << " [" << c.ci_lo
                  << ", " << c.ci_hi << "], P " << c.probability << ", from commit " << c.commit
                  << " (rnx changes --store " << path_ << ")\n";
      }
    } catch (const std::exception& e) {
      std::cerr << "rnx: warning: the change-point scan after run " << run_id << " failed: " << e.what() << "\n";
    }
  }

  static std::filesystem::path prepare_path(const std::string& path) {
    std::filesystem::path p(path);
    if (p.has_parent_path()) {
      std::error_code ec;
      std::filesystem::create_directories(p.parent_path(), ec);
      if (ec) {
        throw error(errc::usage, "cannot create the folder of the embedded store " + path + ": " + ec.message() +
                                     "; pass --store with a writable path");
      }
    }
    return p;
  }

  std::int64_t to_id(const std::string& run_id) const {
    std::int64_t id = 0;
    for (char c : run_id) {
      if (c < '0' || c > '9' || id > INT64_MAX / 10 - 10) id = -1;
      if (id < 0) break;
      id = id * 10 + (c - '0');
    }
    if (run_id.empty() || id < 1) {
      throw error(errc::usage, "\"" + run_id + "\" is not a run id; run ids are the numbers `rnx gate` prints");
    }
    return id;
  }

  std::string path_;
  store::database db_;
  std::chrono::seconds group_timeout_;
};

}  // namespace

std::unique_ptr<baseline_backend> make_service_backend(std::string url, std::string token,
                                                       std::chrono::milliseconds timeout) {
  return std::make_unique<service_backend>(std::move(url), std::move(token), timeout);
}

std::unique_ptr<baseline_backend> make_embedded_backend(const std::string& path, std::chrono::seconds group_timeout) {
  return std::make_unique<embedded_backend>(path, group_timeout);
}

}  // namespace rnx::gate
