// Aggregation of trace events into an op table, Amdahl what-ifs, the torch.profiler trace importer, renderings.
#include "rnx/optimize/profile.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/files.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/text.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace rnx::optimize {

namespace bj = boost::json;

std::string op_family(std::string_view name) {
  static const std::map<std::string_view, std::string_view> families = {
      {"aten::mm", "matrix multiply"},
      {"aten::bmm", "matrix multiply"},
      {"aten::matmul", "matrix multiply"},
      {"aten::addmm", "matrix multiply"},
      {"aten::baddbmm", "matrix multiply"},
      {"aten::linear", "matrix multiply"},
      {"aten::einsum", "matrix multiply"},
      {"aten::_scaled_dot_product_flash_attention", "attention"},
      {"aten::scaled_dot_product_attention", "attention"},
      {"aten::_scaled_dot_product_efficient_attention", "attention"},
      {"aten::softmax", "softmax"},
      {"aten::_softmax", "softmax"},
      {"aten::copy_", "copy"},
      {"aten::contiguous", "copy"},
      {"aten::clone", "copy"},
      {"aten::cat", "copy"},
      {"aten::stack", "copy"},
  };
  auto it = families.find(name);
  if (it != families.end()) return std::string(it->second);
  // GPU kernel names: cuBLAS/CUTLASS GEMMs.
  if (name.find("gemm") != std::string_view::npos || name.find("sgemm") != std::string_view::npos) {
    return "matrix multiply";
  }
  return "";
}

op_profile aggregate(const std::vector<trace_event>& events, double wall_ms) {
  op_profile p;
  const bool have_kernels =
      std::any_of(events.begin(), events.end(), [](const trace_event& e) { return e.device_kernel; });
  p.ranked_by = have_kernels ? "GPU kernel time" : "self CPU time";

  std::map<std::string, op_row> rows;
  std::map<std::string, std::vector<const trace_event*>> by_thread;
  double first = INFINITY, last = -INFINITY;
  for (const auto& e : events) {
    if (e.dur_us < 0) continue;
    first = std::min(first, e.start_us);
    last = std::max(last, e.start_us + e.dur_us);
    if (e.device_kernel != have_kernels) continue;
    if (e.device_kernel) {
      op_row& r = rows[e.name];
      r.calls += 1;
      r.self_ms += e.dur_us / 1000;
      r.total_ms += e.dur_us / 1000;
    } else {
      by_thread[e.thread].push_back(&e);
    }
  }
  // Host operators nest (aten::matmul calls aten::bmm): a parent's self time is its duration minus its
  // children's, found with a stack over events sorted by start (longest first on ties, so parents come first).
  for (auto& [thread, list] : by_thread) {
    std::sort(list.begin(), list.end(), [](const trace_event* a, const trace_event* b) {
      return a->start_us != b->start_us ? a->start_us < b->start_us : a->dur_us > b->dur_us;
    });
    std::vector<std::pair<const trace_event*, double>> stack;  // event, its children's time
    auto close = [&](std::pair<const trace_event*, double>& top) {
      op_row& r = rows[top.first->name];
      r.self_ms += std::max(0.0, top.first->dur_us - top.second) / 1000;
    };
    for (const trace_event* e : list) {
      while (!stack.empty() && stack.back().first->start_us + stack.back().first->dur_us <= e->start_us) {
        close(stack.back());
        stack.pop_back();
      }
      if (!stack.empty()) stack.back().second += e->dur_us;
      op_row& r = rows[e->name];
      r.calls += 1;
      // total_ms of a recursive op would double count; ops do not recurse into themselves in practice.
      r.total_ms += e->dur_us / 1000;
      stack.emplace_back(e, 0.0);
    }
    while (!stack.empty()) {
      close(stack.back());
      stack.pop_back();
    }
  }
  p.wall_ms = wall_ms > 0 ? wall_ms : (std::isfinite(first) ? (last - first) / 1000 : 0);
  for (auto& [name, r] : rows) {
    r.name = name;
    r.family = op_family(name);
    r.share = p.wall_ms > 0 ? std::min(1.0, r.self_ms / p.wall_ms) : 0;
    p.ops.push_back(r);
  }
  std::sort(p.ops.begin(), p.ops.end(), [](const op_row& a, const op_row& b) {
    return a.self_ms != b.self_ms ? a.self_ms > b.self_ms : a.name < b.name;
  });
  return p;
}

double amdahl_speedup(double share, double k) {
  if (!(share > 0)) return 1.0;
  share = std::min(1.0, share);
  double rest = 1.0 - share;
  double sped = std::isinf(k) ? 0.0 : share / k;
  if (rest + sped <= 0) return INFINITY;
  return 1.0 / (rest + sped);
}

