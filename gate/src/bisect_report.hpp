// What `rnx bisect` prints, writes (bisect.json) and posts to GitHub (Markdown).
#pragma once

#include "bisect_revisions.hpp"
#include "bisect_search.hpp"

#include <boost/json/value.hpp>

#include <string>

namespace rnx::gate {

struct bisect_findings {
  const bisect_setup& setup;
  const bisect_outcome& outcome;
  const config_key& key;
  double seconds = 0;  // wall time of the whole bisect
};

// The comparisons made and the culprits with sizes and repro commands, for a terminal (escaped).
std::string render_bisect_text(const bisect_findings& f);
// The same for a GitHub comment or issue body (escaped Markdown).
std::string render_bisect_markdown(const bisect_findings& f);
// rnx.bisect/v1: the range, every comparison, the culprits.
boost::json::value bisect_json(const bisect_findings& f);

}  // namespace rnx::gate
