// Routing and handlers of the rnx-server API; every failure becomes {"error": {"code", "message"}} with its status.
#include "rnx/service/api.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/text.hpp"
#include "rnx/service/changes.hpp"
#include "rnx/service/notifier.hpp"
#include "rnx/service/pages.hpp"
#include "rnx/service/verdicts.hpp"

#include "api_groups.hpp"
#include "pages_routes.hpp"
#include "router.hpp"

#include <boost/beast/http/field.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>

namespace rnx::service {

namespace bj = boost::json;
namespace bhttp = boost::beast::http;

namespace {

bj::value summary_json(const store::run_summary& s) {
  return bj::object{{"id", std::to_string(s.id)},
                    {"project", s.project},
                    {"commit", s.commit},
                    {"branch", s.branch},
                    {"base_branch", s.base_branch},
                    {"pull_request", s.pull_request ? bj::value(*s.pull_request) : bj::value(nullptr)},
                    {"env_id", s.env_id},
                    {"created_at", s.created_at},
                    {"received_at", s.received_at},
                    {"baseline", s.baseline},
                    {"n_results", s.n_results}};
}

bj::value baseline_json(const store::baseline_record& b) {
  return bj::object{{"id", std::to_string(b.id)}, {"run_id", std::to_string(b.run_id)}, {"branch", b.branch},
                    {"env_id", b.env_id},         {"source", to_string(b.source)},      {"accepted_by", b.accepted_by},
                    {"reason", b.reason},         {"created_at", b.created_at}};
}

// Run ids are the positive integers the store hands out; anything else cannot name a run.
std::int64_t parse_run_id(std::string_view text, std::string_view where) {
  auto id = pages::parse_positive_id(text);
  if (!id) {
    throw error(errc::bad_input, std::string(where) + ": run id \"" + message_shown(text, 40) +
                                     "\" is not valid; use the numeric id that POST /api/v1/runs returned");
  }
  return *id;
}

// What a run id of another project answers, word for word what an id that names no run does: the caller learns
// nothing about other projects' runs (not even that they exist).
error run_not_found(const store::auth_result& who, std::int64_t run_id) {
  return error(errc::not_found, "run " + std::to_string(run_id) + " does not exist in project \"" + who.project +
                                    "\" (the token's); use an id that POST /api/v1/runs returned for this project");
}

// A run id a request body gives as a decimal string: a bad one is 422 (the body itself parsed), not the path's 400.
std::int64_t body_run_id(const json::reader& field, std::string_view where) {
  try {
    return parse_run_id(field.string(), where);
  } catch (const error& e) {
    throw error(errc::invalid, e.what());
  }
}

bj::value parse_body(const request& req, std::size_t max_depth, std::string_view what) {
  if (req.body().empty()) {
    throw error(errc::bad_input,
                "request body is empty: send " + std::string(what) + " as JSON with Content-Type: application/json");
  }
  return json::parse(req.body(), "request body", max_depth);
}

gate_policy read_policy(const json::reader& p, gate_policy policy);

gate_policy policy_from(const request& req, const gate_policy& fallback, std::size_t max_depth) {
  gate_policy policy = fallback;
  if (req.body().empty()) return policy;
  auto body = json::parse(req.body(), "request body", max_depth);
  json::reader r(body, "request body");
  r.only_keys({"policy"});
  // An explicit null is refused rather than read as "defaults", so typos in generated bodies surface.
  if (auto it = r.object().find("policy"); it != r.object().end() && it->value().is_null()) {
    r.at("policy").fail("an object of policy fields (or leave \"policy\" out for the defaults)");
  }
  auto p = r.maybe("policy");
  if (!p) return policy;
  return read_policy(*p, policy);
}

// The policy fields of a request body's "policy" object over `policy`; validated.
gate_policy read_policy(const json::reader& p, gate_policy policy) {
  p.only_keys({"rope", "probability", "min_samples", "resamples", "statistic", "on_abstain", "report_only"});
  if (auto v = p.maybe("rope")) policy.rope = v->number();
  if (auto v = p.maybe("probability")) policy.probability = v->number();
  if (auto v = p.maybe("min_samples")) {
    auto n = v->integer();
    if (n < 2 || n > 1000000) v->fail("an integer between 2 and 1000000");
    policy.min_samples = static_cast<int>(n);
  }
  if (auto v = p.maybe("resamples")) {
    auto n = v->integer();
    if (n < 100 || n > 100000) v->fail("an integer between 100 and 100000");
    policy.resamples = static_cast<int>(n);
  }
  if (auto v = p.maybe("statistic")) {
    auto s = statistic_from_string(v->string());
    if (!s) v->fail("\"median\" or \"mean\"");
    policy.stat = *s;
  }
  if (auto v = p.maybe("on_abstain")) {
    auto answer = overall_from_string(v->string());
    if (!answer) v->fail("one of \"warn\", \"pass\", \"block\"");
    policy.on_abstain = *answer;
  }
  if (auto v = p.maybe("report_only")) policy.report_only = v->boolean();
  try {
    validate(policy);
  } catch (const error& e) {
    throw error(errc::invalid, std::string("request body: $.policy: ") + e.what());
  }
  return policy;
}

int parse_limit(const std::map<std::string, std::string>& query) {
  auto it = query.find("limit");
  if (it == query.end()) return 50;
  const std::string& text = it->second;
  bool ok = !text.empty() && text.size() <= 4;
  int n = 0;
  for (char c : text) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) n = n * 10 + (c - '0');
  }
  if (!ok || n < 1 || n > 1000) {
    throw error(errc::bad_input,
                "query parameter limit=\"" + text.substr(0, 20) + "\" is not valid: use an integer from 1 to 1000");
  }
  return n;
}