std::vector<what_if> what_ifs(const op_profile& p, int top, const std::vector<double>& factors) {
  std::vector<what_if> out;
  for (int i = 0; i < top && i < static_cast<int>(p.ops.size()); ++i) {
    for (double k : factors) {
      out.push_back({p.ops[i].name, p.ops[i].share, k, amdahl_speedup(p.ops[i].share, k)});
    }
  }
  return out;
}

op_profile import_trace_text(std::string_view text, const std::string& source) {
  bj::value doc = json::parse(text, source, 32);
  const bj::array* events = nullptr;
  if (doc.is_array()) {
    events = &doc.as_array();
  } else if (doc.is_object() && doc.as_object().contains("traceEvents") &&
             doc.as_object().at("traceEvents").is_array()) {
    events = &doc.as_object().at("traceEvents").as_array();
  } else {
    throw error(errc::invalid, source +
                                   ": not a torch.profiler trace (expected {\"traceEvents\": [...]}; write it "
                                   "with prof.export_chrome_trace(\"trace.json\"))");
  }
  std::vector<trace_event> list;
  std::map<std::string, int> other_categories;
  auto number = [](const bj::value* v) -> double {
    if (!v) return NAN;
    if (v->is_double()) return v->as_double();
    if (v->is_int64()) return static_cast<double>(v->as_int64());
    if (v->is_uint64()) return static_cast<double>(v->as_uint64());
    return NAN;
  };
  auto text_of = [](const bj::value* v) -> std::string {
    if (!v) return "";
    if (v->is_string()) return std::string(v->as_string());
    if (v->is_int64()) return std::to_string(v->as_int64());
    if (v->is_uint64()) return std::to_string(v->as_uint64());
    return "";
  };
  for (std::size_t i = 0; i < events->size(); ++i) {
    const auto* o = (*events)[i].if_object();
    if (!o) continue;
    const bj::value* ph = o->if_contains("ph");
    const bj::value* cat = o->if_contains("cat");
    if (!ph || !ph->is_string() || ph->as_string() != "X" || !cat || !cat->is_string()) continue;
    std::string category(cat->as_string());
    bool kernel = category == "kernel";
    if (category != "cpu_op" && !kernel) {
      other_categories[category] += 1;
      continue;
    }
    trace_event e;
    e.name = text_of(o->if_contains("name"));
    e.device_kernel = kernel;
    e.thread = text_of(o->if_contains("pid")) + ":" + text_of(o->if_contains("tid"));
    e.start_us = number(o->if_contains("ts"));
    e.dur_us = number(o->if_contains("dur"));
    if (e.name.empty() || !std::isfinite(e.start_us) || !std::isfinite(e.dur_us) || e.dur_us < 0) {
      throw error(errc::invalid, source + ": $.traceEvents[" + std::to_string(i) +
                                     "]: a complete event needs a name, a numeric ts and a non-negative dur");
    }
    list.push_back(std::move(e));
  }
  if (list.empty()) {
    std::string seen;
    for (const auto& [c, n] : other_categories) seen += (seen.empty() ? "" : ", ") + c + " (" + std::to_string(n) + ")";
    throw error(errc::invalid, source + ": no operator events (category cpu_op or kernel) in the trace" +
                                   (seen.empty() ? std::string() : "; it holds " + seen) +
                                   " (profile with activities=[ProfilerActivity.CPU] and export_chrome_trace)");
  }
  op_profile p = aggregate(list, 0);
  p.source = "imported " + source;
  return p;
}

op_profile import_trace(const std::filesystem::path& path) {
  auto text = read_whole_file(path);
  if (!text) throw error(errc::not_found, path.string() + ": cannot read the trace (check the --import path)");
  return import_trace_text(*text, path.string());
}

