// The pages through api::handle_request (no socket): statuses and messages of bad input, escaping of user text,
// public and private projects, the JSON behind the charts, downsampling and `rnx report`'s self-contained file.
#include "service_test_support.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/speed_of_light.hpp"
#include "rnx/service/api.hpp"
#include "rnx/service/pages.hpp"
#include "rnx/service/verdicts.hpp"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cstdio>
#include <set>

using namespace rnx;
using namespace rnx::test;
namespace http = boost::beast::http;

namespace {

struct fixture {
  temp_dir dir;
  std::string db_path = dir.file("rnx.sqlite");
  std::string token = make_token(db_path, "demo");
  std::string other_token = make_token(db_path, "other");
  store::database db{db_path};
  service::metrics metrics;
  service::api api{db, metrics, nullptr};
  std::vector<std::int64_t> runs;

  fixture() {
    auto project = db.find_project("demo")->id;
    for (int i = 0; i < 6; ++i) {
      run_spec s;
      s.commit = "main" + std::to_string(i);
      s.seed = static_cast<unsigned>(i + 1);
      s.env_id = i % 2 ? "env-b" : "env-a";
      runs.push_back(store::upload_run(db, project, make_run(s)).run.id);
    }
    run_spec pr;
    pr.branch = "feature";
    pr.pull_request = 7;
    pr.commit = "head";
    pr.scale = 1.2;
    pr.seed = 99;
    auto doc = make_run(pr);
    // A name from before the kernel-name rule (an upload now refuses it): stored names reach the pages escaped.
    doc.results[0].kernel = "<script>alert(1)</script>";
    auto id = store::upload_run(db, project, doc).run.id;
    store::judge_stored_run(db, id, gate_policy{});
    runs.push_back(id);
  }

  service::response get(const std::string& target, const std::string& bearer = "", const std::string& cookie = "") {
    service::request req{http::verb::get, target, 11};
    if (!bearer.empty()) req.set(http::field::authorization, "Bearer " + bearer);
    if (!cookie.empty()) req.set(http::field::cookie, cookie);
    return api.handle_request(req);
  }
};

bool is_html(const service::response& r) { return r.at(http::field::content_type).starts_with("text/html"); }

}  // namespace

TEST_CASE("pages: private projects need a token of theirs; public ones are readable by all") {
  fixture f;
  auto anonymous = f.get("/projects/demo");
  CHECK(anonymous.result_int() == 404);
  CHECK(is_html(anonymous));
  CHECK(anonymous.body().find("action=\"/login\"") != std::string::npos);
  CHECK(f.get("/projects/demo", f.other_token).result_int() == 404);
  auto owner = f.get("/projects/demo", f.token);
  CHECK(owner.result_int() == 200);
  CHECK(f.get("/projects/demo", "", "theme=dark; rnx_token=" + f.token).result_int() == 200);
  CHECK(owner.at("Content-Security-Policy").find("script-src 'self'") != std::string::npos);
  f.db.set_project_public("demo", true);
  CHECK(f.get("/projects/demo").result_int() == 200);
  CHECK(f.get("/api/v1/projects/demo/overview").result_int() == 200);
  CHECK(f.get("/projects/other").result_int() == 404);
}

namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// A page's or endpoint's answer with the name or id asked for written as "@": what is left is the same for every
// name, so two answers compare equal exactly when they differ in the asked name alone.
std::string answer_without(const service::response& r, const std::vector<std::string>& asked) {
  std::string text = std::to_string(r.result_int()) + " " + std::string(r.at(http::field::content_type)) + "\n";
  text += r.body();
  for (const auto& a : asked) text = replace_all(text, a, "@");
  return text;
}

}  // namespace

