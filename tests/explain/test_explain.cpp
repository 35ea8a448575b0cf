// The profile diff and its counts, the explaining step with injected tools and clock, ncu's CSV, and the
// explanation's JSON and renderings.
#include "rnx/common/error.hpp"
#include "rnx/common/explanation_report.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/report.hpp"
#include "rnx/explain/diff.hpp"
#include "rnx/explain/explain.hpp"
#include "rnx/explain/ncu.hpp"

#include <doctest/doctest.h>

#include <map>
#include <sstream>

using namespace rnx;

namespace {

optimize::op_profile profile(const std::vector<std::pair<std::string, std::pair<int, double>>>& rows, int calls,
                             bool gpu = false) {
  optimize::op_profile p;
  p.source = "libtorch profiler";
  p.ranked_by = gpu ? "GPU kernel time" : "self CPU time";
  p.profiled_calls = calls;
  for (const auto& [name, r] : rows) {
    optimize::op_row row;
    row.name = name;
    row.calls = r.first;
    row.self_ms = r.second;
    p.ops.push_back(row);
    p.wall_ms += r.second;
  }
  return p;
}

// The demo's pull request on a CPU: torch.softmax (two operators a call) swapped for four passes (five).
optimize::op_profile fused() { return profile({{"aten::softmax", {10, 0.2}}, {"aten::_softmax", {10, 1.0}}}, 10); }
optimize::op_profile four_pass() {
  return profile({{"aten::max", {10, 0.6}},
                  {"aten::sub", {10, 0.5}},
                  {"aten::exp", {10, 1.2}},
                  {"aten::sum", {10, 0.3}},
                  {"aten::div", {10, 0.4}}},
                 10);
}

const count_change* count_of(const explanation& e, count_kind k) {
  for (const auto& c : e.counts) {
    if (c.kind == k) return &c;
  }
  return nullptr;
}

config_verdict config(decision d, const std::string& kernel = "softmax") {
  config_verdict c;
  c.key = {kernel, "eager", "float32", 8};
  c.result = d;
  return c;
}

}  // namespace

TEST_CASE("the four-pass softmax: the extra operators named with their share of the added time") {
  const explanation e = explain::diff_profiles(fused(), four_pass(), 0.01);
  REQUIRE(e.changes.size() == 7);
  // Added and removed rows rank before time alone; among them, by the time they moved.
  CHECK(e.changes[0].name == "aten::exp");
  CHECK(e.changes[0].kind == change_kind::added);
  CHECK(e.changes[0].head_calls == doctest::Approx(1));
  CHECK(e.changes[0].head_ms == doctest::Approx(0.12));
  // Added time: 0.3 ms a call over five new operators; exp's 0.12 of it is 40%.
  CHECK(e.changes[0].share == doctest::Approx(0.4));
  CHECK(e.changes[1].name == "aten::_softmax");
  const auto removed =
      std::find_if(e.changes.begin(), e.changes.end(), [](const op_change& c) { return c.name == "aten::_softmax"; });
  REQUIRE(removed != e.changes.end());
  CHECK(removed->kind == change_kind::removed);
  CHECK(removed->share == doctest::Approx(-0.1 / 0.12));
  CHECK(e.base_ms == doctest::Approx(0.12));
  CHECK(e.head_ms == doctest::Approx(0.3));
  const auto* calls = count_of(e, count_kind::operator_calls);
  REQUIRE(calls);
  CHECK(*calls->base == 2);
  CHECK(*calls->head == 5);
  CHECK(*calls->change() == doctest::Approx(1.5));
  CHECK(e.counts_moved);
  const auto lines = top_lines(e, 5);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == "aten::exp added: 1 call, 0.12 ms a call, 40% of the added time");
  // A slower time with the work moved needs no word from the counts.
  CHECK(counts_reason(decision::slower, e).empty());
}

TEST_CASE("time rows: kept where they moved beyond the profiler's jitter, dropped where not") {
  const auto base = profile({{"aten::mm", {10, 5.0}}, {"aten::add", {10, 0.5}}}, 10);
  const auto head = profile({{"aten::mm", {10, 6.0}}, {"aten::add", {10, 0.51}}}, 10);
  const explanation e = explain::diff_profiles(base, head, 0.01);
  REQUIRE(e.changes.size() == 1);
  CHECK(e.changes[0].name == "aten::mm");
  CHECK(e.changes[0].kind == change_kind::time);
  CHECK_FALSE(e.counts_moved);
  CHECK(counts_reason(decision::slower, e) ==
        "slower, yet no count of work moved by more than 1% (operator calls): a clock, placement or contention "
        "change rather than more work");
  CHECK(counts_reason(decision::abstain, e).empty());
}

