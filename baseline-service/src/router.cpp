// The routing table of rnx-server and the one wording of its refusals (router.hpp).
#include "router.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/service/pages.hpp"

#include <boost/beast/http/field.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>

namespace rnx::service {

namespace bhttp = boost::beast::http;
namespace bj = boost::json;

namespace {

constexpr std::string_view api_docs_hint = "see docs/api/openapi.yaml";

// Same policy everywhere: scripts, styles and data only from this server, no framing, no inline script.
constexpr const char* content_security_policy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// Addresses people open in a browser: answered with HTML even when nothing is there.
bool is_page_target(std::string_view target) {
  for (auto prefix : {"/projects/", "/runs/", "/compare", "/assets/", "/login"}) {
    if (starts_with(target, prefix)) return true;
  }
  return false;
}

std::vector<std::string> pattern_segments(std::string_view pattern) {
  std::vector<std::string> out;
  if (pattern == "/") return out;  // the root has no segment, as Boost.URL parses the target "/"
  std::size_t at = 1;              // after the leading '/'
  while (at <= pattern.size()) {
    std::size_t end = std::min(pattern.find('/', at), pattern.size());
    std::string segment(pattern.substr(at, end - at));
    out.push_back(segment);
    at = end + 1;
  }
  return out;
}

// A pattern's {name} segment: its name; "" for a literal segment.
std::string_view param_name(std::string_view segment) {
  if (segment.size() < 3 || segment.front() != '{' || segment.back() != '}') return {};
  return segment.substr(1, segment.size() - 2);
}

std::string join(const std::vector<std::string>& words, std::string_view separator) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : std::string(separator)) + w;
  return out;
}

// 405 naming the methods the route takes (also in Allow).
response method_not_allowed(const route& r, const request& req) {
  std::vector<std::string> allowed;
  for (auto m : r.methods) allowed.emplace_back(bhttp::to_string(m));
  auto res = error_answer(
      r.form, 405, "method_not_allowed",
      std::string(req.method_string()) + " is not supported on " + r.pattern + "; use " + join(allowed, " or "), req);
  res.set(bhttp::field::allow, join(allowed, ", "));
  return res;
}

void check_query_keys(const route& r, const std::map<std::string, std::string>& query) {
  for (const auto& [key, value] : query) {
    if (std::find(r.query_keys.begin(), r.query_keys.end(), key) != r.query_keys.end()) continue;
    throw error(errc::bad_input,
                "unknown query parameter \"" + key.substr(0, 40) + "\" on " + r.pattern +
                    (r.query_keys.empty() ? "; it takes none" : "; it takes " + join(r.query_keys, ", ")));
  }
}

// No route: people are pointed at the pages, programs at the API's description.
std::string no_route_message(answer_form form, const request& req, std::string_view path) {
  if (form == answer_form::html) {
    return "no page at " + std::string(req.target().substr(0, 120)) +
           "; pages are /projects/NAME, /projects/NAME/configs/CONFIG, /runs/ID and /compare?runs=ID,ID";
  }
  return "no route for " + std::string(req.method_string()) + " " + std::string(path.substr(0, 200)) + "; " +
         std::string(api_docs_hint);
}

}  // namespace

std::string request_token(const request& req) {
  auto header = [&req](bhttp::field f) {
    auto it = req.find(f);
    return it == req.end() ? std::string_view() : std::string_view(it->value().data(), it->value().size());
  };
  auto auth = header(bhttp::field::authorization);
  if (starts_with(auth, "Bearer ")) return std::string(auth.substr(7));
  auto cookies = header(bhttp::field::cookie);
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

std::string expired_token_text(const store::expired_token& t) {
  return "expired at " + t.expired_at + " (it was rotated and its grace period ended); make a new one for project " +
         t.project + " with `rnx-server admin token create --project " + t.project + "`";
}

response json_answer(int status, const bj::value& body, const request& req) {
  response res{static_cast<bhttp::status>(status), req.version()};
  res.set(bhttp::field::content_type, "application/json");
  res.set(bhttp::field::cache_control, "no-store");
  res.keep_alive(req.keep_alive());
  res.body() = json::serialize(body);
  res.body() += '\n';
  res.prepare_payload();
  return res;
}

response html_answer(int status, std::string body, const request& req) {
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

response error_answer(answer_form form, int status, std::string_view code, std::string_view message,
                      const request& req) {
  if (form == answer_form::html) {
    return html_answer(status, pages::render_page(pages::error_page(status, message)), req);
  }
  return error_response(status, code, message, req.version(), req.keep_alive());
}

const std::string& route_call::param(std::string_view name) const {
  const auto it = params.find(name);
  if (it == params.end()) throw error(errc::internal, "the route has no {" + std::string(name) + "} segment");
  return it->second;
}

void router::add(route r) {
  entry e{std::move(r), {}};
  e.segments = pattern_segments(e.r.pattern);
  routes_.push_back(std::move(e));
}

const router::entry* router::find(const std::vector<std::string>& parts) const {
  for (const auto& e : routes_) {
    if (e.segments.size() != parts.size()) continue;
    bool match = true;
    for (std::size_t i = 0; match && i < parts.size(); ++i) {
      match = !param_name(e.segments[i]).empty() || e.segments[i] == parts[i];
    }
    if (match) return &e;
  }
  return nullptr;
}

response router::dispatch(const request& req, std::string& route_name) const {
  const std::string_view raw(req.target().data(), req.target().size());
  answer_form form = is_page_target(raw) ? answer_form::html : answer_form::json;
  if (form == answer_form::html) route_name = "page";
  try {
    auto target = boost::urls::parse_origin_form(raw);
    if (!target) {
      throw error(errc::bad_input, "the request target is not a valid path (" + target.error().message() +
                                       "); percent-encode special characters");
    }
    route_call call{req, {}, {}};
    for (auto segment : target->segments()) call.parts.push_back(segment);
    for (auto param : target->params()) {
      if (!call.query.emplace(param.key, param.value).second) {
        throw error(errc::bad_input, "query parameter \"" + param.key + "\" is given twice; give it once");
      }
    }
    const entry* e = find(call.parts);
    if (!e) throw error(errc::not_found, no_route_message(form, req, target->encoded_path()));
    form = e->r.form;
    route_name = e->r.pattern;
    for (std::size_t i = 0; i < e->segments.size(); ++i) {
      const std::string_view name = param_name(e->segments[i]);
      if (!name.empty()) call.params.emplace(std::string(name), call.parts[i]);
    }
    if (std::find(e->r.methods.begin(), e->r.methods.end(), req.method()) == e->r.methods.end()) {
      return method_not_allowed(e->r, req);
    }
    check_query_keys(e->r, call.query);
    return e->r.handle(call);
  } catch (const error& err) {
    return error_answer(form, err.http_status(), errc_name(err.code()), err.what(), req);
  }
}

}  // namespace rnx::service