TEST_CASE("pages: an unknown project or run and a private one answer alike, without naming the private project") {
  fixture f;
  f.db.set_project_public("other", true);  // a public project beside the private one ("demo"), for /compare
  const std::string private_run = std::to_string(f.runs[0]);
  const std::string unknown_run = "424242";
  std::string public_run;
  {
    run_spec s;
    s.commit = "public";
    s.env_id = "env-b";
    public_run = std::to_string(store::upload_run(f.db, f.db.find_project("other")->id, make_run(s)).run.id);
  }
  const std::string config = "kernel1%2Feager%2Ffloat32%2Fb1";
  // Every address that takes a run id, a project or a config, with the part asked for as "{}".
  struct route_case {
    std::string pattern;
    bool run;  // "{}" is a run id (else a project name)
  };
  const route_case routes[] = {
      {"/runs/{}", true},
      {"/api/v1/runs/{}/evidence", true},
      {"/compare?runs={}," + public_run, true},
      {"/api/v1/compare?runs=" + public_run + ",{}", true},
      {"/projects/{}", false},
      {"/api/v1/projects/{}/overview", false},
      {"/projects/{}/configs/" + config, false},
      {"/api/v1/projects/{}/configs/" + config + "/history", false},
  };
  // Without a token, with another project's token, with a token that is not valid, with a revoked sign-in cookie.
  const std::vector<std::pair<std::string, std::string>> callers = {
      {"", ""}, {f.other_token, ""}, {"rnx_000000000000_" + std::string(48, '0'), ""}, {"", "rnx_token=rnx_bad"}};
  for (const auto& route : routes) {
    const std::string hidden = route.run ? private_run : "demo";
    const std::string unknown = route.run ? unknown_run : "nope";
    auto at = [&](const std::string& what) { return replace_all(route.pattern, "{}", what); };
    auto asked = [&](const std::string& what) {
      return route.run ? std::vector<std::string>{"/runs/" + what, "run " + what} : std::vector<std::string>{what};
    };
    for (const auto& caller : callers) {
      // Named copies, not structured bindings: CAPTURE's lambda may not capture a binding (C++20, clang).
      const std::string bearer = caller.first;
      const std::string cookie = caller.second;
      CAPTURE(route.pattern);
      CAPTURE(bearer);
      CAPTURE(cookie);
      auto private_answer = f.get(at(hidden), bearer, cookie);
      auto unknown_answer = f.get(at(unknown), bearer, cookie);
      CHECK(private_answer.result_int() == 404);
      CHECK(unknown_answer.result_int() == 404);
      CHECK(answer_without(private_answer, asked(hidden)) == answer_without(unknown_answer, asked(unknown)));
      if (route.run) CHECK(private_answer.body().find("demo") == std::string::npos);
    }
    // The project's own token reads it.
    auto own = f.get(at(hidden), f.token).result_int();
    CHECK((route.pattern.find("compare") == std::string::npos ? own == 200 : own != 404));
  }
}

TEST_CASE("pages: bad input is a clear 4xx page (HTML) or error (JSON), never 500") {
  fixture f;
  f.db.set_project_public("demo", true);
  const std::string config = "/projects/demo/configs/kernel1%2Feager%2Ffloat32%2Fb1";
  struct bad_case {
    std::string target;
    int status;
    std::string says;
  };
  const bad_case cases[] = {
      {"/projects/nope", 404, "project \"nope\" does not exist"},
      {"/projects/bad%20name", 400, "project name"},
      {"/runs/424242", 404, "run 424242 does not exist"},
      {"/runs/abc", 400, "run id \"abc\" is not valid"},
      {"/runs/1?x=1", 400, "unknown query parameter \"x\""},
      {"/projects/demo/configs/nokernel", 400, "KERNEL/RUNTIME/DTYPE/bBATCH"},
      {"/projects/demo/configs/k%2Feager%2Ffloat32%2Fb1", 404, "has no runs in project demo"},
      {config + "?env_id=env-zzz", 404, "environment \"env-zzz\" has no runs"},
      {config + "?points=5", 400, "points=5 is out of range"},
      {config + "?points=99999999999", 400, "points"},
      {config + "?from=yesterday", 400, "from=\"yesterday\" is not a date"},
      {config + "?from=2026-13-01", 400, "is not a date"},
      {config + "?from=2026-12-02&to=2026-12-01", 400, "empty range"},
      {config + "?from=1990-01-01&to=2026-12-01", 400, "longer than 3660 days"},
      {config + "?scale=cubic", 400, "scale=\"cubic\" must be linear or log"},
      {config + "?points=10&points=20", 400, "given twice"},
      {"/compare", 400, "runs is missing"},
      {"/compare?runs=1", 400, "needs 2 to 6 runs"},
      {"/compare?runs=1,1", 400, "names run 1 twice"},
      {"/compare?runs=1,2,3,4,5,6,7", 400, "more than 6 runs"},
      {"/compare?runs=1,x", 400, "\"x\" is not a run id"},
      {"/compare?runs=1,3", 400, "same environment"},
      {"/compare?runs=1,424242", 404, "run 424242 does not exist"},
      {"/compare?runs=1,2&prices=env-a:free", 400, "ENV_ID:USD_PER_HOUR"},
      {"/compare?runs=1,2&prices=env-q:1", 400, "not one of the compared runs"},
      {"/assets/secret.txt", 404, "no asset named"},
      {"/projects/demo/nothing", 404, "no page at"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.target);
    auto page = f.get(c.target);
    CHECK(page.result_int() == c.status);
    CHECK(is_html(page));
    CHECK(page.body().find(pages::escape_html(c.says)) != std::string::npos);
  }
  // The JSON endpoints answer the same mistakes in the API's error shape.
  auto json = f.get("/api/v1/projects/demo/configs/kernel1%2Feager%2Ffloat32%2Fb1/history?points=5");
  CHECK(json.result_int() == 400);
  CHECK(json.body().find("\"code\":\"bad_input\"") != std::string::npos);
  CHECK(f.get("/api/v1/runs/424242/evidence").result_int() == 404);
  CHECK(f.get("/api/v1/compare?runs=1").result_int() == 400);
  service::request post{http::verb::post, "/api/v1/projects/demo/overview", 11};
  auto not_allowed = f.api.handle_request(post);
  CHECK(not_allowed.result_int() == 405);
  CHECK(not_allowed.at(http::field::allow) == "GET");
}