TEST_CASE("a GPU profile: one more kernel launch a call is a call-count row and the launch count moves") {
  const auto base = profile({{"gemm_kernel", {10, 2.0}}, {"fill_kernel", {10, 0.1}}}, 10, true);
  const auto head = profile({{"gemm_kernel", {10, 2.0}}, {"fill_kernel", {20, 0.2}}}, 10, true);
  explanation e = explain::diff_profiles(base, head, 0.01);
  REQUIRE(!e.changes.empty());
  CHECK(e.changes[0].name == "fill_kernel");
  CHECK(e.changes[0].kind == change_kind::calls);
  const auto* launches = count_of(e, count_kind::kernel_launches);
  REQUIRE(launches);
  CHECK(*launches->base == 2);
  CHECK(*launches->head == 3);
  CHECK(count_of(e, count_kind::operator_calls) == nullptr);
  CHECK(counts_reason(decision::abstain, e) ==
        "the time abstains, but a count of work moved by more than 1% (kernel launches +50.0%): the head does "
        "different work");
}

TEST_CASE("counts: the work of the run documents is shown but is not a count of what the head executed") {
  explanation e = explain::diff_profiles(fused(), fused(), 0.01);
  run_result b, h;
  b.work = work_info{100, 4096, work_source::counted};
  h.work = work_info{200, 4096, work_source::counted};
  explain::add_work_counts(e, &b, &h);
  REQUIRE(count_of(e, count_kind::flops));
  CHECK(*count_of(e, count_kind::flops)->change() == doctest::Approx(1.0));
  CHECK_FALSE(e.counts_moved);
  explain::set_count(e, {count_kind::dram_bytes_read, 1000.0, 2000.0});
  CHECK(e.counts_moved);
  explanation none = explain::diff_profiles(fused(), fused(), 0.01);
  b.work = work_info{0, 4096, work_source::counted};
  h.work = work_info{0, 4096, work_source::counted};
  explain::add_work_counts(none, &b, &h);
  CHECK(count_of(none, count_kind::flops) == nullptr);  // no FLOPs on either side: left out
  CHECK(count_of(none, count_kind::bytes) != nullptr);
  explain::set_count(e, {count_kind::dram_bytes_read, 1000.0, 1005.0});
  CHECK_FALSE(e.counts_moved);  // 0.5% is under the 1% threshold
}

