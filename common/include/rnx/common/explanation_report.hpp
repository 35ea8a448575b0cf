// The explanations of a verdict: attached to a configuration (with what its counts say about its decision), and for
// people: a folded Markdown block per explained configuration (the PR comment, the step summary, rnx compare
// --format markdown) and terminal text (rnx compare, rnx explain, rnx gate).
#pragma once

#include "rnx/common/verdict_document.hpp"

#include <string>

namespace rnx {

// How many ranked changes the folded block and the terminal show of each explanation.
inline constexpr std::size_t explanation_lines_shown = 5;

// What the counts say about the decision: an abstaining time with a count of executed work moved past the
// threshold, or a slower time with none moved (a clock, placement or contention change rather than more work); ""
// otherwise, and "" where no executed count is known on both sides.
std::string counts_reason(decision d, const explanation& e);

// Sets c.explanation; where counts_reason has words, they lead the explanation's note and end the reason. The
// decision never changes. The gate uses it, and the store again when it re-derives a paired verdict.
void attach_explanation(config_verdict& c, explanation e);

// One <details> block per configuration with an explanation: its top five changes, its counts beside the time,
// and the profiling's cost. "" when no configuration carries one.
std::string render_explanations_markdown(const verdict_document& v);
std::string render_explanations_text(const verdict_document& v);

}  // namespace rnx
