// The verdict of a sharded run: the configurations of shards that did not arrive are named, never passed.
#pragma once

#include "rnx/common/shard.hpp"
#include "rnx/common/verdict_document.hpp"

namespace rnx::stats {

// Gives every configuration of a missing shard the decision `missing` with a reason naming its shard (replacing
// the entry a comparison with a baseline made of it), recomputes the overall answer (missing is WARN at least;
// a slower or broken configuration of an arrived shard still BLOCKs) and puts missing_shards_text first in the
// reason. A merge with nothing missing leaves the verdict as it is.
void add_missing_shards(verdict_document& verdict, const shard_merge& merge, const gate_policy& policy);

}  // namespace rnx::stats
