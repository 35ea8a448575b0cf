// The report's renderers: JSON for machines, text for a terminal, Markdown for a pull request.
#include "orchestrator.hpp"

#include "rnx/common/text.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace bj = boost::json;

namespace rnx::verify {

std::string detail::join_names(const std::vector<std::string>& names, std::size_t most) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < most; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > most) out += ", ...";
  return out;
}

std::string_view verdict_name(const verify_report& r) {
  if (!r.accepted()) return "rejected";
  return r.needs_review() ? "review" : "accepted";
}

bj::object to_json(const verify_report& r) {
  bj::array checks;
  for (const auto& c : r.checks) {
    checks.push_back(bj::object{{"group", to_string(c.group)},
                                {"name", c.name},
                                {"result", std::string(to_string(c.result))},
                                {"detail", c.detail},
                                {"seconds", c.seconds}});
  }
  bj::array dtypes;
  for (const auto& d : r.dtypes) dtypes.push_back(bj::string(d));
  bj::object o{{"schema", "rnx.verify/v1"}, {"verdict", verdict_name(r)}, {"needs_review", r.needs_review()},
               {"reference", r.reference},  {"candidate", r.candidate},   {"device", r.device},
               {"dtypes", dtypes},          {"seconds", r.seconds},       {"checks", checks}};
  if (r.speedup)
    o["speedup"] = *r.speedup;
  else
    o["speedup"] = nullptr;
  bj::array failed;
  for (const auto& f : r.failed()) failed.push_back(bj::string(f));
  o["failed"] = failed;
  if (r.costs) {
    o["candidate_costs"] = bj::object{{"compiler_stack_s", r.costs->compiler_stack_s},
                                      {"import_s", r.costs->import_s},
                                      {"first_call_s", r.costs->first_call_s},
                                      {"other_calls_s", r.costs->other_calls_s},
                                      {"calls", r.costs->calls}};
  }
  return o;
}

namespace {

std::string one_line(std::string s, std::size_t most) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > most) s = s.substr(0, most - 3) + "...";
  return s;
}

std::string summary(const verify_report& r) {
  std::ostringstream os;
  os << (!r.accepted() ? "REJECTED" : r.needs_review() ? "ACCEPTED FOR REVIEW" : "ACCEPTED");
  if (!r.accepted()) os << " (failed: " << detail::join_names(r.failed(), 8) << ")";
  if (r.needs_review()) os << "; review: " << detail::join_names(r.reviewed(), 8);
  if (r.speedup) os << "; speedup " << std::fixed << std::setprecision(2) << *r.speedup << "x";
  os << "; " << std::fixed << std::setprecision(1) << r.seconds << " s on " << (r.device.empty() ? "?" : r.device);
  return os.str();
}

// Where the candidate's time went, compilation apart from its calls (what torch.compile, Triton and load_inline
// do at import or first call); empty when the candidate never loaded.
std::string costs_line(const verify_report& r) {
  if (!r.costs) return "";
  const candidate_costs& c = *r.costs;
  std::ostringstream os;
  os << std::setprecision(3) << "candidate: import " << c.import_s << " s, first call " << c.first_call_s
     << " s (any compilation included), " << std::max<std::int64_t>(0, c.calls - 1) << " later checking calls "
     << c.other_calls_s << " s; torch's compiler stack " << c.compiler_stack_s << " s before it";
  return os.str();
}

}  // namespace

std::string render_text(const verify_report& r) {
  std::ostringstream os;
  os << "rnx verify: " << terminal_safe(r.candidate, false) << " against " << terminal_safe(r.reference, false) << "\n";
  std::size_t width = 5;
  for (const auto& c : r.checks) width = std::max(width, to_string(c.group).size() + 1 + c.name.size());
  for (const auto& c : r.checks) {
    std::string label = std::string(to_string(c.group)) + "/" + c.name;
    os << "  " << label << std::string(width - label.size() + 2, ' ') << std::left << std::setw(7)
       << to_string(c.result) << terminal_safe(one_line(c.detail, 400), false) << "\n";
  }
  if (const std::string costs = costs_line(r); !costs.empty()) os << costs << "\n";
  os << terminal_safe(summary(r), false) << "\n";
  return os.str();
}

// Details come from the candidate's process (its exceptions, its output, names it chose): a cell holds a short
// escaped summary, and a detail that did not fit whole is shown below the table in a fenced block.
std::string render_markdown(const verify_report& r) {
  markdown_cell_quotes details(200);
  std::ostringstream os;
  os << "### rnx verify: " << verdict_name(r) << "\n\n";
  os << markdown_code(one_line(r.candidate, 600)) << " against " << markdown_code(one_line(r.reference, 600)) << " on "
     << markdown_escape(r.device) << "\n\n";
  os << "| stage / check | result | detail |\n| --- | --- | --- |\n";
  for (const auto& c : r.checks) {
    const char* mark = c.result == outcome::pass     ? "pass"
                       : c.result == outcome::fail   ? "**FAIL**"
                       : c.result == outcome::review ? "*review*"
                                                     : "skip";
    const std::string label = std::string(to_string(c.group)) + " / " + c.name;
    os << "| " << markdown_escape(label) << " | " << mark << " | " << details.cell(label, c.detail) << " |\n";
  }
  if (const std::string full = details.full_texts("Details in full"); !full.empty()) os << "\n" << full;
  if (const std::string costs = costs_line(r); !costs.empty()) os << "\n" << markdown_escape(costs) << "\n";
  os << "\n" << markdown_escape(summary(r)) << "\n";
  return os.str();
}

}  // namespace rnx::verify
