// The verdict policy's options: one parser for every command (rnx compare, gate, bench --pair, bisect), one range
// (the [gate] key's) and one default (gate_policy{}'s, which the manifest reference states). Real CLI11 parses.
#include "rnx/common/error.hpp"
#include "rnx/common/manifest_keys.hpp"
#include "rnx/common/policy_options.hpp"

#include <CLI/CLI.hpp>
#include <doctest/doctest.h>

#include <cctype>
#include <sstream>
#include <string>
#include <vector>

namespace {

// The policy after parsing `args` as a command with every option, over `base`.
rnx::gate_policy parsed(std::vector<std::string> args, rnx::gate_policy base = {}) {
  CLI::App app("test");
  rnx::policy_overrides given;
  rnx::add_policy_options(app, given,
                          {rnx::policy_option::rope, rnx::policy_option::probability, rnx::policy_option::min_samples,
                           rnx::policy_option::resamples, rnx::policy_option::statistic, rnx::policy_option::on_abstain,
                           rnx::policy_option::report_only},
                          "rnx.toml's [gate]");
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  app.parse(reversed);
  return rnx::with_overrides(base, given);
}

std::string error_of(std::vector<std::string> args) {
  try {
    parsed(std::move(args));
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::usage);
    return e.what();
  }
  return "";
}

std::string text_of(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

TEST_CASE("the [gate] keys' defaults as the reference writes them are gate_policy{}'s: one default") {
  const rnx::gate_policy defaults;
  CHECK(rnx::find_manifest_key("gate", "rope")->default_text == text_of(defaults.rope));
  CHECK(rnx::find_manifest_key("gate", "probability")->default_text == text_of(defaults.probability));
  CHECK(rnx::find_manifest_key("gate", "min_samples")->default_text == text_of(defaults.min_samples));
  CHECK(rnx::find_manifest_key("gate", "resamples")->default_text == text_of(defaults.resamples));
  CHECK(rnx::find_manifest_key("gate", "statistic")->default_text ==
        "\"" + std::string(rnx::to_string(defaults.stat)) + "\"");
  std::string on_abstain(rnx::to_string(defaults.on_abstain));  // "WARN": rnx.toml writes it in lower case
  for (char& c : on_abstain) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  CHECK(rnx::find_manifest_key("gate", "on_abstain")->default_text == "\"" + on_abstain + "\"");
}

TEST_CASE("no option given keeps the policy it is applied to; each given one replaces its field") {
  rnx::gate_policy manifest;
  manifest.rope = 0.03;
  manifest.on_abstain = rnx::overall::pass;
  const rnx::gate_policy kept = parsed({}, manifest);
  CHECK(kept.rope == 0.03);
  CHECK(kept.on_abstain == rnx::overall::pass);

  const rnx::gate_policy p = parsed({"--rope", "0.05", "--probability", "0.9", "--min-samples", "12", "--resamples",
                                     "500", "--statistic", "mean", "--on-abstain", "block", "--report-only"},
                                    manifest);
  CHECK(p.rope == 0.05);
  CHECK(p.probability == 0.9);
  CHECK(p.min_samples == 12);
  CHECK(p.resamples == 500);
  CHECK(p.stat == rnx::statistic::mean);
  CHECK(p.on_abstain == rnx::overall::block);
  CHECK(p.report_only);
}

TEST_CASE("a bad value names the flag, the range as rnx.toml reads it, and a value that works") {
  CHECK(error_of({"--rope", "2"}) ==
        "--rope \"2\": expected a number, 0 < x < 1 (as rnx.toml's gate.rope); write e.g. --rope 0.02");
  CHECK(error_of({"--rope", "2%"}) ==
        "--rope \"2%\": expected a number, 0 < x < 1 (as rnx.toml's gate.rope); write e.g. --rope 0.02");
  CHECK(error_of({"--rope", "0"}).find("0 < x < 1") != std::string::npos);
  CHECK(error_of({"--probability", "0.5"}).find("--probability \"0.5\": expected a number, 0.5 < x < 1") == 0);
  CHECK(error_of({"--min-samples", "3.5"}).find("--min-samples \"3.5\": expected an integer") == 0);
  CHECK(error_of({"--min-samples", "1"}).find("2 to 1000000") != std::string::npos);
  CHECK(error_of({"--resamples", "nan"}).find("--resamples") == 0);
  CHECK(error_of({"--statistic", "mode"}) == "--statistic \"mode\" must be median or mean");
  CHECK(error_of({"--on-abstain", "maybe"}) == "--on-abstain \"maybe\" must be pass, warn or block");
}

TEST_CASE("a command takes only the options it asks for; the help names where the default comes from") {
  CLI::App app("bench");
  rnx::policy_overrides looks;
  rnx::add_policy_options(app, looks, {rnx::policy_option::rope, rnx::policy_option::probability}, "rnx.toml's [gate]");
  CHECK(app.get_option_no_throw("--rope") != nullptr);
  CHECK(app.get_option_no_throw("--probability") != nullptr);
  CHECK(app.get_option_no_throw("--min-samples") == nullptr);
  CHECK(app.get_option_no_throw("--report-only") == nullptr);
  CHECK(app.get_option("--rope")->get_description().find("(default: rnx.toml's [gate] rope, else 0.02)") !=
        std::string::npos);
  CHECK_FALSE(rnx::any_given(looks));
  app.parse(std::vector<std::string>{"0.04", "--rope"});
  CHECK(rnx::any_given(looks));
}
