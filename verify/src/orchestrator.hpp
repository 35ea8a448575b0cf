// Inside rnx_verify: what the orchestrator (verify.cpp) shares with the worker's launch (launch.cpp), the
// reading of its result lines into report rows (report_rows.cpp) and the renderers (render.cpp).
#pragma once

#include "rnx/verify/verify.hpp"
#include "worker_events.hpp"

#include <boost/json/object.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace rnx::verify::detail {

// How the worker ran: its result lines (worker_events.hpp; a line that was not JSON as a garbage_event), how it ended.
struct worker_outcome {
  std::vector<boost::json::object> events;
  std::string stderr_tail;
  int exit_code = 0;
  int signal = 0;
  std::string killed_for;  // wall-clock or memory, when the parent killed it
  bool address_space_limited = false;
};

// Runs the worker in the sandbox on `o` in the scratch folder `dir`, with the environment `env`; blocks until it
// ends or is killed (wall clock, memory).
worker_outcome run_worker(const verify_options& o, const std::filesystem::path& dir,
                          const std::vector<std::string>& env);

// Adds every row of the check table to `report`, as the worker reported it (a row it did not report fails), and
// the device and speedup it reported; `withheld` names the environment variables the sandbox kept from it.
// Throws rnx::error where the worker could not run the checks (a "fatal" line) or wrote a check row whose result is
// no outcome; any other line of a known event that does not read as one is tampering, named in the sandbox row.
void add_rows(verify_report& report, const worker_outcome& w, const verify_options& o,
              const std::vector<std::string>& withheld);

// The first `most` of `names` joined with ", ", then ", ..." when there are more.
std::string join_names(const std::vector<std::string>& names, std::size_t most);

}  // namespace rnx::verify::detail
