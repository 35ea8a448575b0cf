// The run page's "Why the time moved": the explanation a paired verdict carries, kept by the store when it derives
// the verdict again, drawn as tables (names escaped), and absent where nothing was explained.
#include "service_test_support.hpp"

#include "rnx/common/explanation_report.hpp"
#include "rnx/common/json.hpp"
#include "rnx/service/pages.hpp"
#include "rnx/service/verdicts.hpp"
#include "rnx/stats/verdict.hpp"

#include <doctest/doctest.h>

using namespace rnx;
using namespace rnx::test;

namespace {

// The demo's slowed pull request as the gate explains it: torch.softmax's two operators replaced by five.
explanation four_pass_softmax() {
  explanation e;
  e.profiler = "libtorch profiler";
  e.ranked_by = "self CPU time";
  e.profiled_calls = 10;
  e.base_ms = 0.12;
  e.head_ms = 0.3;
  e.cost_s = 3.8;
  e.count_threshold = 0.01;
  e.changes = {{"aten::exp", change_kind::added, 0, 1, 0, 0.12, 0.4},
               {"aten::_softmax", change_kind::removed, 1, 0, 0.1, 0, -0.1 / 0.12},
               {"<b>odd</b>", change_kind::added, 0, 1, 0, 0.06, 0.2}};
  e.counts = {{count_kind::operator_calls, 2.0, 5.0}};
  e.counts_moved = true;
  return e;
}

struct paired_fixture {
  temp_dir dir;
  std::string db_path = dir.file("rnx.sqlite");
  std::string token = make_token(db_path, "demo");
  store::database db{db_path};
  std::int64_t project = db.find_project("demo")->id;
  std::int64_t base_id = 0;
  std::int64_t head_id = 0;
  verdict_document decided;

  paired_fixture() {
    run_spec b;
    b.branch = "main";
    b.commit = "base";
    b.seed = 1;
    run_spec h;
    h.branch = "feature";
    h.pull_request = 7;
    h.commit = "head";
    h.scale = 2.0;
    h.seed = 2;
    const run_document base = make_run(b);
    const run_document head = make_run(h);
    base_id = store::upload_run(db, project, base).run.id;
    head_id = store::upload_run(db, project, head).run.id;
    decided = stats::judge_runs(base, head, gate_policy{}, 1);
  }
};

}  // namespace

TEST_CASE("pages: a paired verdict's explanation is kept by the store and drawn on the run page") {
  paired_fixture f;
  REQUIRE(!f.decided.configs.empty());
  REQUIRE(f.decided.configs[0].result == decision::slower);
  attach_explanation(f.decided.configs[0], four_pass_softmax());
  const auto judged = store::record_paired_verdict(f.db, f.project, f.head_id, f.base_id, gate_policy{}, f.decided);
  REQUIRE(judged.verdict.configs[0].explanation);
  CHECK(judged.verdict.configs[0].explanation->changes.size() == 3);
  // Only the configuration the gate explained carries one.
  for (std::size_t i = 1; i < judged.verdict.configs.size(); ++i) CHECK_FALSE(judged.verdict.configs[i].explanation);

  const auto view = pages::run_data(f.db, f.head_id);
  const std::string html = pages::render_page(pages::run_page(view, pages::link_style{}));
  const auto section = html.find("<h2>Why the time moved</h2>");
  REQUIRE(section != std::string::npos);
  const std::string rest = html.substr(section);
  CHECK(rest.find("<details class=\"explain\" open><summary><code>" + f.decided.configs[0].key.label()) !=
        std::string::npos);
  CHECK(rest.find("<td><code>aten::exp</code></td><td>added</td>") != std::string::npos);
  CHECK(rest.find("40% of the added time") != std::string::npos);
  CHECK(rest.find("83% of the time saved") != std::string::npos);
  CHECK(rest.find("<td>operator calls</td><td class=\"num\">2</td><td class=\"num\">5</td><td class=\"num\">+150.0%") !=
        std::string::npos);
  CHECK(rest.find("Profiling took 3.8 s") != std::string::npos);
  CHECK(rest.find("&lt;b&gt;odd&lt;/b&gt;") != std::string::npos);
  CHECK(rest.find("<b>odd</b>") == std::string::npos);
  // The page read back from its JSON (rnx report, the gate's report.html) draws the same section.
  const auto read =
      pages::run_view_from_json(json::parse(json::serialize(pages::to_json(view)), "evidence").as_object());
  CHECK(pages::run_page(read, pages::link_style{}).body == pages::run_page(view, pages::link_style{}).body);
}

TEST_CASE("pages: no explanation, no section") {
  paired_fixture f;
  (void)store::record_paired_verdict(f.db, f.project, f.head_id, f.base_id, gate_policy{}, f.decided);
  const std::string html = pages::render_page(pages::run_page(pages::run_data(f.db, f.head_id), pages::link_style{}));
  CHECK(html.find("Why the time moved") == std::string::npos);
}
