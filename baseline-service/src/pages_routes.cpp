// Routing of the pages: /projects/{p}, /projects/{p}/configs/{config}, /runs/{id}, /compare, /login, /assets/{name},
// and the JSON behind each chart under /api/v1. Public projects are readable without a token; otherwise the bearer
// token (header, or the cookie /login sets) must belong to the project.
#include "pages_routes.hpp"

#include "router.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/text.hpp"
#include "rnx/service/pages.hpp"

#include <boost/beast/http/field.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/parse_query.hpp>

#include <cctype>
#include <charconv>
#include <map>
#include <vector>

namespace rnx::pages {

std::optional<std::string> same_origin_path(std::string_view next) {
  for (unsigned char ch : next) {
    if (ch <= 0x20 || ch >= 0x7f || ch == '\\') return std::nullopt;
  }
  if (next.size() < 2 || next[0] != '/' || next[1] == '/') return std::nullopt;
  auto parsed = boost::urls::parse_relative_ref(next);
  if (!parsed || parsed->has_scheme() || parsed->has_authority() || !parsed->is_path_absolute()) return std::nullopt;
  return std::string(next);
}

}  // namespace rnx::pages

namespace rnx::service {

namespace bhttp = boost::beast::http;
namespace bj = boost::json;

namespace {

std::int64_t parse_id(std::string_view text) {
  auto id = pages::parse_positive_id(text);
  if (!id) {
    throw error(errc::bad_input, "run id \"" + message_shown(text, 40) + "\" is not valid: use a run's numeric id");
  }
  return *id;
}

// A query value, with an empty one (an untouched form field) read as absent.
std::optional<std::string> value_of(const std::map<std::string, std::string>& query, const std::string& key) {
  auto it = query.find(key);
  if (it == query.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

pages::history_query history_query_of(const std::map<std::string, std::string>& query) {
  pages::history_query q;
  q.env_id = value_of(query, "env_id");
  if (q.env_id && q.env_id->size() > 200) {
    throw error(errc::bad_input, "query parameter env_id is longer than 200 characters; use an env_id of this project");
  }
  if (auto v = value_of(query, "from")) q.from = pages::parse_time(*v, "from");
  if (auto v = value_of(query, "to")) q.to = pages::parse_time(*v, "to");
  if (auto v = value_of(query, "points")) {
    int n = 0;
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc() || end != v->data() + v->size()) {
      throw error(errc::bad_input, "query parameter points=\"" + v->substr(0, 20) + "\" is not an integer: use 10 to " +
                                       std::to_string(pages::max_points));
    }
    q.points = n;
  }
  pages::validate(q);
  return q;
}

bool log_scale_of(const std::map<std::string, std::string>& query) {
  auto v = value_of(query, "scale");
  if (!v || *v == "linear") return false;
  if (*v == "log") return true;
  throw error(errc::bad_input, "query parameter scale=\"" + v->substr(0, 20) + "\" must be linear or log");
}

}  // namespace

void page_routes::add_routes(router& r) {
  using bhttp::verb;
  constexpr auto html = answer_form::html;
  constexpr auto json = answer_form::json;
  const std::vector<std::string> history_keys{"env_id", "from", "to", "points"};
  r.add({"/", {verb::get}, {}, html, [this](const route_call& c) { return landing(c); }});
  r.add({"/assets/{name}", {verb::get}, {}, html, [this](const route_call& c) { return asset(c); }});
  r.add({"/login", {verb::get, verb::post}, {"next"}, html, [this](const route_call& c) { return login(c); }});
  r.add({"/projects/{project}", {verb::get}, {}, html, [this](const route_call& c) { return overview(c, html); }});
  r.add({"/api/v1/projects/{project}/overview", {verb::get}, {}, json, [this](const route_call& c) {
           return overview(c, json);
         }});
  auto page_history_keys = history_keys;
  page_history_keys.push_back("scale");
  r.add({"/projects/{project}/configs/{config}", {verb::get}, page_history_keys, html, [this](const route_call& c) {
           return with_ways_back(c, [&] { return config_history(c, html); });
         }});
  r.add({"/api/v1/projects/{project}/configs/{config}/history",
         {verb::get},
         history_keys,
         json,
         [this](const route_call& c) { return config_history(c, json); }});
  r.add({"/runs/{id}", {verb::get}, {}, html, [this](const route_call& c) { return run_evidence(c, html); }});
  r.add({"/api/v1/runs/{id}/evidence", {verb::get}, {}, json, [this](const route_call& c) {
           return run_evidence(c, json);
         }});
  r.add({"/compare", {verb::get}, {"runs", "prices"}, html, [this](const route_call& c) {
           return with_ways_back(c, [&] { return compare(c, html); });
         }});
  r.add({"/api/v1/compare", {verb::get}, {"runs", "prices"}, json, [this](const route_call& c) {
           return compare(c, json);
         }});
}

// An unknown project and one this request may not read answer alike (404, the same words), so that names cannot be
// probed for existence; the name in the answer is the one the address already holds.
store::project_info page_routes::readable_project(const route_call& c, const std::string& name) {
  store::database::validate_project_name(name);
  auto project = db_.find_project(name);
  if (!project || !may_read(c, *project)) {
    throw error(errc::not_found, "project \"" + name +
                                     "\" does not exist on this server, or it is private and this request carries "
                                     "no token of it: sign in with one of its tokens (or send \"Authorization: "
                                     "Bearer <token>\"); `rnx-server admin project visibility " +
                                     name + " public` makes a project readable by all" + expired_note(c));
  }
  return *project;
}

// ". The token this request carries expired ..." when it carries an expired one, else "". It depends on the token
// alone, never on what was asked for, so a 404 still says nothing about whether a private project or run exists;
// the project it names is the token's own, and only its holder sent it.
std::string page_routes::expired_note(const route_call& c) {
  std::string token = request_token(c.req);
  if (token.empty()) return "";
  auto expired = db_.find_expired(token);
  return expired ? ". The token this request carries " + expired_token_text(*expired) : "";
}

// A public project, or a private one asked with a valid token of its own. A missing, invalid or revoked token is
// read as none: it is never told apart by the answer, which would say that the project exists.
bool page_routes::may_read(const route_call& c, const store::project_info& project) {
  if (project.is_public) return true;
  std::string token = request_token(c.req);
  if (token.empty()) return false;
  auto who = db_.authenticate(token);
  return who && who->project == project.name;
}

// The projects this caller may read: the public ones, and the project of the token it sent or signed in with.
response page_routes::landing(const route_call& c) {
  std::optional<std::string> signed_in;
  if (auto token = request_token(c.req); !token.empty()) {
    if (auto who = db_.authenticate(token)) signed_in = who->project;
  }
  return html_answer(200, pages::render_page(pages::landing_page(pages::landing_data(db_, signed_in))), c.req);
}

response page_routes::with_ways_back(const route_call& c, const std::function<response()>& page) {
  try {
    return page();
  } catch (const error& e) {
    auto p = pages::error_page(e.http_status(), e.what(), pages::ways_back(c.parts, c.query));
    return html_answer(e.http_status(), pages::render_page(p), c.req);
  }
}

response page_routes::asset(const route_call& c) {
  auto a = pages::find_asset(c.param("name"));
  if (!a) throw error(errc::not_found, "no asset named \"" + c.param("name").substr(0, 60) + "\"");
  response res{bhttp::status::ok, c.req.version()};
  res.set(bhttp::field::content_type, a->content_type);
  // Assets change only with the binary; a day of caching keeps page loads to the HTML and its data.
  res.set(bhttp::field::cache_control, "public, max-age=86400");
  res.set("X-Content-Type-Options", "nosniff");
  res.keep_alive(c.req.keep_alive());
  res.body() = std::string(a->body);
  res.prepare_payload();
  return res;
}

response page_routes::overview(const route_call& c, answer_form form) {
  const bool json = form == answer_form::json;
  auto project = readable_project(c, c.param("project"));
  auto data = pages::overview_data(db_, project);
  if (json) return json_answer(200, pages::to_json(data), c.req);
  return html_answer(200, pages::render_page(pages::overview_page(data, pages::link_style{})), c.req);
}

response page_routes::config_history(const route_call& c, answer_form form) {
  const bool json = form == answer_form::json;
  auto query = history_query_of(c.query);
  bool log_scale = log_scale_of(c.query);
  auto key = pages::parse_config(c.param("config"));
  auto project = readable_project(c, c.param("project"));
  auto data = pages::history_data(db_, project, key, query);
  if (json) return json_answer(200, pages::to_json(data), c.req);
  return html_answer(200, pages::render_page(pages::history_page(data, pages::link_style{}, log_scale)), c.req);
}

// A run may be shown to whoever may read its project. An unknown run and one of a project this request may not
// read answer alike (404, the same words, no project name): run ids must not enumerate private projects.
void page_routes::check_run_readable(const route_call& c, std::int64_t id) {
  auto summary = db_.find_run_summary(id);
  auto project = summary ? db_.find_project(summary->project) : std::nullopt;
  if (!project || !may_read(c, *project)) {
    throw error(errc::not_found, "run " + std::to_string(id) +
                                     " does not exist, or its project is private and this request carries no token "
                                     "of it: sign in with a token of the run's project" +
                                     expired_note(c));
  }
}

response page_routes::run_evidence(const route_call& c, answer_form form) {
  const bool json = form == answer_form::json;
  auto id = parse_id(c.param("id"));
  check_run_readable(c, id);
  auto data = pages::run_data(db_, id);
  // Every run here came by upload: its clocks and peaks are the document's claims, not the server's measurement.
  data.figures = pages::figure_source::reported;
  if (json) return json_answer(200, pages::to_json(data), c.req);
  return html_answer(200, pages::render_page(pages::run_page(data, pages::link_style{})), c.req);
}

response page_routes::compare(const route_call& c, answer_form form) {
  auto runs_text = value_of(c.query, "runs");
  if (!runs_text) {
    throw error(errc::bad_input, "query parameter runs is missing: write runs=ID,ID,... (2 to " +
                                     std::to_string(pages::max_compare_runs) + " runs of different environments)");
  }
  auto ids = pages::parse_run_list(*runs_text);
  auto prices = pages::parse_prices(value_of(c.query, "prices").value_or(""));
  // Every run must be readable before anything about any of them is shown.
  for (auto id : ids) check_run_readable(c, id);
  auto data = pages::compare_data(db_, ids, prices);
  if (form == answer_form::json) return json_answer(200, pages::to_json(data), c.req);
  return html_answer(200, pages::render_page(pages::compare_page(data, pages::link_style{})), c.req);
}

response page_routes::login(const route_call& c) {
  const request& req = c.req;
  std::string next = value_of(c.query, "next").value_or("");
  if (req.method() == bhttp::verb::get) {
    auto p = pages::error_page(401, "Sign in with a token of the project you want to read.");
    p.title = "Sign in";
    return html_answer(200, pages::render_page(p), req);
  }
  std::string token;
  auto form = boost::urls::parse_query(std::string_view(req.body().data(), req.body().size()));
  if (!form) throw error(errc::bad_input, "the sign-in form was not sent as application/x-www-form-urlencoded");
  // Form values are percent-encoded, "+" for a space: decoded before they are judged.
  for (auto param : *form) {
    if (param.key == "token") token = param.value.decode(boost::urls::encoding_opts(true));
    if (param.key == "next") next = param.value.decode(boost::urls::encoding_opts(true));
  }
  // Tokens are "rnx_" and hex: anything else cannot be one, and must not reach a Set-Cookie header.
  bool plausible = token.size() > 4 && token.size() < 200;
  for (char ch : token) plausible = plausible && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
  auto who = plausible ? db_.authenticate(token) : std::nullopt;
  if (!who) {
    auto expired = plausible ? db_.find_expired(token) : std::nullopt;
    if (expired) throw error(errc::unauthorized, "that token " + expired_token_text(*expired));
    throw error(errc::unauthorized, "that token is not valid (unknown, revoked or mistyped)");
  }
  // Only a path on this server; anything else goes to the project's overview.
  auto target = pages::same_origin_path(next).value_or("/projects/" + who->project);
  response res{bhttp::status::see_other, req.version()};
  res.set(bhttp::field::location, target);
  res.set(bhttp::field::set_cookie, "rnx_token=" + token + "; Path=/; HttpOnly; SameSite=Strict");
  res.set(bhttp::field::cache_control, "no-store");
  res.keep_alive(req.keep_alive());
  res.prepare_payload();
  return res;
}

}  // namespace rnx::service