TEST_CASE("pages: names from users are escaped, also inside the embedded JSON") {
  fixture f;
  auto run = f.get("/runs/" + std::to_string(f.runs.back()), f.token);
  REQUIRE(run.result_int() == 200);
  CHECK(run.body().find("<script>alert(1)") == std::string::npos);
  CHECK(run.body().find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(run.body().find("\\u003cscript>alert(1)\\u003c/script>") != std::string::npos);
  // Its history link carries the name percent-encoded as one path segment, and that page opens.
  auto history = f.get("/projects/demo/configs/%3Cscript%3Ealert(1)%3C%2Fscript%3E%2Feager%2Ffloat32%2Fb1", f.token);
  CHECK(history.result_int() == 200);
  CHECK(run.body().find("/projects/demo/configs/%3Cscript%3Ealert%281%29%3C%2Fscript%3E%2Feager%2Ffloat32%2Fb1") !=
        std::string::npos);
}

TEST_CASE("pages: the JSON behind the charts") {
  fixture f;
  auto overview = json::parse(f.get("/api/v1/projects/demo/overview", f.token).body(), "overview");
  CHECK(overview.at("environments").as_array().size() == 2);
  // 4 on main; the pull request's renamed one has a row for its decision, with no baseline of main.
  CHECK(overview.at("configs").as_array().size() == 5);
  CHECK(overview.at("base_branch") == "main");
  auto history = json::parse(
      f.get("/api/v1/projects/demo/configs/kernel1%2Feager%2Ffloat32%2Fb1/history?env_id=env-a", f.token).body(), "h");
  const auto& series = history.at("series").as_array();
  REQUIRE(series.size() == 1);
  const auto& points = series[0].at("points").as_array();
  CHECK(points.size() == 4);  // three pushes to main in env-a and the pull request
  CHECK(points[0].at("baseline") == "push");
  CHECK(points[0].at("stat_lo_ms").as_double() <= points[0].at("stat_ms").as_double());
  CHECK(points[0].at("stat_hi_ms").as_double() >= points[0].at("stat_ms").as_double());
  CHECK(points[0].at("unstable") == false);
  auto evidence =
      json::parse(f.get("/api/v1/runs/" + std::to_string(f.runs.back()) + "/evidence", f.token).body(), "e");
  CHECK(evidence.at("verdict").at("verdict") == "BLOCK");
  const auto& config = evidence.at("configs").as_array()[1];
  CHECK(config.at("decision") == "slower");
  CHECK(config.at("head").at("processes").as_array().size() == 1);
  CHECK(config.at("base").at("n") == 30);
  auto compare = json::parse(f.get("/api/v1/compare?runs=1,2&prices=env-a:2,env-b:4", f.token).body(), "c");
  const auto& row = compare.at("configs").as_array()[0];
  const auto& first = row.at("cells").as_array()[0];
  CHECK(first.at("ratio").as_double() == doctest::Approx(1.0));
  // $2/h at 1 ms per call of batch 1: 2 * 1 / 3.6 dollars per million items, give or take the noise.
  CHECK(first.at("cost_per_million").as_double() == doctest::Approx(2.0 / 3.6).epsilon(0.05));
}

TEST_CASE("pages: downsampling keeps the ends, the kept points and each bucket's extremes") {
  std::vector<double> values(5000, 1.0);
  std::vector<bool> keep(5000, false);
  values[1234] = 9.0;  // a spike
  values[4321] = 0.1;  // a dip
  keep[2500] = true;   // an accepted slowdown
  auto idx = pages::downsample(values, keep, 400);
  CHECK(idx.size() <= 400);
  CHECK(idx.front() == 0);
  CHECK(idx.back() == 4999);
  for (std::size_t i : {std::size_t{1234}, std::size_t{4321}, std::size_t{2500}}) {
    CHECK(std::find(idx.begin(), idx.end(), i) != idx.end());
  }
  CHECK(pages::downsample(std::vector<double>(50, 1.0), std::vector<bool>(50, false), 400).size() == 50);
}

TEST_CASE("pages: a report is one file with everything inlined") {
  fixture f;
  auto project = f.db.find_project("demo");
  auto report = pages::render_report(pages::report_pages(f.db, *project, f.runs.back()), "demo");
  CHECK(report.find("src=\"/assets") == std::string::npos);
  CHECK(report.find("href=\"/") == std::string::npos);  // every link is an anchor inside the file
  CHECK(report.find("Chart.js v3") != std::string::npos);
  CHECK(report.find("id=\"run-" + std::to_string(f.runs.back()) + "\"") != std::string::npos);
  CHECK(report.find("id=\"overview\"") != std::string::npos);
  CHECK_THROWS_AS(pages::report_pages(f.db, *project, 424242), error);
}

TEST_CASE("sign-in redirects only to a path on this server, whatever the next parameter says") {
  fixture f;
  auto sign_in = [&](const std::string& next_encoded) {
    service::request req{http::verb::post, "/login", 11};
    req.set(http::field::content_type, "application/x-www-form-urlencoded");
    req.body() = "token=" + f.token + "&next=" + next_encoded;
    req.prepare_payload();
    auto res = f.api.handle_request(req);
    REQUIRE(res.result_int() == 303);
    return std::string(res.at(http::field::location));
  };
  // Kept: a path of this server, query included.
  CHECK(sign_in("%2Fprojects%2Fdemo%2Fconfigs%2Fx%3Fenv_id%3Da") == "/projects/demo/configs/x?env_id=a");
  CHECK(sign_in("/runs/3") == "/runs/3");
  // Everything that a browser could read as another origin goes to the project's overview. Each is given as the
  // form sends it (percent-encoded), so the decoded values are /<TAB>/evil, //evil, /\evil, https://evil, ...
  for (const std::string hostile :
       {"%2F%09%2Fevil.example", "/%09/evil.example", "%2F%2Fevil.example", "//evil.example", "%2F%5Cevil.example",
        "/%5C/evil.example", "https%3A%2F%2Fevil.example", "https://evil.example", "%252F%252Fevil.example",
        "%2F%0D%0ALocation:%20https://evil.example", "%20/evil", "/%20/evil", "javascript:alert(1)", "evil.example",
        "%2F", "", "/%E3%80%80/evil.example", "/%7F/evil"}) {
    CAPTURE(hostile);
    CHECK(sign_in(hostile) == "/projects/demo");
  }
  // The parser on its own: what it keeps and what it refuses.
  CHECK(pages::same_origin_path("/projects/demo") == "/projects/demo");
  CHECK_FALSE(pages::same_origin_path("/\t/evil").has_value());
  CHECK_FALSE(pages::same_origin_path("//evil").has_value());
  CHECK_FALSE(pages::same_origin_path("/\\evil").has_value());
  CHECK_FALSE(pages::same_origin_path("https://evil").has_value());
  CHECK_FALSE(pages::same_origin_path("/a\nb").has_value());
  // "%2F%2Fevil" undecoded is a relative path segment, not a path on this server from its first "/".
  CHECK_FALSE(pages::same_origin_path("%2F%2Fevil").has_value());
  // A percent-encoded slash inside a path is data, not an authority: the browser keeps it on this origin.
  CHECK(pages::same_origin_path("/%2F/evil") == "/%2F/evil");
}

TEST_CASE("pages: a change is a signed percentage with its interval, drawn against the band") {
  CHECK(pages::signed_percent(1.205) == "+20.5%");
  CHECK(pages::signed_percent(0.96) == "-4.0%");
  CHECK(pages::signed_percent(0.99996) == "+0.0%");  // never "-0.0%"
  CHECK(pages::change_text(1.205, 1.183, 1.224) == "+20.5% (95%: +18.3% to +22.4%)");
  CHECK(pages::change_text(0.9, std::nullopt, std::nullopt) == "-10.0%");
  CHECK(pages::change_text(std::nullopt, 0.9, 1.1).empty());
  CHECK(pages::ratio_band_svg(std::nullopt, std::nullopt, std::nullopt, 0.02, "equivalent").empty());

  auto svg = pages::ratio_band_svg(1.205, 1.183, 1.224, 0.02, "slower");
  CHECK(svg.starts_with("<svg class=\"ratio-band\""));
  CHECK(svg.find("<rect class=\"band\"") != std::string::npos);
  CHECK(svg.find("<circle class=\"ratio\"") != std::string::npos);
  CHECK(svg.find("<line class=\"interval\"") != std::string::npos);
  CHECK(svg.find("band of equivalence 0.980 to 1.020") != std::string::npos);
  // The dot of a 20% slowdown lies right of the no-change line, inside the drawing.
  auto attr = [&](std::string_view element, std::string_view name) {
    auto at = svg.find(element);
    auto v = svg.find(std::string(name) + "=\"", at) + name.size() + 2;
    return std::stod(svg.substr(v, svg.find('"', v) - v));
  };
  CHECK(attr("<circle class=\"ratio\"", "cx") > attr("<line class=\"one\"", "x1"));
  CHECK(attr("<circle class=\"ratio\"", "cx") < 180);
  // A decision is a word of a closed vocabulary, but a colour is never taken from text: nothing unknown gets in.
  auto odd = pages::ratio_band_svg(0.5, 0.4, 0.6, 0.02, "\"><script>");
  CHECK(odd.find("<script>") == std::string::npos);
}

TEST_CASE("pages: an accepted run shows who accepted it; the accept marker is only on slower configurations") {
  fixture f;
  auto project = *f.db.find_project("demo");
  // The pull request's run is 20% slower in every configuration; accept it.
  store::accept_run(f.db, project.id, f.runs.back(), "maintainer", "intended <b>trade</b>", 0);
  auto view = pages::run_data(f.db, f.runs.back());
  REQUIRE(view.baseline_record.has_value());
  CHECK(view.baseline_record->source == baseline_kind::accepted);
  auto run = pages::to_json(view);
  const auto& record = run.at("baseline_record").as_object();
  CHECK(record.at("source").as_string() == "accepted");
  CHECK(record.at("accepted_by").as_string() == "maintainer");
  auto html = pages::render_page(pages::run_page(view, pages::link_style{}));
  CHECK(html.find("<strong>Accepted</strong> as the baseline of main by maintainer") != std::string::npos);
  CHECK(html.find("intended &lt;b&gt;trade&lt;/b&gt;") != std::string::npos);
  const auto& configs = run.at("configs").as_array();
  REQUIRE(!configs.empty());
  int slower = 0;
  int other = 0;
  for (const auto& c : configs) {
    const auto& o = c.as_object();
    bool is_slower = o.at("decision").as_string() == "slower";
    (is_slower ? slower : other) += 1;
    // The renamed kernel is new in this run: accepting the run accepted no slowdown of it.
    auto key = pages::parse_config(std::string(o.at("config").as_string()));
    auto history = pages::history_data(f.db, project, key, {});
    CHECK(history.accepted.size() == (is_slower ? 1u : 0u));
    std::size_t marked = 0;
    for (const auto& s : history.series) {
      for (const auto& p : s.points) marked += p.accepted_slowdown ? 1 : 0;
    }
    CHECK(marked == (is_slower ? 1u : 0u));
  }
  CHECK(slower > 0);
  CHECK(other > 0);
}

TEST_CASE("pages: / lists the public projects and the caller's own; a refused comparison links to its runs") {
  fixture f;
  auto anonymous = f.get("/");
  CHECK(anonymous.result_int() == 200);
  CHECK(is_html(anonymous));
  CHECK(anonymous.body().find("href=\"/projects/demo\"") == std::string::npos);  // private, no token
  CHECK(anonymous.body().find("rnx-server admin project create NAME") != std::string::npos);
  auto signed_in = f.get("/", f.token);
  CHECK(signed_in.body().find("href=\"/projects/demo\"") != std::string::npos);
  CHECK(signed_in.body().find("href=\"/projects/other\"") == std::string::npos);
  f.db.set_project_public("other", true);
  CHECK(f.get("/").body().find("href=\"/projects/other\"") != std::string::npos);

  auto same_env = f.get("/compare?runs=" + std::to_string(f.runs[0]) + "," + std::to_string(f.runs[2]), f.token);
  CHECK(same_env.result_int() == 400);
  CHECK(same_env.body().find("href=\"/runs/" + std::to_string(f.runs[0]) + "\"") != std::string::npos);
  CHECK(same_env.body().find("href=\"/runs/" + std::to_string(f.runs[2]) + "\"") != std::string::npos);
  auto unauthorized = f.get("/projects/demo");
  CHECK(unauthorized.result_int() == 404);
  CHECK(unauthorized.body().find("rnx-server admin project visibility demo public") != std::string::npos);
}

TEST_CASE("trend names round trip and refuse unknown ones; page kinds keep their data-kind names") {
  for (auto t : {pages::trend_kind::slower, pages::trend_kind::faster, pages::trend_kind::flat}) {
    CHECK(pages::trend_kind_from_string(to_string(t)) == t);
  }
  CHECK_FALSE(pages::trend_kind_from_string("").has_value());
  CHECK_FALSE(pages::trend_kind_from_string("up").has_value());
  std::set<std::string> names;
  for (auto k : {pages::page_kind::landing, pages::page_kind::overview, pages::page_kind::history,
                 pages::page_kind::run, pages::page_kind::compare, pages::page_kind::error}) {
    CHECK(names.insert(std::string(to_string(k))).second);
  }
  CHECK(names == std::set<std::string>{"landing", "overview", "history", "run", "compare", "error"});
}

namespace {

// A run in environment env-c with one configuration (kernel0/eager/float32/b1) measured in three processes whose
// medians are `medians` (20 samples each, 0.1% apart), unstable with `reason` when given.
run_document three_process_run(const std::string& commit, const std::vector<double>& medians,
                               const std::string& reason = "") {
  run_spec s;
  s.commit = commit;
  s.env_id = "env-c";
  s.kernels = 1;
  s.batches = 1;
  auto doc = make_run(s);
  auto& r = doc.results.front();
  r.samples_ms.clear();
  r.groups.clear();
  for (double m : medians) {
    for (int i = 0; i < 20; ++i) r.samples_ms.push_back(m * (1.0 + 0.001 * (i - 10)));
    r.groups.push_back(20);
  }
  r.unstable = !reason.empty();
  r.message = reason;
  return doc;
}

// The number a page shows, as the gate's terminal prints it (4 significant digits).
std::string printed(double ms) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g ms", ms);
  return buffer;
}

}  // namespace

