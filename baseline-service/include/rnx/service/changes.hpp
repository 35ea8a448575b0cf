// Change points after each stored run of a branch: rnx::stats' detector over each configuration's history of that
// branch in the run's environment, the new ones stored once (shared by rnx-server and the embedded store).
//
//   auto upload = rnx::store::upload_run(db, project.id, run);
//   for (const auto& c : rnx::store::detect_changes(db, upload.run.id))   // only the ones not stored before
//     std::cout << c.key.label() << " x" << c.ratio << " from " << c.commit << "\n";
#pragma once

#include "rnx/service/store.hpp"
#include "rnx/stats/changepoint.hpp"

#include <boost/json/value.hpp>

#include <cstdint>
#include <vector>

namespace rnx::store {

// How many of a configuration's newest runs the detector reads.
inline constexpr int change_history_runs = 200;

// After run `run_id` was stored: for a push run (no pull request) on a named branch, scans the history of each of
// its measured configurations up to it (that branch, that environment, push runs only), stores the change points
// that are not stored yet and returns them; a change found a run or two away from a stored one in the same
// direction is that one. Nothing for a pull-request run. Called for a store's push runs oldest first, it replays
// what would have been found as they arrived. not_found for an unknown run.
std::vector<change_record> detect_changes(database& db, std::int64_t run_id, const stats::change_options& options = {});

// The API's and `rnx changes --format json`'s shape of a change point (ids as strings, like every id the API writes).
boost::json::value change_json(const change_record& change);

}  // namespace rnx::store
