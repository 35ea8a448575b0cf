// rnx::run_with_retries and retry_backoff (common/include/rnx/common/retry.hpp): the delays between attempts, the
// cap, an attempt's own wait, a wait that gives up, and a failure that is not retryable. The wait is injected and
// only records what it was asked: nothing here sleeps.
#include "rnx/common/error.hpp"
#include "rnx/common/retry.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <vector>

using namespace rnx;
using std::chrono::milliseconds;

namespace {

// A wait that records each delay and answers `keep_going`.
struct recorded_waits {
  std::vector<milliseconds> delays;
  bool keep_going = true;
  retry_wait fn() {
    return [this](milliseconds d) {
      delays.push_back(d);
      return keep_going;
    };
  }
};

}  // namespace

TEST_CASE("every attempt failing: the backoff's attempts, a delay between each, none after the last") {
  recorded_waits waits;
  std::vector<int> attempts;
  const bool done = run_with_retries(
      retry_backoff{4, milliseconds(500)},
      [&](int n) {
        attempts.push_back(n);
        return attempt_outcome::again();
      },
      waits.fn());
  CHECK_FALSE(done);
  CHECK(attempts == std::vector<int>{1, 2, 3, 4});
  CHECK(waits.delays == std::vector<milliseconds>{milliseconds(500), milliseconds(1000), milliseconds(2000)});
}

TEST_CASE("the delays grow by the factor up to the cap, a first delay above the cap included") {
  const retry_backoff capped{6, milliseconds(1000), 2.0, milliseconds(3000)};
  CHECK(capped.delay_after(1) == milliseconds(1000));
  CHECK(capped.delay_after(2) == milliseconds(2000));
  CHECK(capped.delay_after(3) == milliseconds(3000));
  CHECK(capped.delay_after(5) == milliseconds(3000));
  CHECK(retry_backoff{3, milliseconds(9000), 2.0, milliseconds(3000)}.delay_after(1) == milliseconds(3000));
  const retry_backoff tripling{3, milliseconds(100), 3.0};
  CHECK(tripling.delay_after(3) == milliseconds(900));
  // Uncapped, the delay stops at the largest duration instead of overflowing.
  CHECK(retry_backoff{200, milliseconds(500)}.delay_after(200) == milliseconds::max());
}

TEST_CASE("a success ends the retries and is reported") {
  recorded_waits waits;
  int calls = 0;
  const bool done = run_with_retries(
      retry_backoff{5, milliseconds(10)},
      [&](int n) {
        ++calls;
        return n == 3 ? attempt_outcome::success() : attempt_outcome::again();
      },
      waits.fn());
  CHECK(done);
  CHECK(calls == 3);
  CHECK(waits.delays.size() == 2);
}

TEST_CASE("an attempt's own wait (a Retry-After) replaces that delay; the backoff goes on as before") {
  recorded_waits waits;
  run_with_retries(
      retry_backoff{4, milliseconds(500)},
      [&](int n) { return n == 1 ? attempt_outcome::again(milliseconds(7000)) : attempt_outcome::again(); },
      waits.fn());
  CHECK(waits.delays == std::vector<milliseconds>{milliseconds(7000), milliseconds(1000), milliseconds(2000)});
}

TEST_CASE("a wait that gives up (a server stopping) ends the retries unsuccessful") {
  recorded_waits waits;
  waits.keep_going = false;
  int calls = 0;
  const bool done = run_with_retries(
      retry_backoff{5, milliseconds(500)},
      [&](int) {
        ++calls;
        return attempt_outcome::again();
      },
      waits.fn());
  CHECK_FALSE(done);
  CHECK(calls == 1);
  CHECK(waits.delays.size() == 1);
}

TEST_CASE("a failure the caller does not retry is its exception, let through at once") {
  recorded_waits waits;
  int calls = 0;
  auto refused = [&] {
    run_with_retries(
        retry_backoff{5, milliseconds(500)},
        [&](int n) -> attempt_outcome {
          ++calls;
          if (n == 2) throw error(errc::unauthorized, "the key was rejected");
          return attempt_outcome::again();
        },
        waits.fn());
  };
  CHECK_THROWS_AS(refused(), error);
  CHECK(calls == 2);
  CHECK(waits.delays.size() == 1);
}

TEST_CASE("no attempts asked for makes none") {
  int calls = 0;
  recorded_waits waits;
  CHECK_FALSE(run_with_retries(
      retry_backoff{0, milliseconds(500)},
      [&](int) {
        ++calls;
        return attempt_outcome::success();
      },
      waits.fn()));
  CHECK(calls == 0);
}
