// What an optimize run publishes (its tables, the proposal's body and commit message, the JSON record), and the
// rule for text a candidate produced in all of them: data, shown only as an excerpt after the secret scan
// (rnx/common/secret_scan.hpp; docs/optimize.md, candidate text is data), and never in a commit message.
#pragma once

#include "rnx/common/run_document.hpp"
#include "rnx/common/secret_scan.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace rnx::optimize::detail {

// How much of a text a candidate produced (its exception, its output, through a reason, a benchmark's reason or an
// audit row) each place shows, after the secret scan (docs/optimize.md, candidate text is data): a few hundred bytes
// in the pull request, the step summary and the terminal; more in the JSON record; the rewriter gets enough to
// act on; a log line a little more than a table cell. A commit message shows none of it.
inline constexpr std::size_t published_bytes = 400;
inline constexpr std::size_t record_bytes = 4000;
inline constexpr std::size_t rewriter_bytes = 2000;
inline constexpr std::size_t log_line_bytes = 600;

// The credentials of this process (by value), which the scanner removes wherever they appear.
std::vector<secret_value> own_secrets();

// `v` with `digits` digits after the point.
std::string fixed(double v, int digits);

// The original's benchmark as the rewriter and the record get it: per configuration its status, sample count,
// median and minimum (and the runner's message).
boost::json::value results_json(const std::vector<run_result>& results);

}  // namespace rnx::optimize::detail
