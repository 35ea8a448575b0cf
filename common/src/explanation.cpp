// The explanation's names, its JSON form in the verdict document, and the lines people read.
#include "rnx/common/explanation.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"

#include <boost/json.hpp>

#include <cmath>
#include <cstdio>

namespace rnx {

namespace bj = boost::json;

std::string_view to_string(explain_status s) {
  switch (s) {
    case explain_status::explained: return "explained";
    case explain_status::failed: return "failed";
    case explain_status::over_budget: return "over-budget";
  }
  return "failed";
}

std::optional<explain_status> explain_status_from_string(std::string_view s) {
  return enum_from_name(s, {explain_status::explained, explain_status::failed, explain_status::over_budget});
}

std::string_view to_string(change_kind k) {
  switch (k) {
    case change_kind::added: return "added";
    case change_kind::removed: return "removed";
    case change_kind::calls: return "calls";
    case change_kind::time: return "time";
  }
  return "time";
}

std::optional<change_kind> change_kind_from_string(std::string_view s) {
  return enum_from_name(s, {change_kind::added, change_kind::removed, change_kind::calls, change_kind::time});
}

std::string_view to_string(count_kind k) {
  switch (k) {
    case count_kind::kernel_launches: return "kernel_launches";
    case count_kind::operator_calls: return "operator_calls";
    case count_kind::dram_bytes_read: return "dram_bytes_read";
    case count_kind::dram_bytes_written: return "dram_bytes_written";
    case count_kind::instructions: return "instructions";
    case count_kind::flops: return "flops";
    case count_kind::bytes: return "bytes";
  }
  return "operator_calls";
}

std::optional<count_kind> count_kind_from_string(std::string_view s) {
  return enum_from_name(
      s, {count_kind::kernel_launches, count_kind::operator_calls, count_kind::dram_bytes_read,
          count_kind::dram_bytes_written, count_kind::instructions, count_kind::flops, count_kind::bytes});
}

std::string_view count_label(count_kind k) {
  switch (k) {
    case count_kind::kernel_launches: return "kernel launches";
    case count_kind::operator_calls: return "operator calls";
    case count_kind::dram_bytes_read: return "DRAM bytes read";
    case count_kind::dram_bytes_written: return "DRAM bytes written";
    case count_kind::instructions: return "instructions executed";
    case count_kind::flops: return "counted FLOPs (work)";
    case count_kind::bytes: return "counted bytes (work)";
  }
  return "";
}

std::optional<double> count_change::change() const {
  if (!base || !head || !(*base > 0)) return std::nullopt;
  return *head / *base - 1;
}

bool executed_count(count_kind k) { return k != count_kind::flops && k != count_kind::bytes; }

bool count_moved(const count_change& c, double threshold) {
  if (!c.base || !c.head) return false;
  if (!(*c.base > 0)) return *c.head > 0;
  return std::fabs(*c.head / *c.base - 1) > threshold;
}

namespace {

bj::value optional_number(const std::optional<double>& v) { return v ? bj::value(*v) : bj::value(nullptr); }

std::optional<double> read_optional(const json::reader& r, std::string_view key) {
  if (auto m = r.maybe(key)) return m->number();
  return std::nullopt;
}

std::string format(const char* f, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, f, v);
  return buffer;
}

// A count for people: whole numbers as they are, fractions of a call with up to three decimals.
std::string count_text(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9) return format("%.0f", v);
  return format("%.3f", v);
}

std::string signed_percent(double fraction) { return format("%+.1f%%", 100 * fraction); }

}  // namespace

bj::value to_json(const explanation& e) {
  bj::object o;
  o["status"] = to_string(e.status);
  o["note"] = e.note;
  o["profiler"] = e.profiler;
  o["ranked_by"] = e.ranked_by;
  o["profiled_calls"] = e.profiled_calls;
  o["base_ms"] = e.base_ms;
  o["head_ms"] = e.head_ms;
  bj::array changes;
  for (const auto& c : e.changes) {
    changes.push_back(bj::object{{"name", c.name},
                                 {"kind", to_string(c.kind)},
                                 {"base_calls", c.base_calls},
                                 {"head_calls", c.head_calls},
                                 {"base_ms", c.base_ms},
                                 {"head_ms", c.head_ms},
                                 {"share", c.share}});
  }
  o["changes"] = std::move(changes);
  bj::array counts;
  for (const auto& c : e.counts) {
    counts.push_back(bj::object{{"kind", to_string(c.kind)},
                                {"base", optional_number(c.base)},
                                {"head", optional_number(c.head)},
                                {"change", optional_number(c.change())}});
  }
  o["counts"] = std::move(counts);
  o["counts_moved"] = e.counts_moved;
  o["count_threshold"] = e.count_threshold;
  o["cost_s"] = e.cost_s;
  return o;
}

