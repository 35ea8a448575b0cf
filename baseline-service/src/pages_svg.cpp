// The change of one configuration as text (a signed percentage with its 95% interval) and as a small inline SVG of
// the ratio against the band of practical equivalence: the run page and `rnx report` both draw it from here.
#include "rnx/service/pages.hpp"

#include "rnx/common/speed_of_light.hpp"
#include "rnx/common/verdict_document.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>

namespace rnx::pages {

namespace {

constexpr double chart_width = 180;
constexpr double chart_left = 6;  // room for the dot and the caps at the ends
constexpr double chart_right = 174;

std::string number(double v, const char* format = "%.1f") {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

bool usable(const std::optional<double>& v) { return v && std::isfinite(*v) && *v > 0; }

// The colour of the interval and dot: the decision's, never the band's.
std::string_view decision_colour(std::string_view name) {
  switch (decision_from_string(name).value_or(decision::equivalent)) {
    case decision::slower:
    case decision::broken: return "#b00000";
    case decision::faster: return "#0b7a2a";
    case decision::abstain: return "#8a6100";
    default: return "#1a3f66";
  }
}

}  // namespace

std::string signed_percent(double ratio) {
  double change = (ratio - 1) * 100;
  // "-0.0%" reads as a change; a ratio that rounds to 1.000 is "+0.0%".
  if (std::fabs(change) < 0.05) change = 0;
  return (change >= 0 ? "+" : "") + number(change) + "%";
}

std::string change_text(std::optional<double> ratio, std::optional<double> ci_lo, std::optional<double> ci_hi) {
  if (!usable(ratio)) return "";
  std::string text = signed_percent(*ratio);
  if (usable(ci_lo) && usable(ci_hi)) {
    text += " (95%: " + signed_percent(*ci_lo) + " to " + signed_percent(*ci_hi) + ")";
  }
  return text;
}

std::string ratio_band_svg(std::optional<double> ratio, std::optional<double> ci_lo, std::optional<double> ci_hi,
                           double rope, std::string_view decision) {
  if (!usable(ratio)) return "";
  if (!(rope > 0 && rope < 1)) rope = gate_policy{}.rope;
  const bool has_interval = usable(ci_lo) && usable(ci_hi) && *ci_lo <= *ci_hi;
  // A log axis of the ratio, symmetric around 1.0 so that "left of the line" always reads as faster: a ratio's
  // change cannot go below -100%, and halving sits as far left as doubling sits right. It holds the band with room
  // on both sides, the interval and the ratio, and at most a factor of 10 either way; an interval beyond that is
  // clipped, its clipped end drawn as an arrow.
  double reach = std::log1p(2 * rope);
  for (double v : {*ratio, has_interval ? *ci_lo : *ratio, has_interval ? *ci_hi : *ratio}) {
    reach = std::max(reach, std::fabs(std::log(v)) * 1.15);
  }
  reach = std::min(reach, std::log(10.0));
  const double lo = std::exp(-reach);
  const double hi = std::exp(reach);
  auto x = [&](double v) {
    return chart_left + (std::log(std::clamp(v, lo, hi)) + reach) / (2 * reach) * (chart_right - chart_left);
  };
  const std::string colour(decision_colour(decision));
  std::string title = "head/base " + number(*ratio, "%.3f") + " (" + change_text(ratio, ci_lo, ci_hi) +
                      "); band of equivalence " + number(1 - rope, "%.3f") + " to " + number(1 + rope, "%.3f");
  std::string out = "<svg class=\"ratio-band\" viewBox=\"0 0 " + number(chart_width, "%.0f") +
                    " 30\" width=\"180\" height=\"30\" role=\"img\" aria-label=\"" + escape_html(title) + "\"><title>" +
                    escape_html(title) + "</title>";
  out += "<rect class=\"band\" x=\"" + number(x(1 - rope)) + "\" y=\"2\" width=\"" + number(x(1 + rope) - x(1 - rope)) +
         "\" height=\"16\" fill=\"#dbe7f3\"/>";
  out += "<line x1=\"" + number(chart_left) + "\" y1=\"10\" x2=\"" + number(chart_right) +
         "\" y2=\"10\" stroke=\"#c5ccd3\" stroke-width=\"1\"/>";
  out += "<line class=\"one\" x1=\"" + number(x(1)) + "\" y1=\"1\" x2=\"" + number(x(1)) +
         "\" y2=\"19\" stroke=\"#57606a\" stroke-width=\"1\" stroke-dasharray=\"2 2\"/>";
  if (has_interval) {
    const std::string a = number(x(*ci_lo));
    const std::string b = number(x(*ci_hi));
    out += "<line class=\"interval\" x1=\"" + a + "\" y1=\"10\" x2=\"" + b + "\" y2=\"10\" stroke=\"" + colour +
           "\" stroke-width=\"2.5\"/>";
    for (const auto& [end, clipped, direction] : {std::tuple{a, *ci_lo < lo, -1.0}, std::tuple{b, *ci_hi > hi, 1.0}}) {
      if (clipped) {
        // An arrow head pointing off the axis: the interval goes on beyond this end.
        const double tip = direction < 0 ? chart_left - 4 : chart_right + 4;
        const std::string base_x = number(tip - 6 * direction);
        out += "<polygon class=\"clipped\" points=\"";
        out += number(tip) + ",10 ";
        out += base_x + ",5 ";
        out += base_x + ",15\" fill=\"";
        out += colour;
        out += "\"/>";
        continue;
      }
      out += "<line x1=\"";
      out += end;
      out += "\" y1=\"5\" x2=\"";
      out += end;
      out += "\" y2=\"15\" stroke=\"";
      out += colour;
      out += "\" stroke-width=\"1.5\"/>";
    }
  }
  out += "<circle class=\"ratio\" cx=\"" + number(x(*ratio)) + "\" cy=\"10\" r=\"3.5\" fill=\"" + colour + "\"/>";
  // The scale: the axis ends and the band's edges, as signed percentages.
  auto label = [&](double v, std::string_view anchor) {
    return "<text x=\"" + number(x(v)) + "\" y=\"28\" font-size=\"8\" fill=\"#57606a\" text-anchor=\"" +
           std::string(anchor) + "\">" + escape_html(signed_percent(v)) + "</text>";
  };
  out += label(lo, "start") + "<text x=\"" + number(x(1)) +
         "\" y=\"28\" font-size=\"8\" fill=\"#57606a\" text-anchor=\"middle\">0%</text>" + label(hi, "end");
  out += "</svg>";
  return out;
}

std::string headroom_svg(std::optional<double> fraction, bool compute_bound, double error, bool elementwise) {
  if (!fraction || !std::isfinite(*fraction) || *fraction < 0) return "";
  constexpr double width = 80;
  const double filled = width * std::min(*fraction, 1.0);
  const light_speed light{0, *fraction, compute_bound, "", elementwise};
  const std::string label = light_text(light, error);
  const std::string title =
      label + " of the peak of its bound (" +
      (compute_bound ? "the dtype's matrix product"
       : elementwise ? "a device copy; its transcendental elementwise arithmetic has no peak, so this is a floor"
                     : "a device copy") +
      ")";
  // Past 100% by more than the peak's own measurement error is impossible for honest work at these peaks: drawn
  // full, in the broken colour. Within that error it is at the peak: drawn full, in the ordinary one.
  const std::string colour = beyond_peak(light, error) ? "#b00000" : "#1a3f66";
  std::string out = "<svg class=\"headroom\" viewBox=\"0 0 " + number(width + 60, "%.0f") + " 14\" width=\"" +
                    number(width + 60, "%.0f") + "\" height=\"14\" role=\"img\" aria-label=\"" + escape_html(title) +
                    "\"><title>" + escape_html(title) + "</title>";
  out += "<rect x=\"0\" y=\"2\" width=\"" + number(width, "%.0f") + "\" height=\"10\" fill=\"#e6eaee\"/>";
  out += "<rect class=\"reached\" x=\"0\" y=\"2\" width=\"" + number(filled) + "\" height=\"10\" fill=\"" + colour +
         "\"/>";
  out += "<text x=\"" + number(width + 4, "%.0f") + "\" y=\"11\" font-size=\"9\" fill=\"#24292f\">" +
         escape_html(label) + "</text></svg>";
  return out;
}

}  // namespace rnx::pages
