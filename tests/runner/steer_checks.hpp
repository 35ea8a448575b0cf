// What a runner test may see of the checks that a head cannot steer its base (docs/runner.md): on a loaded machine
// the control or the load-order check can read noise as a steer, and the pair then goes on by process pairing,
// saying so. That is those checks' business, tested on their own; a test of something else skips such a pair.
#pragma once

#include "rnx/common/run_document.hpp"

namespace rnx::test {

// True when a steering check (the control or the load order) sent this pair to process pairing.
inline bool split_by_steer_check(const run_result& r) {
  return r.pairing == pairing_mode::process && r.base_control && r.base_control->steered;
}

}  // namespace rnx::test
