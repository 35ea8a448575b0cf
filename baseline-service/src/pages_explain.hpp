// The run page's "Why the time moved" section: each explained configuration's profile diff and counts as tables
// (the run page on rnx-server, and the same page in `rnx report` and the gate's report.html).
#pragma once

#include "rnx/service/page_views.hpp"

#include <string>

namespace rnx::pages {

// One folded table of changes and one of counts per configuration whose verdict carries an explanation, slower
// and abstaining ones open; "" when none does.
std::string explanation_section(const run_view& v);

}  // namespace rnx::pages
