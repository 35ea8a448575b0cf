// Renders a verdict document for people: a terminal table or a Markdown evidence table.
#pragma once

#include "rnx/common/verdict_document.hpp"

#include <string>

namespace rnx {

std::string render_verdict_text(const verdict_document& v);
// The evidence table used in step summaries and PR comments (configuration, base and head statistic,
// ratio with its 95% interval, P(slower), decision).
std::string render_verdict_markdown(const verdict_document& v);
// A time in milliseconds as every table writes it: four significant digits, trailing zeros kept ("1.000", not "1").
std::string format_ms(double ms);

}  // namespace rnx
