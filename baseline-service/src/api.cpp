// Routing and handlers of the rnx-server API; every failure becomes {"error": {"code", "message"}} with its status.
#include "rnx/service/api.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/service/notifier.hpp"
#include "rnx/service/verdicts.hpp"

#include "pages_routes.hpp"

#include <boost/beast/http/field.hpp>
#include <boost/url/parse.hpp>

#include <chrono>
#include <iostream>
#include <map>

namespace rnx::service {

namespace bj = boost::json;
namespace bhttp = boost::beast::http;

struct api::context {
  std::string route = "unmatched";
  std::map<std::string, std::string> query;
};

namespace {

constexpr std::string_view docs_hint = "see docs/api/openapi.yaml";

response json_response(int status, const bj::value& body, unsigned version, bool keep_alive) {
  response res{static_cast<bhttp::status>(status), version};
  res.set(bhttp::field::content_type, "application/json");
  res.set(bhttp::field::cache_control, "no-store");
  res.keep_alive(keep_alive);
  res.body() = json::serialize(body);
  res.body() += '\n';
  res.prepare_payload();
  return res;
}

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
  return bj::object{{"id", std::to_string(b.id)},     {"run_id", std::to_string(b.run_id)},
                    {"branch", b.branch},             {"env_id", b.env_id},
                    {"source", b.source},             {"accepted_by", b.accepted_by},
                    {"reason", b.reason},             {"created_at", b.created_at}};
}

// Run ids are the positive integers the store hands out; anything else cannot name a run.
std::int64_t parse_run_id(std::string_view text, std::string_view where) {
  bool ok = !text.empty() && text.size() <= 18;
  std::int64_t id = 0;
  for (char c : text) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) id = id * 10 + (c - '0');
  }
  if (!ok || id < 1) {
    std::string shown(text.substr(0, 40));
    for (auto& c : shown) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    }
    throw error(errc::bad_input, std::string(where) + ": run id \"" + shown +
                                     "\" is not valid; use the numeric id that POST /api/v1/runs returned");
  }
  return id;
}

