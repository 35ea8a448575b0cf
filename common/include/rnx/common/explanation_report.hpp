// The explanations of a verdict for people: a folded Markdown block per explained configuration (the PR comment,
// the step summary, rnx compare --format markdown) and terminal text (rnx compare, rnx explain, rnx gate).
#pragma once

#include "rnx/common/verdict_document.hpp"

#include <string>

namespace rnx {

// How many ranked changes the folded block and the terminal show of each explanation.
inline constexpr std::size_t explanation_lines_shown = 5;

// One <details> block per configuration with an explanation: its top five changes, its counts beside the time,
// and the profiling's cost. "" when no configuration carries one.
std::string render_explanations_markdown(const verdict_document& v);
std::string render_explanations_text(const verdict_document& v);

}  // namespace rnx