TEST_CASE("pages: one number everywhere; an unstable run is flagged on the run page, overview, history and compare") {
  fixture f;
  auto project = *f.db.find_project("demo");
  store::upload_run(f.db, project.id, three_process_run("steady", {0.080, 0.081, 0.079}));
  const std::string reason = "process medians differ by 300x (0.079 to 23.99 ms)";
  auto unstable_id =
      store::upload_run(f.db, project.id, three_process_run("noisy", {0.080, 23.99, 0.079}, reason)).run.id;
  auto judged = store::judge_stored_run(f.db, unstable_id, gate_policy{});
  REQUIRE(judged.verdict.configs.size() == 1);
  const double gate_ms = judged.verdict.configs[0].head_ms.value();
  // The gate's statistic: each process's median, geometric mean over the processes (not the pooled median 0.08).
  CHECK(gate_ms == doctest::Approx(std::cbrt(0.080 * 23.99 * 0.079)).epsilon(0.002));
  const std::string id = std::to_string(unstable_id);

  // The run page and its JSON.
  auto run = pages::run_data(f.db, unstable_id);
  REQUIRE(run.configs.size() == 1);
  REQUIRE(run.configs[0].head.has_value());
  CHECK(run.configs[0].head->number.ms == gate_ms);
  CHECK(run.configs[0].head->number.unstable);
  CHECK(run.configs[0].head->number.unstable_reason == reason);
  auto run_html = f.get("/runs/" + id, f.token).body();
  CHECK(run_html.find("head " + printed(gate_ms)) != std::string::npos);
  CHECK(run_html.find("measured unstable") != std::string::npos);
  CHECK(run_html.find(reason) != std::string::npos);
  auto evidence = json::parse(f.get("/api/v1/runs/" + id + "/evidence", f.token).body(), "e");
  CHECK(evidence.at("configs").as_array()[0].at("head").at("stat_ms").as_double() == gate_ms);
  CHECK(evidence.at("configs").as_array()[0].at("head").at("unstable") == true);
  CHECK(!evidence.at("statistic").as_string().empty());

  // The overview: the baseline number of env-c is the gate's, flagged.
  auto overview = json::parse(f.get("/api/v1/projects/demo/overview", f.token).body(), "o");
  bool seen = false;
  for (const auto& c : overview.at("configs").as_array()) {
    if (c.at("config") != "kernel0/eager/float32/b1") continue;
    for (const auto& s : c.at("series").as_array()) {
      if (s.at("env_id") != "env-c") continue;
      seen = true;
      CHECK(s.at("baseline").at("stat_ms").as_double() == gate_ms);
      CHECK(s.at("baseline").at("unstable") == true);
      CHECK(s.at("baseline").at("unstable_reason").as_string() == reason);
    }
  }
  CHECK(seen);
  auto overview_html = f.get("/projects/demo", f.token).body();
  CHECK(overview_html.find(printed(gate_ms)) != std::string::npos);
  CHECK(overview_html.find("unstable") != std::string::npos);

  // The history: its point is the gate's number, flagged.
  auto history = json::parse(
      f.get("/api/v1/projects/demo/configs/kernel0%2Feager%2Ffloat32%2Fb1/history?env_id=env-c", f.token).body(), "h");
  const auto& points = history.at("series").as_array()[0].at("points").as_array();
  REQUIRE(points.size() == 2);
  CHECK(points[1].at("run_id").as_string() == id);
  CHECK(points[1].at("stat_ms").as_double() == gate_ms);
  CHECK(points[1].at("unstable") == true);
  CHECK(points[0].at("unstable") == false);

  // The comparison: the gate's number, a warning in place of an interval.
  auto compare_json =
      json::parse(f.get("/api/v1/compare?runs=" + std::to_string(f.runs[0]) + "," + id, f.token).body(), "c");
  for (const auto& c : compare_json.at("configs").as_array()) {
    if (c.at("config") != "kernel0/eager/float32/b1") continue;
    const auto& cell = c.at("cells").as_array()[1];
    CHECK(cell.at("stat_ms").as_double() == gate_ms);
    CHECK(cell.at("unstable") == true);
    CHECK(cell.at("ratio_lo").is_null());
  }
  auto compare_html = f.get("/compare?runs=" + std::to_string(f.runs[0]) + "," + id, f.token).body();
  CHECK(compare_html.find("unstable: no interval") != std::string::npos);
  CHECK(compare_html.find(reason) != std::string::npos);
  CHECK(compare_html.find(printed(gate_ms).substr(0, 6)) != std::string::npos);
}

