// rnx::json::serialize: numbers are plain decimals that read back exactly; structure and escaping as Boost.JSON.
#include "rnx/common/json.hpp"

#include <doctest/doctest.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <random>

using namespace rnx;

namespace {

std::string number(double d) { return json::serialize(boost::json::value(d)); }

}  // namespace

TEST_CASE("doubles are written as plain decimals with a fraction, never in exponent form") {
  CHECK(number(0.00001) == "0.00001");
  CHECK(number(1e-7) == "0.0000001");
  CHECK(number(0.02) == "0.02");
  CHECK(number(0.5) == "0.5");
  CHECK(number(1.0) == "1.0");
  CHECK(number(12.0) == "12.0");
  CHECK(number(-3.25) == "-3.25");
  CHECK(number(-0.0) == "-0.0");
  CHECK(number(2.0 / 3) == "0.6666666666666666");
  CHECK(number(1.0035) == "1.0035");
  CHECK(number(1e20) == "100000000000000000000.0");
  // JSON has no NaN or infinity.
  CHECK(number(std::numeric_limits<double>::quiet_NaN()) == "null");
  CHECK(number(std::numeric_limits<double>::infinity()) == "null");
  // Integers stay integers.
  CHECK(json::serialize(boost::json::value(std::int64_t{42})) == "42");
  CHECK(json::serialize(boost::json::value(std::uint64_t{18446744073709551615u})) == "18446744073709551615");
}

// Read back with std::from_chars, which rounds exactly, and with json::parse, which must agree: Boost.JSON 1.81's
// own parser can be one unit in the last place off for about a fifth of these values, whichever way they are
// written (its exponent form included); json::parse reads every number's text exactly.
TEST_CASE("every double reads back as the same double (shortest round trip), extremes included") {
  std::mt19937_64 rng(20261203);
  std::uniform_real_distribution<double> exponent(-30, 30);
  std::uniform_real_distribution<double> mantissa(1, 10);
  std::vector<double> values = {std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::denorm_min(),
                                0.1,
                                0.3,
                                1e-300};
  for (int i = 0; i < 2000; ++i) values.push_back(mantissa(rng) * std::pow(10.0, exponent(rng)));
  for (double d : values) {
    CAPTURE(d);
    std::string text = number(d);
    CHECK(text.find_first_of("eE") == std::string::npos);
    REQUIRE(json::parse(text, "number").is_double());
    CHECK(json::parse(text, "number").as_double() == d);
    double back = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), back);
    CHECK(ec == std::errc());
    CHECK(end == text.data() + text.size());
    CHECK(back == d);
  }
}

// A run document's samples go writer -> service -> store -> verdict; the bootstrap is seeded by their bits, so one
// unit in the last place changes every interval. These are values Boost.JSON 1.81 alone reads off by one unit.
TEST_CASE("a document read back holds the very doubles written, in any notation") {
  const std::vector<double> samples = {1.7350280055981457, 1.6594475415708159, 1.6972130105316101};
  boost::json::array written;
  for (double d : samples) written.push_back(d);
  auto back = json::parse(json::serialize(boost::json::object{{"samples_ms", written}}), "doc");
  const auto& read = back.at("samples_ms").as_array();
  REQUIRE(read.size() == samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) CHECK(read[i].as_double() == samples[i]);
  CHECK(json::parse("[17350280055981457e-16]", "exponent").at(0).as_double() == 1.7350280055981457);
  CHECK(json::parse("  -0.5e1 ", "spaces").as_double() == -5.0);
  CHECK(json::parse("[1, 18446744073709551615, -3]", "integers") == boost::json::array{1, 18446744073709551615ULL, -3});
  CHECK_THROWS_WITH(json::parse("[1.5] x", "tail"), doctest::Contains("malformed JSON"));
  CHECK_THROWS_WITH(json::parse("[[[1.0]]]", "deep", 2), doctest::Contains("deep:1:"));
}

TEST_CASE("compact and pretty output share the number format; strings are escaped") {
  boost::json::value v = {{"rope", 0.00001},           {"name", "a \"b\"\n"}, {"samples", {1.0, 0.000125, 3}},
                          {"nested", {{{"p", 0.95}}}}, {"none", nullptr},     {"ok", true}};
  CHECK(
      json::serialize(v) ==
      R"({"rope":0.00001,"name":"a \"b\"\n","samples":[1.0,0.000125,3],"nested":[{"p":0.95}],"none":null,"ok":true})");
  CHECK(json::serialize(v, true) ==
        "{\n"
        "  \"rope\": 0.00001,\n"
        "  \"name\": \"a \\\"b\\\"\\n\",\n"
        "  \"samples\": [1.0,0.000125,3],\n"
        "  \"nested\": [\n"
        "    {\n"
        "      \"p\": 0.95\n"
        "    }\n"
        "  ],\n"
        "  \"none\": null,\n"
        "  \"ok\": true\n"
        "}\n");
  CHECK(json::parse(json::serialize(v, true), "pretty") == v);
}
