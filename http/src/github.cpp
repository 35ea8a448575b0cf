// rnx's GitHub REST client, over rnx::http with GitHub's versioned JSON media type.
#include "rnx/http/github.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"

#include <boost/json.hpp>

namespace rnx::http {

namespace bj = boost::json;

namespace {

// GitHub rejects a status description longer than this.
constexpr std::size_t max_status_description = 140;
// Bounds the comment search on PRs with very long threads; the gate's comment is usually early.
constexpr int max_comment_pages = 30;

// GitHub's "message" and each "errors[].message" ("Validation Failed; A pull request already exists"), or "" when
// the body is not GitHub's JSON (a proxy's HTML page: the status alone says enough).
std::string github_message(const response& r) {
  try {
    bj::value v = json::parse(r.body, "GitHub's error");
    const auto* o = v.if_object();
    if (!o) return {};
    std::string m;
    if (const auto* msg = o->if_contains("message"); msg && msg->is_string()) m = std::string(msg->get_string());
    if (const auto* errors = o->if_contains("errors"); errors && errors->is_array()) {
      for (const auto& e : errors->get_array()) {
        const auto* eo = e.if_object();
        const auto* em = eo ? eo->if_contains("message") : nullptr;
        if (em && em->is_string()) m += (m.empty() ? "" : "; ") + std::string(em->get_string());
      }
    }
    return m;
  } catch (const std::exception&) {
    return {};
  }
}

bj::value parse_body(const response& r, const std::string& url) {
  try {
    return json::parse(r.body, url);
  } catch (const std::exception& e) {
    throw error(errc::bad_input, "GitHub API " + url + " answered " + std::to_string(r.status) +
                                     " with a body that is not JSON (" + e.what() + ")");
  }
}

std::int64_t integer_member(const bj::value& v, std::string_view key, const std::string& url) {
  if (const auto* o = v.if_object()) {
    if (auto it = o->find(key); it != o->end()) {
      if (it->value().is_int64()) return it->value().get_int64();
      if (it->value().is_uint64()) return static_cast<std::int64_t>(it->value().get_uint64());
    }
  }
  throw error(errc::bad_input, "GitHub API " + url + ": the response has no integer \"" + std::string(key) + "\"");
}

std::string string_member(const bj::value& v, std::initializer_list<std::string_view> path, const std::string& url) {
  const bj::value* at = &v;
  std::string dotted;
  for (auto key : path) {
    dotted += (dotted.empty() ? "" : ".") + std::string(key);
    const auto* o = at->if_object();
    const bj::value* next = o ? o->if_contains(key) : nullptr;
    if (!next) throw error(errc::bad_input, "GitHub API " + url + ": the response has no \"" + dotted + "\"");
    at = next;
  }
  if (!at->is_string()) throw error(errc::bad_input, "GitHub API " + url + ": \"" + dotted + "\" is not a string");
  return std::string(at->get_string());
}

}  // namespace

github_api::github_api(std::string api_url, std::string repository, std::string token,
                       std::chrono::milliseconds timeout, std::string user_agent)
    : api_url_(std::move(api_url)),
      repository_(std::move(repository)),
      token_(std::move(token)),
      timeout_(timeout),
      user_agent_(std::move(user_agent)) {
  while (!api_url_.empty() && api_url_.back() == '/') api_url_.pop_back();
  if (repository_.find('/') == std::string::npos) {
    throw error(errc::usage, "GITHUB_REPOSITORY \"" + repository_ + "\" is not owner/name");
  }
}

std::string github_api::repo_url(std::string_view rest) const {
  return api_url_ + "/repos/" + repository_ + std::string(rest);
}

response github_api::call(std::string_view method, const std::string& url, const std::string& body) {
  header_list headers{
      {"Accept", "application/vnd.github+json"},
      {"X-GitHub-Api-Version", "2022-11-28"},
      {"User-Agent", user_agent_},
  };
  if (!token_.empty()) headers.emplace_back("Authorization", "Bearer " + token_);
  if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
  response r = request(method, url, headers, body, timeout_);
  if (r.status / 100 == 2) return r;

  std::string what = "GitHub API " + std::string(method) + " " + url + " answered " + std::to_string(r.status);
  if (auto message = github_message(r); !message.empty()) what += ": " + message;
  // Rate limits come back as 403/429 with x-ratelimit-remaining: 0; they pass, so they are "unavailable".
  if (r.status == 429 || (r.status == 403 && r.header("x-ratelimit-remaining") == "0") || r.status >= 500) {
    throw error(errc::unavailable, what);
  }
  if (r.status == 401) throw error(errc::unauthorized, what + " (check the github-token input)");
  if (r.status == 403) {
    throw error(errc::forbidden, what +
                                     " (the token lacks a permission: give the workflow `permissions: "
                                     "pull-requests: write, statuses: write`; a fork's token is read-only)");
  }
  if (r.status == 404) throw error(errc::not_found, what);
  throw error(errc::invalid, what);
}

std::int64_t github_api::create_comment(std::int64_t number, const std::string& body) {
  bj::object request;
  request["body"] = body;
  const std::string url = repo_url("/issues/" + std::to_string(number) + "/comments");
  response r = call("POST", url, bj::serialize(request));
  return integer_member(parse_body(r, url), "id", url);
}

std::int64_t github_api::create_issue(const std::string& title, const std::string& body) {
  bj::object request;
  request["title"] = title;
  request["body"] = body;
  const std::string url = repo_url("/issues");
  response r = call("POST", url, bj::serialize(request));
  return integer_member(parse_body(r, url), "number", url);
}

std::int64_t github_api::upsert_comment(std::int64_t number, std::string_view marker, const std::string& body) {
  std::optional<std::int64_t> found;
  std::string url = repo_url("/issues/" + std::to_string(number) + "/comments?per_page=100");
  for (int page = 0; page < max_comment_pages && !url.empty(); ++page) {
    response r = call("GET", url, "");
    bj::value list = parse_body(r, url);
    if (!list.is_array()) throw error(errc::bad_input, "GitHub API " + url + ": expected a JSON array of comments");
    for (const auto& comment : list.get_array()) {
      const auto* o = comment.if_object();
      if (!o) continue;
      auto text = o->find("body");
      if (text == o->end() || !text->value().is_string()) continue;
      // The marker opens the gate's own comment; a reply that quotes it ("> <!-- ...") is not ours.
      if (std::string_view(text->value().get_string()).substr(0, marker.size()) != marker) continue;
      // Comments come oldest first: the last match is the newest.
      found = integer_member(comment, "id", url);
    }
    url = next_page_url(r.header("Link"));
  }
  if (!found) return create_comment(number, body);
  bj::object request;
  request["body"] = body;
  const std::string patch_url = repo_url("/issues/comments/" + std::to_string(*found));
  call("PATCH", patch_url, bj::serialize(request));
  return *found;
}

void github_api::post_status(const std::string& sha, std::string_view state, std::string_view context,
                             std::string_view description, const std::string& target_url) {
  bj::object request;
  request["state"] = state;
  request["context"] = context;
  std::string text(description);
  if (text.size() > max_status_description) text = text.substr(0, max_status_description - 3) + "...";
  request["description"] = text;
  if (!target_url.empty()) request["target_url"] = target_url;
  call("POST", repo_url("/statuses/" + sha), bj::serialize(request));
}

std::string github_api::permission_of(const std::string& login) {
  const std::string url = repo_url("/collaborators/" + login + "/permission");
  try {
    response r = call("GET", url, "");
    return string_member(parse_body(r, url), {"permission"}, url);
  } catch (const error& e) {
    if (e.code() == errc::not_found) return "none";
    throw;
  }
}

pull_request_info github_api::pull_request(std::int64_t number) {
  const std::string url = repo_url("/pulls/" + std::to_string(number));
  response r = call("GET", url, "");
  bj::value v = parse_body(r, url);
  pull_request_info info;
  info.number = integer_member(v, "number", url);
  info.head_sha = string_member(v, {"head", "sha"}, url);
  info.head_ref = string_member(v, {"head", "ref"}, url);
  info.base_ref = string_member(v, {"base", "ref"}, url);
  info.state = string_member(v, {"state"}, url);
  return info;
}

void github_api::react_to_comment(std::int64_t comment_id, std::string_view content) {
  bj::object request;
  request["content"] = content;
  call("POST", repo_url("/issues/comments/" + std::to_string(comment_id) + "/reactions"), bj::serialize(request));
}

opened_pull_request github_api::open_pull_request(const std::string& title, const std::string& head,
                                                  const std::string& base, const std::string& body) {
  bj::object request{{"title", title}, {"head", head}, {"base", base}, {"body", body}, {"maintainer_can_modify", true}};
  const std::string url = repo_url("/pulls");
  bj::value v = parse_body(call("POST", url, bj::serialize(request)), url);
  return {integer_member(v, "number", url), string_member(v, {"html_url"}, url)};
}

std::string next_page_url(std::string_view link) {
  // Link: <https://api.github.com/...&page=2>; rel="next", <...>; rel="last"
  std::size_t pos = 0;
  while (pos < link.size()) {
    std::size_t open = link.find('<', pos);
    if (open == std::string_view::npos) break;
    std::size_t close = link.find('>', open);
    if (close == std::string_view::npos) break;
    std::size_t end = link.find(',', close);
    std::string_view params =
        link.substr(close + 1, end == std::string_view::npos ? std::string_view::npos : end - close - 1);
    if (params.find("rel=\"next\"") != std::string_view::npos)
      return std::string(link.substr(open + 1, close - open - 1));
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return {};
}

bool can_write(std::string_view permission) {
  return permission == "admin" || permission == "maintain" || permission == "write";
}

}  // namespace rnx::http