TEST_CASE("pages: an unstable side's reason is one line on the run and compare pages, its process list folded") {
  fixture f;
  auto project = *f.db.find_project("demo");
  store::upload_run(f.db, project.id, three_process_run("steady", {0.080, 0.081, 0.079}));
  // The runner's message: it starts with "unstable: " itself and lists what each process went through.
  std::string notes;
  for (int p = 1; p <= 3; ++p) {
    notes += (p > 1 ? "; " : "") + std::string("process ") + std::to_string(p) +
             ": 0 involuntary context switches, 3 migrations, 12 minor faults, ran on cpus 0-1";
  }
  const std::string reason =
      "unstable: process medians disagree: 0.08, 17.9, 0.079 ms (max/min 227x) while each process varies only ~0.10%; "
      "rerun on a quieter machine [" +
      notes + "]";
  const auto id = store::upload_run(f.db, project.id, three_process_run("noisy", {0.080, 17.9, 0.079}, reason)).run.id;
  store::judge_stored_run(f.db, id, gate_policy{});

  const std::string run_html = f.get("/runs/" + std::to_string(id), f.token).body();
  CHECK(run_html.find("unstable: unstable:") == std::string::npos);
  // The reason column says the instability once, on its line, without the process list ...
  const auto reason_at = run_html.find("<td class=\"reason\">head is unstable (process medians disagree: 0.08, 17.9");
  REQUIRE(reason_at != std::string::npos);
  const auto row_end = run_html.find("</tr>", reason_at);
  const std::string cell = run_html.substr(reason_at, row_end - reason_at);
  CHECK(cell.find("rerun on a quieter machine); head 5-95%") != std::string::npos);
  // ... which is folded beneath it, under a one-line summary.
  const auto folded = cell.find(
      "<details class=\"unstable-note\"><summary>&#9888; head: what each process went "
      "through</summary>[process 1: 0 involuntary");
  REQUIRE(folded != std::string::npos);
  CHECK(cell.find("[process 1") == cell.find("[process 1", folded));
  CHECK(cell.find("process 3: 0 involuntary") < cell.find("</details>"));

  const std::string compare_html =
      f.get("/compare?runs=" + std::to_string(f.runs[0]) + "," + std::to_string(id), f.token).body();
  CHECK(compare_html.find("unstable: unstable:") == std::string::npos);
  CHECK(compare_html.find("kernel0/eager/float32/b1: unstable: process medians disagree") != std::string::npos);
  CHECK(compare_html.find("<details class=\"unstable-note\">") != std::string::npos);

  // The one-line form alone: no prefix twice, cut at a word past 160 characters.
  store::run_number n;
  n.unstable = true;
  n.unstable_reason = "unstable: bimodal";
  CHECK(pages::unstable_text(n) == "unstable: bimodal");
  n.unstable_reason = std::string(40, 'x') + std::string(50, ' ') + std::string(200, 'y');
  CHECK(pages::unstable_summary(n).size() <= 160);
}

