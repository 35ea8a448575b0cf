// rnx::errc (common/include/rnx/common/error.hpp): every kind's name reads back to it, and an error renders itself as
// the service's JSON.
#include "rnx/common/error.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace rnx;

TEST_CASE("errc: every kind's name parses back to it; other text does not parse") {
  for (errc c : {errc::usage, errc::bad_input, errc::invalid, errc::not_found, errc::conflict, errc::unauthorized,
                 errc::forbidden, errc::too_large, errc::unavailable, errc::kernel_failed, errc::internal}) {
    CHECK(errc_from_name(errc_name(c)) == c);
  }
  CHECK(std::string(errc_name(errc::not_found)) == "not_found");
  CHECK_FALSE(errc_from_name("NOT_FOUND").has_value());
  CHECK_FALSE(errc_from_name("").has_value());
}

TEST_CASE("an error's JSON names its kind and message") {
  const error e(errc::not_found, "run 7 does not exist");
  const boost::json::object o = e.to_json();
  CHECK(o.at("error").at("code").as_string() == "not_found");
  CHECK(o.at("error").at("message").as_string() == "run 7 does not exist");
  CHECK(e.exit_code() == 2);
  CHECK(e.http_status() == 404);
}
