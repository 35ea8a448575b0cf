// Routing of the pages: /projects/{p}, /projects/{p}/configs/{config}, /runs/{id}, /compare, /login, /assets/{name},
// and the JSON behind each chart under /api/v1. Public projects are readable without a token; otherwise the bearer
// token (header, or the cookie /login sets) must belong to the project.
#include "pages_routes.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
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

struct page_routes::call {
  const request& req;
  std::vector<std::string> parts;
  std::map<std::string, std::string> query;
  bool json = false;  // an /api/v1 endpoint: errors as JSON
  std::string& route;
};

namespace {

// Same policy everywhere: scripts, styles and data only from this server, no framing, no inline script.
constexpr const char* content_security_policy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

response html_response(int status, std::string body, const request& req) {
  response res{static_cast<bhttp::status>(status), req.version()};
  res.set(bhttp::field::content_type, "text/html; charset=utf-8");
  res.set(bhttp::field::cache_control, "no-store");
  res.set("Content-Security-Policy", content_security_policy);
  res.set("X-Content-Type-Options", "nosniff");
  res.set("Referrer-Policy", "no-referrer");
  res.keep_alive(req.keep_alive());
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

response json_ok(const bj::value& body, const request& req) {
  response res{bhttp::status::ok, req.version()};
  res.set(bhttp::field::content_type, "application/json");
  res.set(bhttp::field::cache_control, "no-store");
  res.keep_alive(req.keep_alive());
  res.body() = json::serialize(body);
  res.body() += '\n';
  res.prepare_payload();
  return res;
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// The paths this class answers, by their raw target: pages, assets, login and the JSON behind the charts.
bool is_page_target(std::string_view target) {
  for (auto prefix : {"/projects/", "/runs/", "/compare", "/assets/", "/login"}) {
    if (starts_with(target, prefix)) return true;
  }
  return false;
}

std::string_view header(const request& req, bhttp::field f) {
  auto it = req.find(f);
  return it == req.end() ? std::string_view() : std::string_view(it->value().data(), it->value().size());
}

// The token of a request: "Authorization: Bearer T", else the rnx_token cookie; "" when neither.
std::string token_of(const request& req) {
  auto auth = header(req, bhttp::field::authorization);
  if (starts_with(auth, "Bearer ")) return std::string(auth.substr(7));
  auto cookies = header(req, bhttp::field::cookie);
  while (!cookies.empty()) {
    auto semi = cookies.find(';');
    auto item = cookies.substr(0, semi);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (starts_with(item, "rnx_token=")) return std::string(item.substr(10));
    if (semi == std::string_view::npos) break;
    cookies.remove_prefix(semi + 1);
  }
  return {};
}

std::int64_t parse_id(std::string_view text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1 || text.size() > 18) {
    std::string shown(text.substr(0, 40));
    for (auto& ch : shown) {
      if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) ch = '?';
    }
    throw error(errc::bad_input, "run id \"" + shown + "\" is not valid: use a run's numeric id");
  }
  return v;
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
      throw error(errc::bad_input, "query parameter points=\"" + v->substr(0, 20) +
                                       "\" is not an integer: use 10 to " + std::to_string(pages::max_points));
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

std::optional<response> page_routes::handle(const request& req, std::string& route) {
  std::string_view raw(req.target().data(), req.target().size());
  const bool page = is_page_target(raw);
  auto target = boost::urls::parse_origin_form(raw);
  if (!target) {
    if (!page) return std::nullopt;  // the API answers its own malformed targets
    route = "page";
    return html_response(400, pages::render_page(pages::error_page(400, "the address is not a valid path (" +
                                                                            target.error().message() +
                                                                            "); percent-encode special characters")),
                         req);
  }
  call c{req, {}, {}, false, route};
  for (auto segment : target->segments()) c.parts.push_back(segment);
  auto is = [&](std::initializer_list<std::string_view> pattern) { return path_matches(c.parts, pattern); };
  c.json = is({"api", "v1", "projects", "*", "overview"}) || is({"api", "v1", "projects", "*", "configs", "*", "history"}) ||
           is({"api", "v1", "runs", "*", "evidence"}) || is({"api", "v1", "compare"});
  if (!page && !c.json) return std::nullopt;
  try {
    for (auto param : target->params()) {
      if (!c.query.emplace(param.key, param.value).second) {
        throw error(errc::bad_input, "query parameter \"" + param.key + "\" is given twice; give it once");
      }
    }
    return dispatch(c);
  } catch (const error& e) {
    if (c.json) return error_response(e.http_status(), errc_name(e.code()), e.what(), req.version(), req.keep_alive());
    return html_response(e.http_status(), pages::render_page(pages::error_page(e.http_status(), e.what())), req);
  }
}

store::project_info page_routes::readable_project(const call& c, const std::string& name) {
  store::database::validate_project_name(name);
  auto project = db_.find_project(name);
  if (!project) throw error(errc::not_found, "project \"" + name + "\" does not exist on this server");
  check_readable(c, *project);
  return *project;
}

void page_routes::check_readable(const call& c, const store::project_info& project) {
  if (project.is_public) return;
  std::string token = token_of(c.req);
  if (token.empty()) {
    throw error(errc::unauthorized, "project \"" + project.name +
                                        "\" is private: sign in with one of its tokens (or send \"Authorization: "
                                        "Bearer <token>\"); `rnx-server admin project public` makes it readable by all");
  }
  auto who = db_.authenticate(token);
  if (!who) throw error(errc::unauthorized, "the token is not valid (unknown, revoked or mistyped); sign in again");
  if (who->project != project.name) {
    throw error(errc::forbidden, "this token belongs to project \"" + who->project + "\", not \"" + project.name + "\"");
  }
}

response page_routes::dispatch(call& c) {
  const request& req = c.req;
  auto& parts = c.parts;
  // A 405 answer for a method the route does not take, else nullopt after checking the query's keys.
  auto only = [&](std::string_view route, std::initializer_list<std::string_view> keys,
                  bool allow_post = false) -> std::optional<response> {
    c.route = std::string(route);
    if (req.method() != bhttp::verb::get && !(allow_post && req.method() == bhttp::verb::post)) {
      std::string message = std::string(req.method_string()) + " is not supported on " + c.route + "; use GET" +
                            (allow_post ? " or POST" : "");
      auto res = c.json ? error_response(405, "method_not_allowed", message, req.version(), req.keep_alive())
                        : html_response(405, pages::render_page(pages::error_page(405, message)), req);
      res.set(bhttp::field::allow, allow_post ? "GET, POST" : "GET");
      return res;
    }
    for (const auto& [key, value] : c.query) {
      bool known = false;
      for (auto k : keys) known = known || k == key;
      if (!known) {
        std::string allowed;
        for (auto k : keys) allowed += (allowed.empty() ? "" : ", ") + std::string(k);
        throw error(errc::bad_input, "unknown query parameter \"" + key.substr(0, 40) + "\" on " + c.route +
                                         (allowed.empty() ? "; it takes none" : "; it takes " + allowed));
      }
    }
    return std::nullopt;
  };
  auto is = [&](std::initializer_list<std::string_view> pattern) { return path_matches(parts, pattern); };
  pages::link_style links;

  if (is({"assets", "*"})) {
    if (auto r = only("/assets/{name}", {})) return *r;
    auto a = pages::find_asset(parts[1]);
    if (!a) throw error(errc::not_found, "no asset named \"" + parts[1].substr(0, 60) + "\"");
    response res{bhttp::status::ok, req.version()};
    res.set(bhttp::field::content_type, a->content_type);
    // Assets change only with the binary; a day of caching keeps page loads to the HTML and its data.
    res.set(bhttp::field::cache_control, "public, max-age=86400");
    res.set("X-Content-Type-Options", "nosniff");
    res.keep_alive(req.keep_alive());
    res.body() = std::string(a->body);
    res.prepare_payload();
    return res;
  }
  if (is({"login"})) {
    if (auto r = only("/login", {"next"}, true)) return *r;
    return login(c);
  }
  if (is({"projects", "*"}) || is({"api", "v1", "projects", "*", "overview"})) {
    if (auto r = only(c.json ? "/api/v1/projects/{project}/overview" : "/projects/{project}", {})) return *r;
    auto project = readable_project(c, parts[c.json ? 3 : 1]);
    auto data = pages::overview_data(db_, project);
    if (c.json) return json_ok(data, req);
    return html_response(200, pages::render_page(pages::overview_page(data, links)), req);
  }
  if (is({"projects", "*", "configs", "*"}) || is({"api", "v1", "projects", "*", "configs", "*", "history"})) {
    if (c.json) {
      if (auto r = only("/api/v1/projects/{project}/configs/{config}/history", {"env_id", "from", "to", "points"})) return *r;
    } else {
      if (auto r = only("/projects/{project}/configs/{config}", {"env_id", "from", "to", "points", "scale"})) return *r;
    }
    auto query = history_query_of(c.query);
    bool log_scale = log_scale_of(c.query);
    auto key = pages::parse_config(parts[c.json ? 5 : 3]);
    auto project = readable_project(c, parts[c.json ? 3 : 1]);
    auto data = pages::history_data(db_, project, key, query);
    if (c.json) return json_ok(data, req);
    return html_response(200, pages::render_page(pages::history_page(data, links, log_scale)), req);
  }
  if (is({"runs", "*"}) || is({"api", "v1", "runs", "*", "evidence"})) {
    if (auto r = only(c.json ? "/api/v1/runs/{id}/evidence" : "/runs/{id}", {})) return *r;
    auto id = parse_id(parts[c.json ? 3 : 1]);
    auto summary = db_.find_run_summary(id);
    if (!summary) throw error(errc::not_found, "run " + std::to_string(id) + " does not exist");
    auto project = db_.find_project(summary->project);
    if (!project) throw error(errc::not_found, "run " + std::to_string(id) + " has no project");
    check_readable(c, *project);
    auto data = pages::run_data(db_, id);
    if (c.json) return json_ok(data, req);
    return html_response(200, pages::render_page(pages::run_page(data, links)), req);
  }
  if (is({"compare"}) || is({"api", "v1", "compare"})) {
    if (auto r = only(c.json ? "/api/v1/compare" : "/compare", {"runs", "prices"})) return *r;
    auto runs_text = value_of(c.query, "runs");
    if (!runs_text) {
      throw error(errc::bad_input, "query parameter runs is missing: write runs=ID,ID,... (2 to " +
                                       std::to_string(pages::max_compare_runs) + " runs of different environments)");
    }
    auto ids = pages::parse_run_list(*runs_text);
    auto prices = pages::parse_prices(value_of(c.query, "prices").value_or(""));
    // Every run must be readable before anything about any of them is shown.
    for (auto id : ids) {
      auto summary = db_.find_run_summary(id);
      if (!summary) throw error(errc::not_found, "run " + std::to_string(id) + " does not exist");
      auto project = db_.find_project(summary->project);
      if (!project) throw error(errc::not_found, "run " + std::to_string(id) + " has no project");
      check_readable(c, *project);
    }
    auto data = pages::compare_data(db_, ids, prices);
    if (c.json) return json_ok(data, req);
    return html_response(200, pages::render_page(pages::compare_page(data, links)), req);
  }
  c.route = "page";
  throw error(errc::not_found, "no page at " + std::string(req.target().substr(0, 120)) +
                                   "; pages are /projects/NAME, /projects/NAME/configs/CONFIG, /runs/ID and "
                                   "/compare?runs=ID,ID");
}

response page_routes::login(call& c) {
  const request& req = c.req;
  std::string next = value_of(c.query, "next").value_or("");
  if (req.method() == bhttp::verb::get) {
    auto p = pages::error_page(401, "Sign in with a token of the project you want to read.");
    p.title = "Sign in";
    return html_response(200, pages::render_page(p), req);
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
  if (!who) throw error(errc::unauthorized, "that token is not valid (unknown, revoked or mistyped)");
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