std::optional<std::string> query_value(const std::map<std::string, std::string>& query, const std::string& key) {
  auto it = query.find(key);
  if (it == query.end()) return std::nullopt;
  return it->second;
}

// The filters both listings (runs, history) read from the query: branch, env_id and limit.
store::run_filter listing_filter(const std::map<std::string, std::string>& query) {
  store::run_filter filter;
  filter.branch = query_value(query, "branch");
  filter.env_id = query_value(query, "env_id");
  filter.limit = parse_limit(query);
  return filter;
}

}  // namespace

response error_response(int status, std::string_view code, std::string_view message, unsigned version,
                        bool keep_alive) {
  bj::object body{{"error", bj::object{{"code", code}, {"message", message}}}};
  response res{static_cast<bhttp::status>(status), version};
  res.set(bhttp::field::content_type, "application/json");
  res.set(bhttp::field::cache_control, "no-store");
  res.keep_alive(keep_alive);
  res.body() = json::serialize(body);
  res.body() += '\n';
  res.prepare_payload();
  if (status == 401) res.set(bhttp::field::www_authenticate, "Bearer realm=\"rnx\"");
  return res;
}

api::api(store::database& db, metrics& m, notifier* notify, api_options options)
    : db_(db),
      metrics_(m),
      notify_(notify),
      options_(options),
      pages_(std::make_unique<page_routes>(db)),
      router_(std::make_unique<router>()) {
  add_api_routes();
  pages_->add_routes(*router_);
}

api::~api() = default;

response api::handle_request(const request& req) { return handle_request(req, check_credentials(req)); }

