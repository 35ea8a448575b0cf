// The run page's HTML from its run_view: the verdict table, the band mini-charts and the per-process sample charts.
#include "rnx/service/page_views.hpp"
#include "rnx/service/pages.hpp"

#include "pages_explain.hpp"
#include "pages_parts.hpp"

#include <algorithm>
#include <sstream>
#include <string_view>

namespace rnx::pages {

using namespace parts;

namespace {

// How a base revision was compared: a stored run, the paired gate's base revision, or nothing stored.
std::string compared_with(const run_view& v, const link_style& links, bool judged_paired) {
  if (v.base_run) {
    return link(links.run(v.base_run->id), "run " + escape_html(v.base_run->id)) + " (commit <code>" +
           escape_html(v.base_run->commit.substr(0, 12)) + "</code>)";
  }
  if (judged_paired && v.verdict && v.verdict->baseline) {
    return "the base revision <code>" + escape_html(v.verdict->baseline->id.substr(7)) + "</code> (commit <code>" +
           escape_html(v.verdict->baseline->commit.substr(0, 12)) + "</code>), measured in the same job";
  }
  return "no stored base run";
}

// A configuration's reason as HTML: the verdict's own where it gave one (anything not a plain comparison), otherwise
// the decision rule it met, in the verdict's numbers.
std::string config_reason(const config_verdict& c, const gate_policy& policy) {
  if (!c.reason.empty()) return escape_html(c.reason);
  const double needed = c.threshold.value_or(policy.probability);
  auto p = [](std::optional<double> v) { return fmt(v, "%.3f"); };
  const std::string band = fmt(policy.rope * 100, "%.3g", "%");
  const std::string rule = " &ge; " + fmt(needed, "%.3g") + ": ";
  switch (c.result) {
    case decision::slower: return "P(slower) " + p(c.p_slower) + rule + "the change lies above the +" + band + " band";
    case decision::faster: return "P(faster) " + p(c.p_faster) + rule + "the change lies below the -" + band + " band";
    case decision::equivalent:
      return "P(equivalent) " + p(c.p_equivalent) + rule + "the change lies inside the &plusmn;" + band + " band";
    default: return "";
  }
}

// The unstable sides of a row, one line each (the whole reason folded beneath); a side whose line the reason column
// quotes already shows only the fold of what its processes went through, if there is one.
std::string unstable_note(const run_config_row& c, const std::string& reason) {
  std::string out;
  for (const auto& [name, side] : {std::pair{"base", &c.base}, std::pair{"head", &c.head}}) {
    if (!*side || !(*side)->number.unstable) continue;
    const store::run_number& n = (*side)->number;
    const std::string summary = unstable_summary(n);
    constexpr std::string_view prefix = "unstable: ";
    const std::string line = summary.size() > prefix.size() ? summary.substr(prefix.size()) : "";
    const bool quoted = !line.empty() && reason.find(escape_html(line)) != std::string::npos;
    if (!quoted) {
      out += " " + unstable_folded(std::string(name) + " ", n);
    } else if (const auto list = n.unstable_reason.find(" ["); list != std::string::npos) {
      out += " <details class=\"unstable-note\"><summary>&#9888; " + std::string(name) +
             ": what each process went through</summary>" + escape_html(n.unstable_reason.substr(list + 1)) +
             "</details>";
    }
  }
  return out;
}

// "+12.3% (95%: +10.1% to +14.6%)" as two unbreakable parts that may go on two lines.
std::string change_cell(const std::string& change) {
  if (change.empty()) return "&ndash;";
  const auto split = change.find(" (");
  if (split == std::string::npos) return "<span class=\"nowrap\">" + escape_html(change) + "</span>";
  return "<span class=\"nowrap\">" + escape_html(change.substr(0, split)) + "</span> <span class=\"nowrap ci\">" +
         escape_html(change.substr(split + 1)) + "</span>";
}

// How far each measured head configuration is from the machine's limit, nearest first, as bars: a table of its own
// under the verdict's, so the verdict's table keeps its width. "" when no configuration has a speed of light.
std::string light_table(const run_view& v) {
  std::vector<const run_config_row*> rows;
  for (const auto& c : v.configs) {
    if (c.light) rows.push_back(&c);
  }
  if (rows.empty()) return "";
  std::stable_sort(rows.begin(), rows.end(), [](const run_config_row* a, const run_config_row* b) {
    return a->light->measured.fraction > b->light->measured.fraction;
  });
  std::ostringstream t;
  const bool reported = v.figures == figure_source::reported;
  t << "<table class=\"light-table\"><thead><tr><th>configuration</th><th class=\"num\">head ms</th><th class=\"num\">"
       "at 100% ms</th><th>of the "
    << to_string(v.figures) << " peak</th><th class=\"num\">of the datasheet</th></tr></thead><tbody>\n";
  for (const auto* c : rows) {
    t << "<tr><td><code>" << escape_html(c->key.label()) << "</code></td><td class=\"num\">"
      << fmt(c->head ? c->head->number.ms : std::nullopt, "%.4g") << "</td><td class=\"num\">"
      << fmt(c->light->measured.ideal_ms, "%.4g") << "</td><td>"
      << headroom_svg(c->light->measured.fraction, c->light->measured.compute_bound, c->light->error,
                      c->light->measured.elementwise)
      << "</td><td class=\"num\">" << percent(c->light->sheet_fraction) << "</td></tr>\n";
  }
  t << "</tbody></table>";
  return "<h2>How far from the limit</h2>\n<p class=\"legend\">The time the head's work of one call (counted over the "
         "eager reference, or declared) takes at this machine's " +
         std::string(reported ? "reported" : "measured") +
         " peak of its bound (flop: the dtype's matrix "
         "product, mem: a device copy), over the head's time, nearest the limit first; a bar drawn full and red is "
         "past what the machine can do by more than the peak's own measurement error (within it, the bar reads "
         "100%: at the peak). Of the datasheet: the same against the device's published figures." +
         std::string(reported ? " <span class=\"reported\">Reported: the peaks (and whether the clocks were locked) "
                                "are what the uploaded run document says; the server did not measure them.</span>"
                              : "") +
         "</p>\n" + scroll_box(t.str());
}

void verdict_row(std::ostringstream& t, const run_view& v, const run_config_row& c, const link_style& links,
                 double rope) {
  const auto* j = c.judged ? &*c.judged : nullptr;
  const std::optional<double> ratio = j ? j->ratio : std::nullopt;
  const std::optional<double> lo = j ? j->ci_lo : std::nullopt;
  const std::optional<double> hi = j ? j->ci_hi : std::nullopt;
  const std::string decision(j ? to_string(j->result) : "");
  const std::string change = change_text(ratio, lo, hi);
  std::string reason = j ? config_reason(*j, v.verdict ? v.verdict->policy : gate_policy{}) : "";
  // The head's own message (a failing run) unless the reason already quotes it; instability is said below.
  if (c.head && !c.head->message.empty() && !c.head->number.unstable &&
      reason.find(c.head->message) == std::string::npos) {
    reason += (reason.empty() ? "" : " ") + escape_html(c.head->message);
  }
  t << "<tr><td>" << link(links.config(v.project, c.key), "<code>" + escape_html(c.key.label()) + "</code>")
    << "</td><td class=\"num change\" title=\"head/base " << fmt(ratio, "%.4f") << "\">" << change_cell(change)
    << "</td><td class=\"band-cell\">" << ratio_band_svg(ratio, lo, hi, rope, decision) << "</td><td>" << chip(decision)
    << "</td><td class=\"num\">" << fmt(j ? j->p_slower : std::nullopt, "%.3f") << "</td><td class=\"num\">"
    << fmt(j ? j->p_faster : std::nullopt, "%.3f") << "</td><td class=\"num\">"
    << fmt(j ? j->p_equivalent : std::nullopt, "%.3f") << "</td><td class=\"num\">"
    << percent(j ? j->mde : std::nullopt) << "</td><td class=\"num\">"
    << (c.base ? std::to_string(c.base->n) : "&ndash;") << " / " << (c.head ? std::to_string(c.head->n) : "&ndash;")
    << "</td><td class=\"reason\">" << reason << unstable_note(c, reason) << "</td></tr>\n";
}

// "0.08331 ms in 3 processes" with the unstable badge; without the side's samples, the verdict's number alone.
std::string side_summary(const std::optional<run_side>& s, std::optional<double> verdict_ms) {
  if (!s) return verdict_ms ? fmt(verdict_ms, "%.4g", " ms") + " (samples not stored here)" : "&ndash;";
  return fmt(s->number.ms, "%.4g", " ms") + unstable_badge(s->number) + " in " + std::to_string(s->processes.size()) +
         " processes";
}

void sample_chart(std::ostringstream& charts, const run_config_row& c, std::size_t index) {
  const std::string decision(c.judged ? to_string(c.judged->result) : "");
  // Decisions a reviewer must look at open by default; the quiet ones stay folded (and undrawn) until opened.
  const auto judged = c.judged ? std::optional<rnx::decision>(c.judged->result) : std::nullopt;
  const bool open = judged == decision::slower || judged == decision::abstain || judged == decision::broken;
  std::string ratio;
  if (c.judged && c.judged->ratio) ratio = " (&times;" + fmt(c.judged->ratio, "%.3f") + ")";  // as the terminal
  charts << "<details class=\"dist\"" << (open ? " open" : "") << " data-index=\"" << index << "\"><summary><code>"
         << escape_html(c.key.label()) << "</code> " << chip(decision) << " base "
         << side_summary(c.base, c.judged ? c.judged->base_ms : std::nullopt) << ", head "
         << side_summary(c.head, c.judged ? c.judged->head_ms : std::nullopt) << ratio
         << "</summary><div class=\"chart-box small\"><canvas class=\"strip-chart\" aria-label=\"samples per worker "
            "process\"></canvas></div></details>\n";
}

}  // namespace

page run_page(const run_view& v, const link_style& links) {
  std::ostringstream os;
  os << "<p class=\"crumbs\">" << (links.report ? "" : "<a href=\"/\">projects</a> / ")
     << link(links.project(v.project), escape_html(v.project)) << " / run</p>\n";
  // The gate's paired comparison: stored as its own kind, or named by the base revision it measured.
  const bool judged_paired = v.verdict_kind == store::verdict_kind::paired ||
                             (v.verdict && v.verdict->baseline && v.verdict->baseline->id.rfind("paired:", 0) == 0);
  os << "<h1>Run " << escape_html(v.run.id) << "</h1>\n<dl class=\"facts\"><dt>commit</dt><dd><code>"
     << escape_html(v.run.commit) << "</code></dd><dt>branch</dt><dd>" << escape_html(v.run.branch)
     << (v.run.pull_request ? " (pull request #" + std::to_string(*v.run.pull_request) + ")" : std::string())
     << "</dd><dt>environment</dt><dd><code>" << escape_html(v.env.env_id) << "</code> "
     << machine_text(v.env.device, v.env.cpu) << "</dd><dt>created</dt><dd>" << escape_html(v.run.created_at)
     << "</dd><dt>compared with</dt><dd>" << compared_with(v, links, judged_paired) << "</dd></dl>\n";
  if (!v.verdict) {
    os << "<p class=\"banner v-none\">No verdict is stored for this run; its samples are below.</p>\n";
  } else {
    os << verdict_banner(to_string(v.verdict->verdict), v.verdict->reason) << "\n";
    if (judged_paired) {
      std::string pairing;
      for (const auto& c : v.verdict->configs) {
        if (pairing.empty() && c.pairing != pairing_mode::none) pairing = std::string(to_string(c.pairing));
      }
      os << "<p class=\"legend\">Judged by the gate's paired comparison: base and head measured in the same job"
         << (pairing.empty() ? std::string() : " (pairing: " + escape_html(pairing) + ")") << ".</p>\n";
    }
  }
  std::size_t unstable = 0;
  for (const auto& c : v.configs) {
    unstable += (c.head && c.head->number.unstable) || (c.base && c.base->number.unstable) ? 1 : 0;
  }
  if (unstable > 0) {
    os << "<p class=\"banner unstable\">&#9888; <strong>" << unstable << " configuration"
       << (unstable == 1 ? " was" : "s were")
       << " measured unstable</strong>: their processes disagree, so their numbers are not to be read as one time "
          "(the reason column says why).</p>\n";
  }
  if (v.baseline_record && v.baseline_record->source == baseline_kind::accepted) {
    const auto& r = *v.baseline_record;
    os << "<p class=\"banner accepted\"><strong>Accepted</strong> as the baseline of " << escape_html(r.branch)
       << (r.accepted_by.empty() ? std::string() : " by " + escape_html(r.accepted_by))
       << (r.created_at.empty() ? std::string() : " at " + escape_html(r.created_at))
       << (r.reason.empty() ? std::string(".") : ": " + escape_html(r.reason)) << "</p>\n";
  } else if (v.baseline_record) {
    os << "<p class=\"legend\">This run is a baseline of " << escape_html(v.baseline_record->branch)
       << " (a push build).</p>\n";
  }
  const double rope = v.rope;
  std::ostringstream t;
  t << "<table class=\"verdict-table\"><thead><tr><th>configuration</th><th class=\"num\">change "
       "(95% interval)</th><th>against the band</th><th>decision</th><th class=\"num\">P(slower)</th>"
       "<th class=\"num\">P(faster)</th>"
       "<th class=\"num\">P(equivalent)</th><th class=\"num\">detectable</th><th class=\"num\">n base / head</th>"
       "<th>reason</th></tr></thead><tbody>\n";
  std::ostringstream charts;
  for (std::size_t i = 0; i < v.configs.size(); ++i) {
    verdict_row(t, v, v.configs[i], links, rope);
    sample_chart(charts, v.configs[i], i);
  }
  t << "</tbody></table>";
  os << "<p class=\"legend\">Change: head against base as a signed percentage with its 95% interval. The small chart "
        "draws it on a log scale against the band of practical equivalence (shaded, &plusmn;"
     << fmt(rope * 100, "%.3g")
     << "%): the dot is the change, the bar its interval (an arrow where it runs off the chart), the dashed line no "
        "change. Times are the verdict's: "
     << escape_html(statistic_description) << ".</p>\n"
     << scroll_box(t.str()) << light_table(v) << explanation_section(v);
  os << "<h2>Samples per worker process, base beside head</h2>\n<p class=\"legend\">Each column is one "
        "worker process; each dot one sample's time (up to 100 evenly spaced quantiles per process). Base in blue, "
        "head in orange. The time axis is logarithmic when the samples span more than 10&times;, so an outlier "
        "cannot flatten the rest.</p>\n"
     << charts.str();
  return {page_kind::run, "run " + v.run.id, anchor_of("run-", v.run.id), os.str(), to_json(v)};
}

page run_page(const bj::object& data, const link_style& links) { return run_page(run_view_from_json(data), links); }

}  // namespace rnx::pages
