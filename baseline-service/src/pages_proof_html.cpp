// The speed-of-light page's HTML from its proof_view: the conditions it was measured under, the machine's peaks
// beside the datasheet's, and every configuration from nearest the limit to farthest, with its headroom bar.
#include "rnx/service/page_views.hpp"
#include "rnx/service/pages.hpp"

#include "pages_parts.hpp"

#include <sstream>

namespace rnx::pages {

using namespace parts;

namespace {

// A rate already in units of 1e9 per second, whole from a thousand up (628292, never 6.283e+05).
std::string giga_text(std::optional<double> giga) {
  if (!giga) return "-";
  return fmt(*giga, *giga >= 1000 ? "%.0f" : "%.4g");
}

// 1.234e12 per second -> "1234 GFLOP/s" or "1234 GB/s": each peak in the unit of its own quantity (a matrix
// product's FLOPs, a copy's bytes), never one unit for both.
std::string rate_with_unit(std::optional<double> per_s, const std::string& peak) {
  if (!per_s) return "-";
  return giga_text(*per_s / 1e9) + (peak == copy_peak_name ? " GB/s" : " GFLOP/s");
}

void peaks_table(std::ostringstream& os, const proof_view& v) {
  const std::string source(to_string(v.figures));
  os << "<table class=\"peaks\"><thead><tr><th>peak</th><th class=\"num\">" << source
     << "</th><th class=\"num\">its error</th><th class=\"num\">datasheet</th><th class=\"num\">" << source
     << " / datasheet</th><th>measured</th></tr></thead><tbody>\n";
  for (const auto& [name, value] : v.env.peaks) {
    std::optional<double> sheet;
    if (v.sheet) {
      if (auto it = v.sheet->peaks.find(name); it != v.sheet->peaks.end()) sheet = it->second;
    }
    const auto m = v.env.peak_measurements.find(name);
    const bool recorded = m != v.env.peak_measurements.end();
    os << "<tr><td><code>" << escape_html(name) << "</code></td><td class=\"num\">" << rate_with_unit(value, name)
       << "</td><td class=\"num\">" << (recorded ? "&plusmn;" + fmt(100 * m->second.error, "%.2g") + "%" : "-")
       << "</td><td class=\"num\">" << rate_with_unit(sheet, name) << "</td><td class=\"num\">"
       << percent(sheet ? std::optional<double>(value / *sheet) : std::nullopt) << "</td><td>"
       << (recorded ? escape_html(m->second.measured_at + ": " + m->second.how) : "not recorded (an older rnx)")
       << "</td></tr>\n";
  }
  os << "</tbody></table>\n";
}

void rows_table(std::ostringstream& os, const proof_view& v) {
  std::ostringstream t;
  t << "<table class=\"proof-table\"><thead><tr><th>configuration</th><th class=\"num\">time ms</th>"
       "<th class=\"num\">GFLOP</th><th class=\"num\">MB</th><th class=\"num\">GFLOP/s</th><th class=\"num\">GB/s</th>"
       "<th>bound</th><th class=\"num\">at 100% ms</th><th>of the "
    << to_string(v.figures) << " peak</th><th class=\"num\">of the datasheet</th></tr></thead><tbody>\n";
  for (const auto& r : v.rows) {
    const std::string mark = r.work.source == work_source::declared ? "*" : "";
    auto scaled = [](const std::optional<std::int64_t>& n, double unit) {
      return n ? std::optional<double>(static_cast<double>(*n) / unit) : std::nullopt;
    };
    t << "<tr><td><code>" << escape_html(r.key.label()) << "</code></td><td class=\"num\">" << fmt(r.ms, "%.4g")
      << "</td><td class=\"num\">" << fmt(scaled(r.work.flops, 1e9), "%.4g", mark) << "</td><td class=\"num\">"
      << fmt(scaled(r.work.bytes, 1e6), "%.4g", mark) << "</td><td class=\"num\">" << giga_text(r.rates.gflop_per_s)
      << "</td><td class=\"num\">" << giga_text(r.rates.gb_per_s) << "</td><td>"
      << (r.light.measured.compute_bound ? "compute"
          : r.light.measured.elementwise ? "elementwise"
                                         : "memory")
      << "</td><td class=\"num\">" << fmt(r.light.measured.ideal_ms, "%.4g") << "</td><td>"
      << headroom_svg(r.light.measured.fraction, r.light.measured.compute_bound, r.light.error,
                      r.light.measured.elementwise)
      << "</td><td class=\"num\">" << percent(r.light.sheet_fraction) << "</td></tr>\n";
  }
  t << "</tbody></table>";
  os << scroll_box(t.str());
}

}  // namespace

page proof_page(const proof_view& v) {
  std::ostringstream os;
  os << "<h1>Speed of light: " << escape_html(v.project) << " at <code>" << escape_html(v.run.commit.substr(0, 12))
     << "</code></h1>\n<p class=\"legend\">" << escape_html(proof_requirements)
     << "</p>\n<dl class=\"facts\"><dt>machine</dt><dd>" << machine_text(v.env.device, v.env.cpu)
     << "</dd><dt>environment</dt><dd><code>" << escape_html(v.env.env_id) << "</code></dd><dt>measured under</dt><dd>";
  if (v.figures == figure_source::reported) {
    os << "<span class=\"reported\">clocks locked as the run document reports them (uploaded: a claim, not "
          "measured by this rnx)</span>";
  } else {
    os << "clocks locked (queried, not set by rnx)";
  }
  if (auto lo = v.env.clocks.find("sm_mhz_min"), hi = v.env.clocks.find("sm_mhz_max");
      lo != v.env.clocks.end() && hi != v.env.clocks.end()) {
    os << ", SM clock " << fmt(lo->second, "%.0f") << "&ndash;" << fmt(hi->second, "%.0f") << " MHz while sampling"
       << (v.figures == figure_source::reported ? " (reported)" : "");
  }
  os << "; the L2 flushed before every timed call</dd><dt>bytes</dt><dd>the counted minimum (each distinct input, "
        "weight and output storage once): rnx reads no performance counters, so traffic beyond that minimum (a "
        "re-read, a spill) shows as a lower fraction, never as a higher one</dd></dl>\n";
  os << "<h2>The machine's peaks</h2>\n<p class=\"legend\">"
     << (v.figures == figure_source::reported
             ? "Reported by the uploaded run document (a claim: rnx did not measure them here; rnx bench measures "
               "them as "
             : "Measured by rnx bench on this machine: ")
     << "a square matrix product per dtype (FLOP/s) and a device copy (bytes read plus written per second)"
     << (v.figures == figure_source::reported ? ")" : "");
  if (v.sheet) os << "; datasheet: " << escape_html(v.sheet->source);
  os << ".</p>\n";
  peaks_table(os, v);
  os << "<h2>Every configuration, nearest the limit first</h2>\n<p class=\"legend\">Time: each worker process's "
        "median, geometric mean over the processes. At 100%: the time the work takes at the "
     << to_string(v.figures)
     << " peak of its bound "
        "(the larger of its FLOPs at the dtype's matrix product and its bytes at the copy). The bar is that time over "
        "the measured one; past 100% by no more than the peak's own error it is at the peak (drawn as 100%), past it "
        "by more it is beyond what the machine can do (drawn in red); * marks work declared in rnx.toml rather than "
        "counted.</p>\n";
  rows_table(os, v);
  if (!v.without_light.empty()) {
    os << "<p class=\"legend\">Measured without a speed of light (no work counted or declared, or no peak for its "
          "dtype):";
    for (const auto& k : v.without_light) os << " <code>" << escape_html(k.label()) << "</code>";
    os << "</p>\n";
  }
  return {page_kind::proof, "speed of light " + v.run.id, anchor_of("proof-", v.run.id), os.str(), to_json(v)};
}

}  // namespace rnx::pages
