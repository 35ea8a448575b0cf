// HTML shared by every page (the small pieces of pages_parts.hpp, links, the served document and the report file)
// and the landing and error pages. Each other page renders its typed view in its own file.
#include "rnx/common/text.hpp"
#include "rnx/common/enum_names.hpp"
#include "rnx/service/pages.hpp"

#include "pages_parts.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/verdict_document.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace rnx::pages {

using namespace parts;

std::string_view to_string(page_kind k) {
  switch (k) {
    case page_kind::landing: return "landing";
    case page_kind::overview: return "overview";
    case page_kind::history: return "history";
    case page_kind::run: return "run";
    case page_kind::compare: return "compare";
    case page_kind::proof: return "proof";
    case page_kind::error: return "error";
  }
  return "error";
}

namespace {

std::string str(const bj::value& v) {
  if (v.is_string()) return std::string(v.as_string());
  if (v.is_int64()) return std::to_string(v.as_int64());
  return "";
}

const bj::value& at(const bj::object& o, std::string_view key) {
  static const bj::value null_value;
  auto it = o.find(key);
  return it == o.end() ? null_value : it->value();
}

// A field as HTML text: escaped, the default. raw() is the explicit exception, for a value that is composed
// further (and escaped there) or that is a number.
std::string raw(const bj::object& o, std::string_view key) { return str(at(o, key)); }
std::string e(const bj::object& o, std::string_view key) { return escape_html(raw(o, key)); }

const bj::array& arr(const bj::object& o, std::string_view key) {
  static const bj::array empty;
  const auto& v = at(o, key);
  return v.is_array() ? v.as_array() : empty;
}

const bj::object& obj(const bj::value& v) {
  static const bj::object empty;
  return v.is_object() ? v.as_object() : empty;
}

}  // namespace

namespace parts {

std::string fmt(std::optional<double> v, const char* format, std::string_view suffix) {
  if (!v) return "&ndash;";
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, format, *v);
  return std::string(buffer) + std::string(suffix);
}

std::string percent(std::optional<double> v) { return v ? fmt(*v * 100, "%.1f", "%") : "&ndash;"; }