bj::value parse_body(const request& req, std::size_t max_depth, std::string_view what) {
  if (req.body().empty()) {
    throw error(errc::bad_input, "request body is empty: send " + std::string(what) +
                                     " as JSON with Content-Type: application/json");
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
    std::string s = v->string();
    if (s == "warn") {
      policy.on_abstain = overall::warn;
    } else if (s == "pass") {
      policy.on_abstain = overall::pass;
    } else if (s == "block") {
      policy.on_abstain = overall::block;
    } else {
      v->fail("one of \"warn\", \"pass\", \"block\"");
    }
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
    throw error(errc::bad_input, "query parameter limit=\"" + text.substr(0, 20) +
                                     "\" is not valid: use an integer from 1 to 1000");
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
  auto res = json_response(status, body, version, keep_alive);
  if (status == 401) res.set(bhttp::field::www_authenticate, "Bearer realm=\"rnx\"");
  return res;
}

api::api(store::database& db, metrics& m, notifier* notify, api_options options)
    : db_(db), metrics_(m), notify_(notify), options_(std::move(options)), pages_(std::make_unique<page_routes>(db)) {}

api::~api() = default;

response api::handle_request(const request& req) {
  auto start = std::chrono::steady_clock::now();
  context ctx;
  response res;
  try {
    res = route(req, ctx);
  } catch (const error& e) {
    res = error_response(e.http_status(), errc_name(e.code()), e.what(), req.version(), req.keep_alive());
  } catch (const std::exception& e) {
    res = error_response(500, "internal", std::string("internal error (please report it): ") + e.what(),
                         req.version(), req.keep_alive());
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics_.observe_request(ctx.route, std::string(req.method_string()), res.result_int(), seconds);
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
    throw error(errc::unauthorized, "the bearer token is not valid (unknown, revoked or mistyped); create one with "
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
    hint = "; a push run (no pull_request) replaces branch baselines, which is an accept. Upload tokens can upload "
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

response api::route(const request& req, context& ctx) {
  if (auto page = pages_->handle(req, ctx.route)) return std::move(*page);
  auto target = boost::urls::parse_origin_form(std::string_view(req.target().data(), req.target().size()));
  if (!target) {
    throw error(errc::bad_input, "request target is not a valid path (" + target.error().message() +
                                     "); percent-encode special characters");
  }
  std::vector<std::string> parts;
  for (auto segment : target->segments()) parts.push_back(segment);
  for (auto param : target->params()) {
    if (!ctx.query.emplace(param.key, param.value).second) {
      throw error(errc::bad_input, "query parameter \"" + param.key + "\" is given twice; give it once");
    }
  }
  auto method = req.method();
  auto only = [&](bhttp::verb allowed, std::initializer_list<std::string_view> query_keys) {
    if (method != allowed) {
      auto res = error_response(405, "method_not_allowed",
                                std::string(req.method_string()) + " is not supported on " + ctx.route + "; use " +
                                    std::string(bhttp::to_string(allowed)),
                                req.version(), req.keep_alive());
      res.set(bhttp::field::allow, bhttp::to_string(allowed));
      return std::optional<response>(std::move(res));
    }
    for (const auto& [key, value] : ctx.query) {
      bool known = false;
      for (auto k : query_keys) known = known || k == key;
      if (!known) {
        throw error(errc::bad_input, "unknown query parameter \"" + key + "\" on " + ctx.route + "; " +
                                         std::string(docs_hint));
      }
    }
    return std::optional<response>();
  };
  auto is = [&](std::initializer_list<std::string_view> pattern) { return path_matches(parts, pattern); };

  if (is({"healthz"})) {
    ctx.route = "/healthz";
    if (auto r = only(bhttp::verb::get, {})) return *r;
    return json_response(200, bj::object{{"status", "ok"}, {"schema_version", db_.schema_version()}}, req.version(),
                         req.keep_alive());
  }
  if (is({"metrics"})) {
    ctx.route = "/metrics";
    if (auto r = only(bhttp::verb::get, {})) return *r;
    response res{bhttp::status::ok, req.version()};
    res.set(bhttp::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    res.keep_alive(req.keep_alive());
    res.body() = metrics_.render(db_.count_runs());
    res.prepare_payload();
    return res;
  }
  if (is({"api", "v1", "runs"})) {
    ctx.route = "/api/v1/runs";
    if (auto r = only(bhttp::verb::post, {})) return *r;
    return post_run(req, ctx);
  }
  if (is({"api", "v1", "runs", "*"})) {
    ctx.route = "/api/v1/runs/{id}";
    if (auto r = only(bhttp::verb::get, {})) return *r;
    return get_run(req, ctx, parse_run_id(parts[3], "path"));
  }
  if (is({"api", "v1", "runs", "*", "verdict"})) {
    ctx.route = "/api/v1/runs/{id}/verdict";
    if (auto r = only(bhttp::verb::post, {})) return *r;
    return post_verdict(req, ctx, parse_run_id(parts[3], "path"));
  }
  if (is({"api", "v1", "runs", "*", "paired-verdict"})) {
    ctx.route = "/api/v1/runs/{id}/paired-verdict";
    if (auto r = only(bhttp::verb::post, {})) return *r;
    return post_paired_verdict(req, ctx, parse_run_id(parts[3], "path"));
  }
  if (is({"api", "v1", "projects", "*", "token"})) {
    ctx.route = "/api/v1/projects/{project}/token";
    if (auto r = only(bhttp::verb::get, {})) return *r;
    return get_token_check(req, ctx, parts[3]);
  }
  if (is({"api", "v1", "baselines"})) {
    ctx.route = "/api/v1/baselines";
    if (auto r = only(bhttp::verb::post, {})) return *r;
    return post_baseline(req, ctx);
  }
  if (is({"api", "v1", "projects", "*", "runs"})) {
    ctx.route = "/api/v1/projects/{project}/runs";
    if (auto r = only(bhttp::verb::get, {"branch", "env_id", "limit"})) return *r;
    return list_runs(req, ctx, parts[3]);
  }
  if (is({"api", "v1", "projects", "*", "history"})) {
    ctx.route = "/api/v1/projects/{project}/history";
    if (auto r = only(bhttp::verb::get, {"branch", "env_id", "kernel", "limit"})) return *r;
    return history(req, ctx, parts[3]);
  }
  std::string path(target->encoded_path().substr(0, 200));
  throw error(errc::not_found, "no route for " + std::string(req.method_string()) + " " + path + "; " +
                                   std::string(docs_hint));
}

response api::post_run(const request& req, context&) {
  auto who = authenticate(req);
  auto body = parse_body(req, options_.max_json_depth, "a run document (rnx.run/v1)");
  auto run = run_from_json(body, "run document");
  authorize_project(who, run.project);
  store::check_env_id(run);
  // A push run (no pull request) on a named branch becomes that branch's newest baseline (store::upload_run):
  // moving a baseline is an accept, so it needs more than the upload scope.
  require_scope(who, run.pull_request || run.branch.empty() ? store::token_action::upload_pull_request_run
                                                             : store::token_action::move_baseline);
  auto upload = store::upload_run(db_, who.project_id, run);
  metrics_.count_run_stored();
  if (upload.baseline && upload.previous_baseline) {
    if (notify_) {
      notify_->enqueue(upload);
    } else {
      try {
        if (auto judged = store::regression_check(db_, upload, options_.default_policy)) {
          metrics_.count_verdict(judged->verdict.verdict, "regression");
        }
      } catch (const std::exception&) {
        // The run is committed; a failed side check must not turn the upload into an error.
      }
    }
  }
  std::string id = std::to_string(upload.run.id);
  bj::object out = summary_json(upload.run).as_object();
  out["links"] = bj::object{{"self", "/api/v1/runs/" + id}, {"verdict", "/api/v1/runs/" + id + "/verdict"}};
  auto res = json_response(201, out, req.version(), req.keep_alive());
  res.set(bhttp::field::location, "/api/v1/runs/" + id);
  return res;
}

response api::get_run(const request& req, context&, std::int64_t run_id) {
  auto who = authenticate(req);
  auto stored = db_.find_run(run_id);
  if (!stored) throw error(errc::not_found, "run " + std::to_string(run_id) + " does not exist");
  authorize_project(who, stored->summary.project);
  bj::object out{{"run", summary_json(stored->summary)}, {"document", to_json(stored->document)}};
  return json_response(200, out, req.version(), req.keep_alive());
}

response api::post_verdict(const request& req, context&, std::int64_t run_id) {
  auto who = authenticate(req);
  require_scope(who, store::token_action::ask_verdict);
  auto policy = policy_from(req, options_.default_policy, options_.max_json_depth);
  auto stored = db_.find_run_summary(run_id);
  if (!stored) throw error(errc::not_found, "run " + std::to_string(run_id) + " does not exist");
  authorize_project(who, stored->project);
  auto judged = store::judge_stored_run(db_, run_id, policy);
  metrics_.count_verdict(judged.verdict.verdict, "request");
  return json_response(200, to_json(judged.verdict), req.version(), req.keep_alive());
}

// The gate's paired verdict for head run `run_id`: both runs of the token's project, re-derived by the store.
response api::post_paired_verdict(const request& req, context&, std::int64_t run_id) {
  auto who = authenticate(req);
  require_scope(who, store::token_action::ask_verdict);
  auto body = parse_body(req, options_.max_json_depth, "{\"base_run_id\", \"policy\", \"verdict\"}");
  json::reader r(body, "request body");
  r.only_keys({"base_run_id", "policy", "verdict"});
  auto base_field = r.at("base_run_id");
  std::int64_t base_run_id = 0;
  try {
    base_run_id = parse_run_id(base_field.string(), "request body: $.base_run_id");
  } catch (const error& e) {
    throw error(errc::invalid, e.what());
  }
  gate_policy policy = options_.default_policy;
  if (auto p = r.maybe("policy")) policy = read_policy(*p, policy);
  const verdict_document decided = verdict_from_json(r.at("verdict").value(), "request body: $.verdict");
  auto head = db_.find_run_summary(run_id);
  if (!head) throw error(errc::not_found, "run " + std::to_string(run_id) + " does not exist");
  authorize_project(who, head->project);
  auto judged = store::record_paired_verdict(db_, who.project_id, run_id, base_run_id, policy, decided);
  metrics_.count_verdict(judged.verdict.verdict, "paired");
  return json_response(200, to_json(judged.verdict), req.version(), req.keep_alive());
}

// Who the bearer token is and what it may do: the gate asks before it measures.
response api::get_token_check(const request& req, context&, const std::string& project) {
  store::database::validate_project_name(project);
  auto who = authenticate(req);
  authorize_project(who, project);
  bj::array allows;
  for (auto action : store::all_token_actions) {
    if (store::scope_allows(who.scope, action)) allows.push_back(bj::string(store::identifier(action)));
  }
  return json_response(200,
                       bj::object{{"project", who.project},
                                  {"label", who.label},
                                  {"scope", store::to_string(who.scope)},
                                  {"allows", std::move(allows)}},
                       req.version(), req.keep_alive());
}

response api::post_baseline(const request& req, context&) {
  auto who = authenticate(req);
  require_scope(who, store::token_action::accept_run);
  auto body = parse_body(req, options_.max_json_depth, "{\"run_id\", \"accepted_by\", \"reason\"}");
  json::reader r(body, "request body");
  r.only_keys({"run_id", "accepted_by", "reason"});
  auto id_field = r.at("run_id");
  std::int64_t run_id = 0;
  if (id_field.value().is_string()) {
    try {
      run_id = parse_run_id(id_field.string(), "request body: $.run_id");
    } catch (const error& e) {
      throw error(errc::invalid, e.what());
    }
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

  auto stored = db_.find_run_summary(run_id);
  if (!stored) throw error(errc::not_found, "run " + std::to_string(run_id) + " does not exist");
  authorize_project(who, stored->project);
  // Who accepted is the token as well as the name given: the name alone is free text.
  accepted_by += " (token \"" + who.label + "\", " + std::string(store::to_string(who.scope)) + " scope)";
  auto record = store::accept_run(db_, who.project_id, run_id, accepted_by, reason, who.token_id);
  return json_response(201, baseline_json(record), req.version(), req.keep_alive());
}

response api::list_runs(const request& req, context& ctx, const std::string& project) {
  store::database::validate_project_name(project);
  auto who = authenticate(req);
  auto p = authorize_project(who, project);
  const store::run_filter filter = listing_filter(ctx.query);
  bj::array runs;
  for (const auto& s : db_.list_runs(p.id, filter)) runs.push_back(summary_json(s));
  return json_response(200, bj::object{{"project", project}, {"runs", std::move(runs)}}, req.version(),
                       req.keep_alive());
}

response api::history(const request& req, context& ctx, const std::string& project) {
  store::database::validate_project_name(project);
  auto who = authenticate(req);
  auto p = authorize_project(who, project);
  store::run_filter filter = listing_filter(ctx.query);
  filter.kernel = query_value(ctx.query, "kernel");
  bj::array series;
  for (const auto& s : db_.history(p.id, filter)) {
    bj::array points;
    for (const auto& pt : s.points) {
      points.push_back(bj::object{{"run_id", std::to_string(pt.run_id)},
                                  {"commit", pt.commit},
                                  {"branch", pt.branch},
                                  {"created_at", pt.created_at},
                                  {"status", pt.status},
                                  {"median_ms", pt.median_ms ? bj::value(*pt.median_ms) : bj::value(nullptr)},
                                  {"n", pt.n}});
    }
    series.push_back(bj::object{{"kernel", s.key.kernel},
                                {"runtime", s.key.runtime},
                                {"dtype", s.key.dtype},
                                {"batch", s.key.batch},
                                {"env_id", s.env_id},
                                {"points", std::move(points)}});
  }
  return json_response(200, bj::object{{"project", project}, {"series", std::move(series)}}, req.version(),
                       req.keep_alive());
}

bool path_matches(const std::vector<std::string>& parts, std::initializer_list<std::string_view> pattern) {
  if (parts.size() != pattern.size()) return false;
  std::size_t i = 0;
  for (auto p : pattern) {
    if (p != "*" && parts[i] != p) return false;
    ++i;
  }
  return true;
}

}  // namespace rnx::service