TEST_CASE("pages: the band chart's axis is a log axis clamped to what a ratio can be") {
  // A 4x slowdown with a wide interval: the axis reaches beyond it, never below -100%.
  auto svg = pages::ratio_band_svg(4.0, 3.5, 4.6, 0.02, "slower");
  CHECK(svg.find("-445") == std::string::npos);
  CHECK(svg.find(">-8") != std::string::npos);  // the left end: 1 / 4.6^1.15 is about -83% to -85%
  CHECK(svg.find("class=\"clipped\"") == std::string::npos);
  // An interval past 10x either way is clipped at the axis and marked with an arrow.
  auto wide = pages::ratio_band_svg(1.0, 0.01, 50.0, 0.02, "abstain");
  CHECK(wide.find("class=\"clipped\"") != std::string::npos);
  CHECK(wide.find(">-90.0%<") != std::string::npos);
  CHECK(wide.find(">+900.0%<") != std::string::npos);
}

namespace {

// Ends the grace period of every rotated token in the store at `db_path`: as if its end had passed.
void end_grace_periods(const std::string& db_path) {
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(db_path.c_str(), &raw) == SQLITE_OK);
  REQUIRE(sqlite3_exec(raw, "UPDATE tokens SET expires_at = '2026-01-02T03:04:05Z' WHERE expires_at IS NOT NULL",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
}

}  // namespace

TEST_CASE("an expired token is told when it ended and how to make one for its project, only to its holder") {
  fixture f;
  auto rotated = f.db.rotate_token(f.token, std::chrono::seconds(3600));
  end_grace_periods(f.db_path);
  const std::string said =
      "expired at 2026-01-02T03:04:05Z (it was rotated and its grace period ended); make a new "
      "one for project demo with `rnx-server admin token create --project demo`";
  // The API: the holder of the expired token.
  auto api = f.get("/api/v1/projects/demo/runs", f.token);
  CHECK(api.result_int() == 401);
  CHECK(api.body().find("the bearer token " + said) != std::string::npos);
  // Another malformed or unknown token learns nothing about any project.
  auto unknown = f.get("/api/v1/projects/demo/runs", "rnx_0123456789ab_" + std::string(48, '0'));
  CHECK(unknown.result_int() == 401);
  CHECK(unknown.body().find("not valid (unknown, revoked or mistyped)") != std::string::npos);
  CHECK(unknown.body().find("demo") == std::string::npos);
  // The same public id with another secret is not the holder: no project named.
  std::string forged = f.token.substr(0, f.token.size() - 4) + "ffff";
  if (forged == f.token) forged = f.token.substr(0, f.token.size() - 4) + "eeee";
  auto wrong_secret = f.get("/api/v1/projects/demo/runs", forged);
  CHECK(wrong_secret.body().find("expired") == std::string::npos);
  CHECK(wrong_secret.body().find("project demo") == std::string::npos);
  // The pages: the expired cookie is told why it no longer reads its own project.
  auto mine = f.get("/projects/demo", "", "rnx_token=" + f.token);
  CHECK(mine.result_int() == 404);
  CHECK(mine.body().find("The token this request carries " + pages::escape_html(said)) != std::string::npos);
  // Another private project and an unknown one still answer alike (404; the only project named is the token's own).
  auto other = f.get("/projects/other", "", "rnx_token=" + f.token);
  auto nobody = f.get("/projects/nope", "", "rnx_token=" + f.token);
  CHECK(other.result_int() == 404);
  CHECK(answer_without(other, {"other"}) == answer_without(nobody, {"nope"}));
  // An anonymous caller is never told of the expired token's project.
  auto anonymous = f.get("/projects/nope");
  CHECK(anonymous.body().find("expired") == std::string::npos);
  // Signing in with it says the same.
  service::request login{http::verb::post, "/login", 11};
  login.set(http::field::content_type, "application/x-www-form-urlencoded");
  login.body() = "token=" + f.token;
  login.prepare_payload();
  auto refused = f.api.handle_request(login);
  CHECK(refused.result_int() == 401);
  CHECK(refused.body().find("that token " + pages::escape_html(said)) != std::string::npos);
  // The new token works.
  CHECK(f.get("/projects/demo", rotated.replacement.token).result_int() == 200);
}

TEST_CASE("schema 7 -> 8: results stored before keep their run statistic and get their unstable flag back") {
  test::temp_dir dir;
  std::string path = dir.file("rnx.sqlite");
  std::int64_t noisy = 0;
  {
    store::database db(path);
    auto project = db.ensure_project("demo");
    store::upload_run(db, project.id, three_process_run("steady", {0.080, 0.081, 0.079}));
    noisy = store::upload_run(db, project.id, three_process_run("noisy", {0.080, 23.99, 0.079}, "bimodal")).run.id;
  }
  {
    // Back to the version 7 layout: no interval of the run statistic, no unstable flag; version 8 not recorded.
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
    REQUIRE(sqlite3_exec(raw,
                         (std::string(test::undo_schema_8) + "DELETE FROM schema_version WHERE version >= 8").c_str(),
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(raw);
  }
  store::database db(path);
  CHECK(db.schema_version() == store::current_schema_version);
  auto project = *db.find_project("demo");
  auto points = db.config_history(project.id, {"kernel0", "eager", "float32", 1}, {});
  REQUIRE(points.size() == 2);
  CHECK_FALSE(points[0].number.unstable);
  CHECK(points[1].run_id == noisy);
  CHECK(points[1].number.unstable);
  CHECK(points[1].number.unstable_reason == "bimodal");
  // The statistic the verdict compares, kept since version 5; its interval was not, so none is drawn.
  CHECK(points[1].number.ms == doctest::Approx(std::cbrt(0.080 * 23.99 * 0.079)).epsilon(0.002));
  CHECK_FALSE(points[1].number.lo_ms.has_value());
}

TEST_CASE("pages: a run view read back from its JSON renders the same page (rnx gate renders the service's JSON)") {
  fixture f;
  auto view = pages::run_data(f.db, f.runs.back());
  const auto json_text = json::serialize(pages::to_json(view));
  auto read = pages::run_view_from_json(json::parse(json_text, "evidence").as_object());
  CHECK(json::serialize(pages::to_json(read)) == json_text);
  CHECK(pages::run_page(read, pages::link_style{}).body == pages::run_page(view, pages::link_style{}).body);
}

TEST_CASE("pages: the server's run page marks an upload's peaks and clocks as reported, not measured") {
  fixture f;
  run_spec s;
  s.commit = "claims";
  s.seed = 42;
  auto doc = make_run(s);
  // The document claims locked clocks and peaks; the server measured neither.
  doc.env.clocks = {{"locked", 1}};
  doc.env.peaks = {{gemm_peak_name("float32"), 1e12}, {std::string(copy_peak_name), 1e11}};
  for (auto& r : doc.results)
    r.work = work_info{std::int64_t{2'000'000'000}, std::int64_t{8'000'000}, work_source::counted};
  const auto id = store::upload_run(f.db, f.db.find_project("demo")->id, doc).run.id;
  auto page = f.get("/runs/" + std::to_string(id), f.token);
  REQUIRE(page.result_int() == 200);
  CHECK(page.body().find("of the reported peak") != std::string::npos);
  CHECK(page.body().find("of the measured peak") == std::string::npos);
  CHECK(page.body().find("the server did not measure them") != std::string::npos);
  auto evidence = f.get("/api/v1/runs/" + std::to_string(id) + "/evidence", f.token);
  REQUIRE(evidence.result_int() == 200);
  auto view = pages::run_view_from_json(json::parse(evidence.body(), "evidence").as_object());
  CHECK(view.figures == pages::figure_source::reported);
  // `rnx gate` renders the server's evidence: still reported there.
  CHECK(pages::run_page(view, pages::link_style{}).body.find("of the reported peak") != std::string::npos);
  // A run rnx measured itself (the embedded store of `rnx gate`) keeps "measured".
  CHECK(pages::run_page(pages::run_data(f.db, id), pages::link_style{}).body.find("of the measured peak") !=
        std::string::npos);
}