std::string anchor_of(std::string_view prefix, std::string_view text) {
  static const char* hex = "0123456789abcdef";
  std::string out(prefix);
  for (unsigned char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-') {
      out += static_cast<char>(c);
    } else {
      out += '_';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string short_env(std::string_view env_id) { return std::string(env_id.substr(0, 12)); }

std::string link(const std::string& href, const std::string& text_html) {
  if (href.empty()) return text_html;
  return "<a href=\"" + escape_html(href) + "\">" + text_html + "</a>";
}

std::string chip(std::string_view decision) {
  std::string d = decision.empty() ? "none" : std::string(decision);
  return "<span class=\"chip d-" + escape_html(d) + "\">" + escape_html(d) + "</span>";
}

std::string scroll_box(const std::string& table_html) {
  return "<div class=\"table-scroll\">" + table_html + "</div>\n";
}

std::string verdict_banner(std::string_view overall, std::string_view reason) {
  return "<p class=\"banner v-" + escape_html(overall) + "\"><strong>" + escape_html(overall) + "</strong> " +
         escape_html(reason) + "</p>";
}

namespace {

// "AMD EPYC AMD EPYC 7763" -> "AMD EPYC 7763": a vendor string written before a model that repeats it.
std::string without_repeated_prefix(std::string_view text) {
  for (std::size_t half = text.size() / 2; half > 0; --half) {
    std::string_view first = text.substr(0, half);
    if (text.size() > 2 * half && text[half] == ' ' && text.substr(half + 1, half) == first) {
      return std::string(text.substr(half + 1));
    }
    if (text.size() == 2 * half + 1 && text[half] == ' ' && text.substr(half + 1) == first) return std::string(first);
  }
  return std::string(text);
}

}  // namespace

std::string machine_text(std::string_view device, std::string_view cpu) {
  std::string d = without_repeated_prefix(device);
  std::string c = without_repeated_prefix(cpu);
  if (c.empty() || d.find(c) != std::string::npos) return escape_html(d);
  if (d.empty()) return escape_html(c);
  return escape_html(d) + " &middot; cpu " + escape_html(c);
}

std::string unstable_badge(const store::run_number& n) {
  if (!n.unstable) return "";
  return " <span class=\"badge unstable\" title=\"" + escape_html(unstable_text(n)) + "\">&#9888; unstable</span>";
}

std::string unstable_folded(const std::string& label, const store::run_number& n) {
  if (!n.unstable) return "";
  const std::string line = unstable_summary(n);
  const std::string whole = unstable_text(n);
  const std::string head = "&#9888; " + escape_html(label) + escape_html(line);
  if (line == whole) return "<span class=\"unstable-note\">" + head + "</span>";
  return "<details class=\"unstable-note\"><summary>" + head + "</summary>" + escape_html(whole) + "</details>";
}

}  // namespace parts

std::string escape_html(std::string_view text) { return html_escape(text); }

std::string script_json(const bj::value& v) {
  std::string text = json::serialize(v);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    // Only inside JSON strings can '<' occur; \u003c keeps "</script>" in a name from closing the element.
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string link_style::project(std::string_view name) const {
  if (report) return std::find(anchors.begin(), anchors.end(), "overview") != anchors.end() ? "#overview" : "";
  return "/projects/" + percent_encode(name);
}

std::string link_style::config(std::string_view project_name, const config_key& key) const {
  if (report) {
    auto a = anchor_of("config-", key.label());
    return std::find(anchors.begin(), anchors.end(), a) != anchors.end() ? "#" + a : "";
  }
  return "/projects/" + percent_encode(project_name) + "/configs/" + percent_encode(key.label());
}

std::string link_style::run(std::string_view id) const {
  if (id.empty()) return "";
  if (report) {
    auto a = anchor_of("run-", id);
    return std::find(anchors.begin(), anchors.end(), a) != anchors.end() ? "#" + a : "";
  }
  return "/runs/" + percent_encode(id);
}

namespace parts {

std::string upload_help(std::string_view project) {
  const std::string name = project.empty() ? std::string("NAME") : escape_html(project);
  return "<div class=\"empty-state\"><p><strong>No runs yet.</strong> Upload one from a checkout whose "
         "<code>rnx.toml</code> names the project, with one of its tokens:</p>\n<pre><code>"
         "rnx-server admin token create --project " +
         name +
         " --db rnx.sqlite   # on the server, printed once\n"
         "RNX_TOKEN=rnx_... rnx gate --service-url URL                  # URL: this server's address</code></pre>\n"
         "<p>A push build on the base branch becomes the first baseline; pull requests are judged against it. "
         "The gate's GitHub Action does the same in CI (<code>service-url</code> and <code>token</code> inputs).</p>"
         "</div>\n";
}

}  // namespace parts

page error_page(int status, std::string_view message, const std::vector<way_back>& back) {
  std::string title = status == 404   ? "Not found"
                      : status == 401 ? "Sign in needed"
                      : status == 403 ? "Not allowed"
                      : status == 405 ? "Method not allowed"
                      : status >= 500 ? "Server error"
                                      : "Bad request";
  std::ostringstream os;
  os << "<h1>" << status << " " << title << "</h1>\n<p class=\"error-message\">" << escape_html(message) << "</p>\n";
  // A private project's pages answer 404 to a request without its token, exactly as an unknown one does, so a 404
  // page offers the sign-in as well.
  if (status == 401 || status == 404) {
    os << "<form class=\"controls\" method=\"post\" action=\"/login\"><label>project token <input type=\"password\" "
          "name=\"token\" autocomplete=\"off\" size=\"50\"></label> <button type=\"submit\">sign in</button></form>\n"
          "<p class=\"legend\">The token is kept in a cookie for this site only (HttpOnly, SameSite=Strict).</p>\n";
  }
  os << "<ul class=\"ways-back\">";
  for (const auto& w : back) os << "<li>" << link(w.href, escape_html(w.text)) << "</li>";
  os << "<li><a href=\"/\">all projects on this server</a></li></ul>\n";
  return {page_kind::error, std::to_string(status) + " " + title, "error", os.str(), bj::object{}};
}

std::vector<way_back> ways_back(const std::vector<std::string>& path, const std::map<std::string, std::string>& query) {
  std::vector<way_back> out;
  if (path.size() > 2 && path[0] == "projects" && !path[1].empty() && path[1].size() <= 64) {
    out.push_back({"/projects/" + percent_encode(path[1]), "the overview of " + path[1]});
  }
  auto runs = query.find("runs");
  if (!path.empty() && path.back() == "compare" && runs != query.end()) {
    std::string_view list = runs->second;
    for (std::size_t n = 0; !list.empty() && n < static_cast<std::size_t>(max_compare_runs); ++n) {
      auto comma = list.find(',');
      std::string_view id = list.substr(0, comma);
      bool digits = !id.empty() && id.size() < 19 &&
                    std::all_of(id.begin(), id.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
      if (digits) out.push_back({"/runs/" + std::string(id), "run " + std::string(id)});
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
  }
  return out;
}

page landing_page(const bj::object& data) {
  std::ostringstream os;
  os << "<h1>Projects</h1>\n";
  const auto& projects = arr(data, "projects");
  std::string signed_in = raw(data, "signed_in");
  if (projects.empty()) {
    os << "<p>No project on this server is readable without a token"
       << (signed_in.empty() ? std::string(" and you are not signed in") : std::string()) << ".</p>\n"
       << "<div class=\"empty-state\"><p>Make one and upload its first run:</p><pre><code>"
          "rnx-server admin project create NAME --db rnx.sqlite\n"
          "rnx-server admin token create --project NAME --db rnx.sqlite   # printed once\n"
          "rnx-server admin project visibility NAME public --db rnx.sqlite   # listed here for everyone\n"
          "RNX_TOKEN=rnx_... rnx gate --service-url URL   # in a checkout whose rnx.toml names NAME</code></pre>"
          "<p>A private project is listed to whoever signs in with one of its tokens.</p></div>\n";
  } else {
    std::ostringstream t;
    t << "<table class=\"projects\"><thead><tr><th>project</th><th>visibility</th><th class=\"num\">runs</th>"
         "<th>last run</th></tr></thead><tbody>\n";
    for (const auto& pv : projects) {
      const auto& p = obj(pv);
      bool is_public = at(p, "public").is_bool() && at(p, "public").as_bool();
      t << "<tr><td>" << link("/projects/" + percent_encode(raw(p, "name")), e(p, "name")) << "</td><td>"
        << (is_public ? "public" : "private (your token)") << "</td><td class=\"num\">" << raw(p, "n_runs")
        << "</td><td>" << (raw(p, "last_run_at").empty() ? std::string("no runs yet") : e(p, "last_run_at"))
        << "</td></tr>\n";
    }
    t << "</tbody></table>";
    os << scroll_box(t.str());
  }
  if (signed_in.empty()) {
    os << "<p class=\"legend\">Private projects are listed after signing in with one of their tokens: "
          "<a href=\"/login?next=/\">sign in</a>.</p>\n";
  } else {
    os << "<p class=\"legend\">Signed in with a token of " << escape_html(signed_in) << ".</p>\n";
  }
  return {page_kind::landing, "projects", "projects", os.str(), data};
}

namespace {

std::string section(const page& p) {
  return "<section class=\"rnx-page\" data-kind=\"" + escape_html(to_string(p.kind)) + "\" id=\"" +
         escape_html(p.anchor) + "\">\n" + p.body + "<script type=\"application/json\" class=\"rnx-data\">" +
         script_json(p.data) + "</script>\n</section>\n";
}

constexpr std::string_view head_common =
    "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<link rel=\"icon\" href=\"data:,\">\n";

}  // namespace

std::string render_page(const page& p) {
  std::string out(head_common);
  out += "<title>" + escape_html(p.title) +
         " &middot; rnx</title>\n<link rel=\"stylesheet\" href=\"/assets/rnx-pages.css\">\n"
         "</head>\n<body>\n<header class=\"top\"><a class=\"brand\" href=\"/\">rnx</a> <nav><a href=\"/\">projects</a>"
         "</nav></header>\n<main>\n";
  out += section(p);
  out += "</main>\n";
  if (p.kind != page_kind::error && p.kind != page_kind::landing) {
    out += "<script src=\"/assets/chart.min.js\"></script>\n<script src=\"/assets/rnx-pages.js\"></script>\n";
  }
  out += "</body>\n</html>\n";
  return out;
}

std::string render_report(const std::vector<page>& pages, std::string_view title) {
  std::string out(head_common);
  out += "<title>" + escape_html(title) + " &middot; rnx report</title>\n<style>\n";
  out += find_asset("rnx-pages.css")->body;
  out +=
      "</style>\n</head>\n<body class=\"report\">\n<header class=\"top\"><span class=\"brand\">rnx report</span> "
      "<nav>";
  for (const auto& p : pages) out += "<a href=\"#" + escape_html(p.anchor) + "\">" + escape_html(p.title) + "</a> ";
  out += "</nav></header>\n<main>\n";
  for (const auto& p : pages) out += section(p);
  out += "</main>\n<script>\n";
  out += find_asset("chart.min.js")->body;
  out += "\n</script>\n<script>\n";
  out += find_asset("rnx-pages.js")->body;
  out += "\n</script>\n</body>\n</html>\n";
  return out;
}

std::int64_t reported_run(store::database& db, const store::project_info& project, std::optional<std::int64_t> run_id) {
  if (!run_id) {
    auto newest = db.list_runs(project.id, store::run_filter{std::nullopt, std::nullopt, std::nullopt, 1});
    if (newest.empty()) throw error(errc::not_found, "project " + project.name + " has no runs to report");
    run_id = newest.front().id;
  }
  auto summary = db.find_run_summary(*run_id);
  if (!summary || summary->project != project.name) {
    throw error(errc::not_found, "run " + std::to_string(*run_id) + " does not exist in project " + project.name);
  }
  return *run_id;
}

std::vector<page> report_pages(store::database& db, const store::project_info& project,
                               std::optional<std::int64_t> run_id) {
  run_id = reported_run(db, project, run_id);
  auto overview = overview_data(db, project);
  auto run = run_data(db, *run_id);
  std::vector<history_view> histories;
  for (const auto& c : run.configs) {
    try {
      histories.push_back(history_data(db, project, c.key, history_query{}));
    } catch (const error& err) {
      if (err.code() != errc::not_found) throw;  // a configuration only the verdict knows has no history
    }
  }
  link_style links;
  links.report = true;
  links.anchors.push_back("overview");
  links.anchors.push_back(anchor_of("run-", std::to_string(*run_id)));
  for (const auto& h : histories) links.anchors.push_back(anchor_of("config-", h.key.label()));
  std::vector<page> pages;
  pages.push_back(overview_page(overview, links));
  pages.push_back(run_page(run, links));
  for (const auto& h : histories) pages.push_back(history_page(h, links, false));
  return pages;
}

}  // namespace rnx::pages