namespace {

std::string fmt(const char* format, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

std::string factor_name(double k) { return std::isinf(k) ? "removed" : fmt("%g×", k); }
std::string speedup_text(double s) { return std::isinf(s) ? "unbounded" : fmt("%.3f×", s); }

std::string header_line(const op_profile& p) {
  std::ostringstream s;
  s << "profile of " << (p.kernel.empty() ? std::string("trace") : p.kernel);
  if (!p.runtime.empty()) s << " (" << p.runtime << ", " << p.dtype << ", batch " << p.batch << ", " << p.device << ")";
  s << " — " << p.source << ", ranked by " << p.ranked_by << "; window " << fmt("%.3f", p.wall_ms) << " ms";
  if (p.profiled_calls > 0) s << " over " << p.profiled_calls << " calls";
  return s.str();
}

double covered_share(const op_profile& p) {
  double sum = 0;
  for (const auto& r : p.ops) sum += r.share;
  return std::min(1.0, sum);
}

}  // namespace

boost::json::value to_json(const op_profile& p, int top, const std::vector<double>& factors) {
  bj::object o;
  o["schema"] = "rnx.profile/v1";
  o["kernel"] = p.kernel;
  o["source"] = p.source;
  o["device"] = p.device;
  o["runtime"] = p.runtime;
  o["dtype"] = p.dtype;
  o["batch"] = p.batch;
  o["profiled_calls"] = p.profiled_calls;
  o["wall_ms"] = p.wall_ms;
  o["ranked_by"] = p.ranked_by;
  o["outside_ops_share"] = 1.0 - covered_share(p);
  bj::array ops;
  for (const auto& r : p.ops) {
    ops.push_back(bj::object{{"name", r.name},
                             {"family", r.family},
                             {"calls", r.calls},
                             {"self_ms", r.self_ms},
                             {"total_ms", r.total_ms},
                             {"share", r.share}});
  }
  o["ops"] = std::move(ops);
  bj::array w;
  for (const auto& x : what_ifs(p, top, factors)) {
    w.push_back(bj::object{{"op", x.op},
                           {"share", x.share},
                           {"op_speedup", std::isinf(x.k) ? bj::value("removed") : bj::value(x.k)},
                           {"whole_speedup", std::isinf(x.whole) ? bj::value(nullptr) : bj::value(x.whole)}});
  }
  o["what_if"] = std::move(w);
  return o;
}

op_profile profile_from_json(const boost::json::value& v, const std::string& source) {
  json::reader r(v, source);
  op_profile p;
  p.kernel = r.string("kernel");
  p.source = r.string("source");
  p.device = r.string("device");
  p.runtime = r.string("runtime");
  p.dtype = r.string("dtype");
  p.batch = r.integer("batch");
  p.profiled_calls = r.integer("profiled_calls");
  p.wall_ms = r.number("wall_ms");
  p.ranked_by = r.string("ranked_by");
  json::reader ops = r.at("ops");
  for (std::size_t i = 0; i < ops.array().size(); ++i) {
    json::reader o = ops.at(i);
    op_row row;
    row.name = o.string("name");
    row.family = o.string("family");
    row.calls = o.integer("calls");
    row.self_ms = o.number("self_ms");
    row.total_ms = o.number("total_ms");
    row.share = o.number("share");
    p.ops.push_back(std::move(row));
  }
  return p;
}

std::string render_profile_text(const op_profile& p, int top, const std::vector<double>& factors) {
  std::ostringstream s;
  s << header_line(p) << "\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-4s %-48s %-16s %8s %12s %12s %7s\n", "rank", "op", "kind", "calls", "self ms",
                "total ms", "share");
  s << line;
  int shown = 0;
  for (const auto& r : p.ops) {
    if (shown++ >= top) break;
    std::snprintf(line, sizeof line, "%-4d %-48s %-16s %8lld %12.4f %12.4f %6.1f%%\n", shown,
                  terminal_safe(r.name.substr(0, 48), false).c_str(), r.family.c_str(), static_cast<long long>(r.calls),
                  r.self_ms, r.total_ms, 100 * r.share);
    s << line;
  }
  if (static_cast<int>(p.ops.size()) > top) s << "     (" << p.ops.size() - top << " more ops)\n";
  s << "     outside every op: " << fmt("%.1f%%", 100 * (1 - covered_share(p))) << " of the window\n\n";
  s << "what if (Amdahl: whole = 1 / ((1 - share) + share / k))\n";
  for (const auto& w : what_ifs(p, std::min(top, 3), factors)) {
    s << "  " << terminal_safe(w.op, false) << " " << factor_name(w.k) << (std::isinf(w.k) ? "" : " faster")
      << " -> whole run " << speedup_text(w.whole) << " faster (share " << fmt("%.1f%%", 100 * w.share) << ")\n";
  }
  return s.str();
}

std::string render_profile_markdown(const op_profile& p, int top, const std::vector<double>& factors) {
  std::ostringstream s;
  s << "**" << header_line(p) << "**\n\n";
  s << "| Rank | Op | Kind | Calls | Self ms | Total ms | Share of self time |\n";
  s << "| ---: | --- | --- | ---: | ---: | ---: | ---: |\n";
  int shown = 0;
  for (const auto& r : p.ops) {
    if (shown++ >= top) break;
    s << "| " << shown << " | " << markdown_code(r.name) << " | " << r.family << " | " << r.calls << " | "
      << fmt("%.4f", r.self_ms) << " | " << fmt("%.4f", r.total_ms) << " | " << fmt("%.1f%%", 100 * r.share) << " |\n";
  }
  s << "\nOutside every op: " << fmt("%.1f%%", 100 * (1 - covered_share(p))) << " of the window.\n\n";
  s << "| What if | Share | Whole run |\n| --- | ---: | ---: |\n";
  for (const auto& w : what_ifs(p, std::min(top, 3), factors)) {
    s << "| " << markdown_code(w.op) << " " << factor_name(w.k) << (std::isinf(w.k) ? "" : " faster") << " | "
      << fmt("%.1f%%", 100 * w.share) << " | " << speedup_text(w.whole) << " faster |\n";
  }
  return s.str();
}

}  // namespace rnx::optimize