TEST_CASE("explain_verdict: the scope picks, the decisions stay, the budget bounds, failures are said") {
  verdict_document v;
  v.configs = {config(decision::slower, "a"), config(decision::equivalent, "b"), config(decision::abstain, "c"),
               config(decision::slower, "d")};
  std::map<std::string, int> profiled;
  double clock = 0;
  explain::tools t;
  t.now_s = [&] { return clock; };
  t.profile = [&](const explain::profile_job& job) {
    profiled[job.key.kernel] += 1;
    clock += 20;  // each side's worker takes 20 s of the injected clock
    if (job.key.kernel == "c") throw error(errc::kernel_failed, "the kernel raised");
    return job.manifest == "base.toml" ? fused() : four_pass();
  };
  explain_settings settings;
  settings.budget_s = 50;
  const explain::sides s{"base.toml", "head.toml", nullptr, nullptr};
  const verdict_document out = explain::explain_verdict(v, s, settings, t);
  REQUIRE(out.configs.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(out.configs[i].result == v.configs[i].result);
  REQUIRE(out.configs[0].explanation);
  CHECK(out.configs[0].explanation->status == explain_status::explained);
  CHECK(out.configs[0].explanation->cost_s == doctest::Approx(40));
  CHECK_FALSE(out.configs[1].explanation);  // equivalent: not asked
  CHECK(profiled.count("b") == 0);
  REQUIRE(out.configs[2].explanation);
  CHECK(out.configs[2].explanation->status == explain_status::failed);
  CHECK(out.configs[2].explanation->note.find("the kernel raised") != std::string::npos);
  REQUIRE(out.configs[3].explanation);  // 60 s spent by then, over the 50 s budget
  CHECK(out.configs[3].explanation->status == explain_status::over_budget);
  CHECK(out.configs[3].explanation->note.find("explain_budget_s") != std::string::npos);
  CHECK(profiled.count("d") == 0);

  settings.scope = explain_scope::all;
  settings.budget_s = 1000;
  profiled.clear();
  const verdict_document all = explain::explain_verdict(v, s, settings, t);
  CHECK(profiled["b"] == 2);
  REQUIRE(all.configs[1].explanation);
  settings.scope = explain_scope::off;
  const verdict_document none = explain::explain_verdict(v, s, settings, t);
  for (const auto& c : none.configs) CHECK_FALSE(c.explanation);
}

TEST_CASE("an abstaining configuration whose count moved: its reason says so") {
  verdict_document v;
  v.configs = {config(decision::abstain)};
  v.configs[0].reason = "undecided";
  explain::tools t;
  t.now_s = [] { return 0.0; };
  t.profile = [](const explain::profile_job& job) { return job.manifest == "base.toml" ? fused() : four_pass(); };
  const verdict_document out = explain::explain_verdict(v, {"base.toml", "head.toml"}, explain_settings{}, t);
  CHECK(out.configs[0].reason ==
        "undecided; the time abstains, but a count of work moved by more than 1% (operator calls +150.0%): the head "
        "does different work");
  CHECK(out.configs[0].result == decision::abstain);
}

TEST_CASE("Nsight Compute: counters of each side beside the profile, or why not") {
  verdict_document v;
  v.configs = {config(decision::slower)};
  explain::tools t;
  t.now_s = [] { return 0.0; };
  t.profile = [](const explain::profile_job&) { return fused(); };
  t.counters = [](const explain::profile_job& job, std::string&) -> std::optional<explain::ncu_counts> {
    explain::ncu_counts c;
    c.kernels = 1;
    c.dram_bytes_read = job.manifest == "base.toml" ? 1 << 20 : 2 << 20;
    c.dram_bytes_written = 1 << 20;
    c.instructions = 5000;
    return c;
  };
  explain_settings settings;
  settings.ncu = true;
  verdict_document out = explain::explain_verdict(v, {"base.toml", "head.toml"}, settings, t);
  const explanation& e = *out.configs[0].explanation;
  REQUIRE(count_of(e, count_kind::dram_bytes_read));
  CHECK(*count_of(e, count_kind::dram_bytes_read)->change() == doctest::Approx(1.0));
  CHECK(e.counts_moved);
  CHECK(e.profiler.find("Nsight Compute") != std::string::npos);

  t.counters = [](const explain::profile_job&, std::string& why) -> std::optional<explain::ncu_counts> {
    why = "Nsight Compute (ncu) is not on PATH";
    return std::nullopt;
  };
  out = explain::explain_verdict(v, {"base.toml", "head.toml"}, settings, t);
  CHECK(out.configs[0].explanation->note.find("not on PATH") != std::string::npos);
  CHECK(count_of(*out.configs[0].explanation, count_kind::dram_bytes_read) == nullptr);
}

TEST_CASE("ncu's CSV: kernels summed, units row and ==PROF== lines skipped, separators tolerated") {
  const std::string csv =
      "==PROF== Connected to process 1234\n"
      "\"ID\",\"Kernel Name\",\"dram__bytes_read.sum\",\"dram__bytes_write.sum\",\"smsp__inst_executed.sum\"\n"
      "\"\",\"\",\"byte\",\"byte\",\"inst\"\n"
      "\"0\",\"vectorized_elementwise_kernel<4, \"\"x\"\">\",\"1,048,576\",\"524288\",\"65536\"\n"
      "\"1\",\"reduce_kernel\",\"4096\",\"0\",\"1024\"\n";
  const explain::ncu_counts c = explain::parse_ncu_csv(csv, "ncu.csv");
  CHECK(c.kernels == 2);
  CHECK(c.dram_bytes_read == 1048576 + 4096);
  CHECK(c.dram_bytes_written == 524288);
  CHECK(c.instructions == 65536 + 1024);
  CHECK_THROWS_AS(explain::parse_ncu_csv("==ERROR== no kernels were profiled\n", "ncu.csv"), error);
  CHECK_THROWS_AS(explain::parse_ncu_csv(csv + "\"2\",\"k\",\"lots\",\"1\",\"1\"\n", "ncu.csv"), error);
  const auto argv = explain::ncu_argv("ncu", "/tmp/r.csv", {"worker", "a"});
  CHECK(argv.back() == "a");
  CHECK(std::find(argv.begin(), argv.end(), "--profile-from-start") != argv.end());
}

TEST_CASE("the explanation in the verdict document: JSON both ways and the folded Markdown block") {
  verdict_document v;
  v.configs = {config(decision::slower), config(decision::equivalent, "layernorm")};
  explanation e = explain::diff_profiles(fused(), four_pass(), 0.01);
  e.cost_s = 4.5;
  v.configs[0].explanation = e;
  const verdict_document back = verdict_from_json(to_json(v), "test");
  REQUIRE(back.configs[0].explanation);
  CHECK(json::serialize(to_json(*back.configs[0].explanation)) == json::serialize(to_json(e)));
  CHECK_FALSE(back.configs[1].explanation);
  const std::string md = render_verdict_markdown(back);
  CHECK(md.find("<details><summary>Why slower: softmax/eager/float32/b8 (explained)</summary>") != std::string::npos);
  CHECK(md.find("1. aten::exp added: 1 call, 0.12 ms a call, 40% of the added time") != std::string::npos);
  CHECK(md.find("6. ") == std::string::npos);  // the top five only
  CHECK(md.find("operator calls 2 -\\> 5 \\(+150.0%\\)") != std::string::npos);
  CHECK(md.find("profiling took 4.5 s") != std::string::npos);
  CHECK(md.find("layernorm/eager/float32/b8 (") == std::string::npos);
  const std::string text = render_verdict_text(back);
  CHECK(text.find("  1. aten::exp added") != std::string::npos);
  CHECK(text.find("  count: operator calls 2 -> 5 (+150.0%)") != std::string::npos);
}

TEST_CASE("an operator name is data in the Markdown") {
  verdict_document v;
  v.configs = {config(decision::slower)};
  explanation e = explain::diff_profiles(fused(), profile({{"<img src=x>|**bold**", {10, 3.0}}}, 10), 0.01);
  v.configs[0].explanation = e;
  const std::string md = render_explanations_markdown(v);
  CHECK(md.find("\\<img src=x\\>\\|\\*\\*bold\\*\\*") != std::string::npos);
  CHECK(md.find("**bold**") == std::string::npos);
}