response api::handle_request(const request& req, const credential& who) {
  auto start = std::chrono::steady_clock::now();
  std::string route_name = "unmatched";
  response res;
  try {
    res = router_->dispatch(req, route_name);
  } catch (const error& e) {
    res = error_response(e.http_status(), errc_name(e.code()), e.what(), req.version(), req.keep_alive());
  } catch (const std::exception& e) {
    res = error_response(500, "internal", std::string("internal error (please report it): ") + e.what(), req.version(),
                         req.keep_alive());
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics_.observe_request(route_name, std::string(req.method_string()), res.result_int(), seconds,
                           who.state == credential_state::valid ? who.project_id : 0);
  return res;
}

credential api::check_credentials(const request& req) {
  std::string token = request_token(req);
  if (token.empty()) return {};
  try {
    auto who = db_.authenticate(token);
    if (!who) return {credential_state::invalid, 0, 0};
    return {credential_state::valid, who->token_id, who->project_id};
  } catch (const std::exception&) {
    return {};  // a database error is answered by the request itself; the connection is not held for it
  }
}

response api::refusal(const request& req, request_admission what, const credential& who) {
  const std::int64_t project = who.state == credential_state::valid ? who.project_id : 0;
  response res;
  if (what == request_admission::refuse_token_not_valid) {
    std::string why =
        "the token this connection was held under is no longer valid (revoked, expired or replaced "
        "by one that is not valid); the connection is closed";
    try {
      if (auto expired = db_.find_expired(request_token(req))) why += ": the token " + expired_token_text(*expired);
    } catch (const std::exception&) {
      // The refusal stands without the detail.
    }
    res = error_response(401, "unauthorized", why, req.version(), false);
  } else {
    const bool per_token = what == request_admission::refuse_token_limit;
    res = error_response(429, "too_many_connections",
                         std::string(per_token ? "this token" : "this token's project") +
                             " already holds as many open connections as "
                             "the server allows (rnx-server serve " +
                             (per_token ? "--max-connections-per-token" : "--max-connections-per-project") +
                             "); close idle connections or reuse one, and retry",
                         req.version(), false);
    res.set(bhttp::field::retry_after, "1");
  }
  metrics_.observe_request(to_string(what), std::string(req.method_string()), res.result_int(), 0.0, project);
  return res;
}

store::auth_result api::authenticate(const request& req) {
  auto it = req.find(bhttp::field::authorization);
  if (it == req.end()) {
    throw error(errc::unauthorized,
                "missing Authorization header: send \"Authorization: Bearer <token>\" with a token from "
                "`rnx-server admin token create --project NAME`");
  }
  std::string_view value(it->value().data(), it->value().size());
  constexpr std::string_view scheme = "Bearer ";
  if (value.size() <= scheme.size() || value.substr(0, scheme.size()) != scheme) {
    throw error(errc::unauthorized, "Authorization header must be \"Bearer <token>\"");
  }
  auto who = db_.authenticate(value.substr(scheme.size()));
  if (!who) {
    // The holder of an expired token is told so, with its project: it is theirs. Any other token gets no detail.
    if (auto expired = db_.find_expired(value.substr(scheme.size()))) {
      throw error(errc::unauthorized, "the bearer token " + expired_token_text(*expired));
    }
    throw error(errc::unauthorized,
                "the bearer token is not valid (unknown, revoked or mistyped); create one with "
                "`rnx-server admin token create --project NAME`");
  }
  return *who;
}

store::project_info api::authorize_project(const store::auth_result& who, const std::string& project) {
  if (who.project != project) {
    throw error(errc::forbidden, "this token belongs to project \"" + who.project + "\", not \"" + project +
                                     "\"; use a token of that project");
  }
  return store::project_info{who.project_id, who.project, ""};
}

store::run_summary api::run_of_token_project(const store::auth_result& who, std::int64_t run_id) {
  auto stored = db_.find_run_summary(run_id);
  if (!stored || stored->project != who.project) throw run_not_found(who, run_id);
  return *stored;
}

void api::require_scope(const store::auth_result& who, store::token_action action) {
  if (store::scope_allows(who.scope, action) && who.scope != store::token_scope::legacy) return;
  std::string what(store::to_string(action));
  if (who.scope == store::token_scope::legacy) {
    std::cerr << "rnx-server: warning: token \"" << who.label << "\" of project " << who.project
              << " has no scope (made before scopes existed) and was allowed to " << what
              << "; re-issue it with `rnx-server admin token rotate ID --scope upload|baseline|accept|admin`\n";
    return;
  }
  std::string allowed = store::scopes_allowing(action);
  std::string hint;
  if (action == store::token_action::accept_run) {
    hint = "; the accept workflow keeps such a token in the secret RNX_ACCEPT_TOKEN (ci-examples/accept-comment.yml)";
  }
  if (action == store::token_action::move_baseline) {
    hint =
        "; a push run (no pull_request) replaces branch baselines, which is an accept. Upload tokens can upload "
        "pull-request runs only: give the CI job of pushes to a protected branch a baseline token";
  }
  // The scope a fix most likely wants: the narrowest that allows the action.
  std::string needed = action == store::token_action::move_baseline ? "baseline"
                       : action == store::token_action::accept_run  ? "accept"
                                                                    : "upload";
  throw error(errc::forbidden, "this token (\"" + who.label + "\") has the " +
                                   std::string(store::to_string(who.scope)) + " scope; to " + what +
                                   " a token needs the " + allowed + " scope" + hint +
                                   " (`rnx-server admin token create --project " + who.project + " --scope " + needed +
                                   " --label NAME`)");
}

void api::add_api_routes() {
  using bhttp::verb;
  auto to = [this](response (api::*handler)(const route_call&)) {
    return [this, handler](const route_call& c) { return (this->*handler)(c); };
  };
  router& r = *router_;
  r.add({"/healthz", {verb::get}, {}, answer_form::json, to(&api::healthz)});
  r.add({"/metrics", {verb::get}, {}, answer_form::json, to(&api::metrics_text)});
  r.add({"/api/v1/runs", {verb::post}, {}, answer_form::json, to(&api::post_run)});
  r.add({"/api/v1/runs/{id}", {verb::get}, {}, answer_form::json, to(&api::get_run)});
  r.add({"/api/v1/runs/{id}/verdict", {verb::post}, {}, answer_form::json, to(&api::post_verdict)});
  r.add({"/api/v1/runs/{id}/paired-verdict", {verb::post}, {}, answer_form::json, to(&api::post_paired_verdict)});
  r.add({"/api/v1/projects/{project}/token", {verb::get}, {}, answer_form::json, to(&api::get_token_check)});
  r.add({"/api/v1/baselines", {verb::post}, {}, answer_form::json, to(&api::post_baseline)});
  r.add({"/api/v1/projects/{project}/runs",
         {verb::get},
         {"branch", "env_id", "limit"},
         answer_form::json,
         to(&api::list_runs)});
  r.add({"/api/v1/projects/{project}/groups/{group}", {verb::get}, {}, answer_form::json, to(&api::get_group)});
  r.add({"/api/v1/projects/{project}/groups/{group}/verdict",
         {verb::post},
         {},
         answer_form::json,
         to(&api::post_group_verdict)});
  r.add({"/api/v1/projects/{project}/history",
         {verb::get},
         {"branch", "env_id", "kernel", "limit"},
         answer_form::json,
         to(&api::history)});
  r.add({"/api/v1/projects/{project}/changes",
         {verb::get},
         {"branch", "env_id", "kernel", "limit"},
         answer_form::json,
         to(&api::changes)});
}

response api::healthz(const route_call& c) {
  return json_answer(200, bj::object{{"status", "ok"}, {"schema_version", db_.schema_version()}}, c.req);
}

response api::metrics_text(const route_call& c) {
  response res{bhttp::status::ok, c.req.version()};
  res.set(bhttp::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
  res.keep_alive(c.req.keep_alive());
  // What it may see: public projects, and the project of the token it sent (none without one).
  std::optional<std::int64_t> own;
  if (auto token = request_token(c.req); !token.empty()) {
    if (auto who = db_.authenticate(token)) own = who->project_id;
  }
  const std::vector<std::int64_t> public_ids = db_.public_project_ids();
  metrics::view v;
  v.may_see = [&](std::int64_t project) {
    return project == own || std::find(public_ids.begin(), public_ids.end(), project) != public_ids.end();
  };
  v.runs_in_store = db_.count_visible_runs(own);
  res.body() = metrics_.render(v);
  res.prepare_payload();
  return res;
}

response api::post_run(const route_call& c) {
  const request& req = c.req;
  auto who = authenticate(req);
  auto body = parse_body(req, options_.max_json_depth, "a run document (rnx.run/v1)");
  auto run = run_from_json(body, "run document");
  authorize_project(who, run.project);
  store::check_env_id(run);
  // A push run (no pull request) on a named branch becomes that branch's newest baseline (store::upload_run):
  // moving a baseline is an accept, so it needs more than the upload scope.
  require_scope(who, run.pull_request || run.branch.empty() ? store::token_action::upload_pull_request_run
                                                            : store::token_action::move_baseline);
  // A shard of a sharded run is held in its run group until the group is formed (api_groups.cpp).
  if (run.shard) return shard_upload_answer(db_, metrics_, who.project_id, run, options_.shard_timeout, req);
  auto upload = store::upload_run(db_, who.project_id, run);
  metrics_.count_run_stored(who.project_id);
  if (upload.baseline && upload.previous_baseline) {
    if (notify_) {
      notify_->enqueue(upload);
    } else {
      try {
        if (auto judged = store::regression_check(db_, upload, options_.default_policy)) {
          metrics_.count_verdict(who.project_id, judged->verdict.verdict, to_string(store::verdict_kind::regression));
        }
      } catch (const std::exception& e) {
        // The run is committed; a failed side check must not turn the upload into an error, but it is not silent.
        std::cerr << "rnx-server: regression check for run " << upload.run.id << " failed: " << e.what() << "\n";
        metrics_.count_regression_check_lost(metrics::lost_check::failed);
      }
    }
  }
  std::string id = std::to_string(upload.run.id);
  bj::object out = summary_json(upload.run).as_object();
  out["links"] = bj::object{{"self", "/api/v1/runs/" + id}, {"verdict", "/api/v1/runs/" + id + "/verdict"}};
  auto res = json_answer(201, out, req);
  res.set(bhttp::field::location, "/api/v1/runs/" + id);
  return res;
}

response api::get_run(const route_call& c) {
  const request& req = c.req;
  const std::int64_t run_id = parse_run_id(c.param("id"), "path");
  auto who = authenticate(req);
  auto stored = db_.find_run(run_id);
  if (!stored || stored->summary.project != who.project) throw run_not_found(who, run_id);
  bj::object out{{"run", summary_json(stored->summary)}, {"document", to_json(stored->document)}};
  return json_answer(200, out, req);
}

response api::post_verdict(const route_call& c) {
  const request& req = c.req;
  const std::int64_t run_id = parse_run_id(c.param("id"), "path");
  auto who = authenticate(req);
  require_scope(who, store::token_action::ask_verdict);
  auto policy = policy_from(req, options_.default_policy, options_.max_json_depth);
  run_of_token_project(who, run_id);
  auto judged = store::judge_stored_run(db_, run_id, policy);
  metrics_.count_verdict(who.project_id, judged.verdict.verdict, to_string(store::verdict_kind::request));
  return json_answer(200, to_json(judged.verdict), req);
}

// The gate's paired verdict for head run `run_id`: both runs of the token's project, re-derived by the store.
response api::post_paired_verdict(const route_call& c) {
  const request& req = c.req;
  const std::int64_t run_id = parse_run_id(c.param("id"), "path");
  auto who = authenticate(req);
  require_scope(who, store::token_action::ask_verdict);
  run_of_token_project(who, run_id);
  auto body = parse_body(req, options_.max_json_depth, "{\"base_run_id\", \"policy\", \"verdict\"}");
  json::reader r(body, "request body");
  r.only_keys({"base_run_id", "policy", "verdict"});
  auto base_field = r.at("base_run_id");
  const std::int64_t base_run_id = body_run_id(base_field, "request body: $.base_run_id");
  run_of_token_project(who, base_run_id);
  gate_policy policy = options_.default_policy;
  if (auto p = r.maybe("policy")) policy = read_policy(*p, policy);
  const verdict_document decided = verdict_from_json(r.at("verdict").value(), "request body: $.verdict");
  auto judged = store::record_paired_verdict(db_, who.project_id, run_id, base_run_id, policy, decided);
  metrics_.count_verdict(who.project_id, judged.verdict.verdict, to_string(store::verdict_kind::paired));
  return json_answer(200, to_json(judged.verdict), req);
}

// Who the bearer token is and what it may do: the gate asks before it measures.
response api::get_token_check(const route_call& c) {
  const request& req = c.req;
  const std::string& project = c.param("project");
  store::database::validate_project_name(project);
  auto who = authenticate(req);
  authorize_project(who, project);
  bj::array allows;
  for (auto action : store::all_token_actions) {
    if (store::scope_allows(who.scope, action)) allows.push_back(bj::string(store::identifier(action)));
  }
  return json_answer(200,
                     bj::object{{"project", who.project},
                                {"label", who.label},
                                {"scope", store::to_string(who.scope)},
                                {"allows", std::move(allows)}},
                     req);
}

response api::get_group(const route_call& c) {
  auto who = authenticate(c.req);
  auto project = authorize_project(who, c.param("project"));
  return group_answer(db_, project.id, c.param("group"), options_.shard_timeout, c.req);
}

response api::post_group_verdict(const route_call& c) {
  auto who = authenticate(c.req);
  require_scope(who, store::token_action::ask_verdict);
  auto policy = policy_from(c.req, options_.default_policy, options_.max_json_depth);
  auto project = authorize_project(who, c.param("project"));
  return group_verdict_answer(db_, metrics_, project.id, c.param("group"), policy, options_.shard_timeout, c.req);
}

response api::post_baseline(const route_call& c) {
  const request& req = c.req;
  auto who = authenticate(req);
  require_scope(who, store::token_action::accept_run);
  auto body = parse_body(req, options_.max_json_depth, "{\"run_id\", \"accepted_by\", \"reason\"}");
  json::reader r(body, "request body");
  r.only_keys({"run_id", "accepted_by", "reason"});
  auto id_field = r.at("run_id");
  std::int64_t run_id = 0;
  if (id_field.value().is_string()) {
    run_id = body_run_id(id_field, "request body: $.run_id");
  } else {
    run_id = id_field.integer();
    if (run_id < 1) id_field.fail("a run id (a positive integer or its decimal string)");
  }
  auto by = r.at("accepted_by");
  std::string accepted_by = by.string();
  if (accepted_by.empty() || accepted_by.size() > 200) by.fail("who accepts the run (1-200 characters)");
  auto why = r.at("reason");
  std::string reason = why.string();
  if (reason.empty() || reason.size() > 2000) why.fail("why the slowdown is intended (1-2000 characters)");

  run_of_token_project(who, run_id);
  // Who accepted is the token as well as the name given: the name alone is free text.
  accepted_by += " (token \"" + who.label + "\", " + std::string(store::to_string(who.scope)) + " scope)";
  auto record = store::accept_run(db_, who.project_id, run_id, accepted_by, reason, who.token_id);
  return json_answer(201, baseline_json(record), req);
}

response api::list_runs(const route_call& c) {
  const request& req = c.req;
  const std::string& project = c.param("project");
  store::database::validate_project_name(project);
  auto who = authenticate(req);
  auto p = authorize_project(who, project);
  const store::run_filter filter = listing_filter(c.query);
  bj::array runs;
  for (const auto& s : db_.list_runs(p.id, filter)) runs.push_back(summary_json(s));
  return json_answer(200, bj::object{{"project", project}, {"runs", std::move(runs)}}, req);
}

// The change points of the project's branch histories (docs/drift.md), newest step first.
response api::changes(const route_call& c) {
  const std::string& project = c.param("project");
  store::database::validate_project_name(project);
  auto who = authenticate(c.req);
  auto p = authorize_project(who, project);
  const store::run_filter listing = listing_filter(c.query);
  store::change_filter filter;
  filter.branch = listing.branch;
  filter.env_id = listing.env_id;
  filter.kernel = query_value(c.query, "kernel");
  filter.limit = listing.limit;
  bj::array list;
  for (const auto& change : db_.change_points(p.id, filter)) list.push_back(store::change_json(change));
  return json_answer(200, bj::object{{"project", project}, {"changes", std::move(list)}}, c.req);
}

response api::history(const route_call& c) {
  const request& req = c.req;
  const std::string& project = c.param("project");
  store::database::validate_project_name(project);
  auto who = authenticate(req);
  auto p = authorize_project(who, project);
  store::run_filter filter = listing_filter(c.query);
  filter.kernel = query_value(c.query, "kernel");
  bj::array series;
  for (const auto& s : db_.history(p.id, filter)) {
    bj::array points;
    for (const auto& pt : s.points) {
      bj::object point{{"run_id", std::to_string(pt.run_id)},
                       {"commit", pt.commit},
                       {"branch", pt.branch},
                       {"created_at", pt.created_at},
                       {"status", pt.status},
                       {"median_ms", pt.median_ms ? bj::value(*pt.median_ms) : bj::value(nullptr)},
                       {"n", pt.n}};
      // The verdict's statistic, as every page shows it (stat_ms with its interval and unstable flag).
      pages::write_number(point, pt.number);
      points.push_back(std::move(point));
    }
    series.push_back(bj::object{{"kernel", s.key.kernel},
                                {"runtime", s.key.runtime},
                                {"dtype", s.key.dtype},
                                {"batch", s.key.batch},
                                {"env_id", s.env_id},
                                {"points", std::move(points)}});
  }
  return json_answer(200, bj::object{{"project", project}, {"series", std::move(series)}}, req);
}

}  // namespace rnx::service