explanation explanation_from_json(const bj::value& v, const std::string& source) {
  json::reader r(v, source);
  explanation e;
  auto status = r.at("status");
  const auto s = explain_status_from_string(status.string());
  if (!s) status.fail("one of \"explained\", \"failed\", \"over-budget\"");
  e.status = *s;
  e.note = r.string_or("note", "");
  e.profiler = r.string_or("profiler", "");
  e.ranked_by = r.string_or("ranked_by", "");
  e.profiled_calls = static_cast<int>(r.integer("profiled_calls"));
  e.base_ms = r.number("base_ms");
  e.head_ms = r.number("head_ms");
  auto changes = r.at("changes");
  for (std::size_t i = 0; i < changes.array().size(); ++i) {
    auto c = changes.at(i);
    op_change row;
    row.name = c.string("name");
    auto kind = c.at("kind");
    const auto k = change_kind_from_string(kind.string());
    if (!k) kind.fail("one of \"added\", \"removed\", \"calls\", \"time\"");
    row.kind = *k;
    row.base_calls = c.number("base_calls");
    row.head_calls = c.number("head_calls");
    row.base_ms = c.number("base_ms");
    row.head_ms = c.number("head_ms");
    row.share = c.number("share");
    e.changes.push_back(std::move(row));
  }
  auto counts = r.at("counts");
  for (std::size_t i = 0; i < counts.array().size(); ++i) {
    auto c = counts.at(i);
    count_change row;
    auto kind = c.at("kind");
    const auto k = count_kind_from_string(kind.string());
    if (!k) kind.fail("a count kind such as \"kernel_launches\"");
    row.kind = *k;
    row.base = read_optional(c, "base");
    row.head = read_optional(c, "head");
    e.counts.push_back(row);
  }
  e.counts_moved = r.at("counts_moved").boolean();
  e.count_threshold = r.number("count_threshold");
  e.cost_s = r.number("cost_s");
  return e;
}

std::vector<std::string> top_lines(const explanation& e, std::size_t top) {
  std::vector<std::string> out;
  auto calls = [](double n) { return count_text(n) + (n == 1 ? " call" : " calls"); };
  auto ms = [](double v) { return format("%.4g", v); };
  for (const auto& c : e.changes) {
    if (out.size() >= top) break;
    std::string line = c.name;
    switch (c.kind) {
      case change_kind::added: line += " added: " + calls(c.head_calls) + ", " + ms(c.head_ms) + " ms a call"; break;
      case change_kind::removed:
        line += " removed: " + calls(c.base_calls) + ", " + ms(c.base_ms) + " ms a call less";
        break;
      case change_kind::calls:
        line += " calls " + count_text(c.base_calls) + " -> " + count_text(c.head_calls) + " a call, " + ms(c.base_ms) +
                " -> " + ms(c.head_ms) + " ms a call";
        break;
      case change_kind::time: line += " " + ms(c.base_ms) + " -> " + ms(c.head_ms) + " ms a call"; break;
    }
    if (c.share > 0) {
      line += ", " + format("%.0f%%", 100 * c.share) + " of the added time";
    } else if (c.share < 0) {
      line += ", " + format("%.0f%%", -100 * c.share) + " of the time saved";
    }
    out.push_back(std::move(line));
  }
  return out;
}

std::vector<std::string> count_lines(const explanation& e) {
  std::vector<std::string> out;
  for (const auto& c : e.counts) {
    if (!c.base && !c.head) continue;
    std::string line = std::string(count_label(c.kind)) + " " + (c.base ? count_text(*c.base) : "?") + " -> " +
                       (c.head ? count_text(*c.head) : "?");
    if (auto change = c.change())
      line += " (" + (*change == 0 ? std::string("unchanged") : signed_percent(*change)) + ")";
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace rnx
