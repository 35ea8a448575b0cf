// The JSON behind each page: overview, configuration history (downsampled), run evidence and comparison.
#include "rnx/service/pages.hpp"

#include "pages_parts.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

namespace rnx::pages {

namespace {

// A verdict stored before its run became the first baseline of its branch: nothing compared, every configuration new.
bool first_baseline(const verdict_document& v, const std::optional<store::baseline_record>& record) {
  return !v.baseline && record && std::all_of(v.configs.begin(), v.configs.end(), [](const config_verdict& c) {
    return c.result == decision::new_config;
  });
}

}  // namespace

// What a stored verdict says overall, as the page shows it. A run stored as the first baseline of its branch was
// judged before it became one ("no baseline yet ... make run N the baseline"): the page says what it is instead,
// as the gate's terminal did.
std::string shown_reason(const verdict_document& v, const std::optional<store::baseline_record>& record,
                         const store::run_summary& run) {
  if (!first_baseline(v, record)) return v.reason;
  if (record->source == baseline_kind::accepted) {
    return "accepted as the baseline of " + record->branch + " in environment " + run.env_id +
           "; there was no earlier baseline to compare it with";
  }
  return "first baseline: nothing to compare; stored as the first baseline of " + record->branch + " in environment " +
         run.env_id;
}

overall shown_overall(const verdict_document& v, const std::optional<store::baseline_record>& record) {
  return first_baseline(v, record) && v.verdict == overall::warn ? overall::pass : v.verdict;
}

std::optional<ratio_with_interval> ratio_of(const store::run_number& a, const store::run_number& b) {
  if (!a.ms || !b.ms || !(*a.ms > 0) || !(*b.ms > 0)) return std::nullopt;
  ratio_with_interval out{*a.ms / *b.ms, std::nullopt, std::nullopt};
  auto usable = [](const store::run_number& n) {
    return !n.unstable && n.lo_ms && n.hi_ms && *n.lo_ms > 0 && *n.lo_ms <= *n.ms && *n.hi_ms >= *n.ms;
  };
  if (!usable(a) || !usable(b)) return out;
  const double down = std::hypot(std::log(*a.ms / *a.lo_ms), std::log(*b.hi_ms / *b.ms));
  const double up = std::hypot(std::log(*a.hi_ms / *a.ms), std::log(*b.ms / *b.lo_ms));
  out.lo = out.ratio * std::exp(-down);
  out.hi = out.ratio * std::exp(up);
  return out;
}

double project_rope(store::database& db, std::int64_t project_id) {
  for (const auto& row : db.recent_verdicts(project_id, 1)) {
    try {
      return verdict_from_json(json::parse(row.document, "stored verdict"), "stored verdict").policy.rope;
    } catch (const error&) {
      break;  // a verdict of an older schema: the default band
    }
  }
  return gate_policy{}.rope;
}

std::vector<std::size_t> downsample(const std::vector<double>& medians, const std::vector<bool>& keep,
                                    std::size_t target) {
  const std::size_t n = medians.size();
  std::vector<std::size_t> out;
  if (n <= target || target < 4) {
    for (std::size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  std::set<std::size_t> chosen{0, n - 1};
  for (std::size_t i = 0; i < n; ++i) {
    if (keep[i]) chosen.insert(i);
  }
  // Each bucket gives its lowest and its highest point, so spikes and dips survive the thinning.
  const std::size_t buckets = std::max<std::size_t>(1, (target - std::min(target - 2, chosen.size())) / 2);
  for (std::size_t b = 0; b < buckets; ++b) {
    std::size_t lo = b * n / buckets;
    std::size_t hi = (b + 1) * n / buckets;
    if (lo >= hi) continue;
    std::size_t min_i = lo;
    std::size_t max_i = lo;
    for (std::size_t i = lo; i < hi; ++i) {
      if (medians[i] < medians[min_i]) min_i = i;
      if (medians[i] > medians[max_i]) max_i = i;
    }
    chosen.insert(min_i);
    chosen.insert(max_i);
  }
  return {chosen.begin(), chosen.end()};
}

bj::object landing_data(store::database& db, const std::optional<std::string>& token_project) {
  bj::array projects;
  for (const auto& p :
       db.readable_projects(token_project ? std::optional<std::string_view>(*token_project) : std::nullopt)) {
    projects.push_back(
        bj::object{{"name", p.project.name},
                   {"public", p.project.is_public},
                   {"n_runs", p.n_runs},
                   {"last_run_at", p.last_run_at.empty() ? bj::value(nullptr) : bj::value(p.last_run_at)}});
  }
  return {{"projects", std::move(projects)},
          {"signed_in", token_project ? bj::value(*token_project) : bj::value(nullptr)}};
}

}  // namespace rnx::pages
