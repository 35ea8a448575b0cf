// What the pages read from URLs: configurations, times, run lists, prices and history ranges; each mistake is a
// bad_input error naming the parameter and what to write instead.
#include "rnx/service/pages.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/text.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

namespace rnx::pages {

namespace {

// Shows untrusted text in a message: at most 60 characters, control and non-ASCII bytes as '?'.
std::string shown(std::string_view text) {
  std::string out = message_shown(text, 60);
  return text.size() > 60 ? out + "..." : out;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

std::int64_t day_number(const std::string& rfc3339) {
  return days_from_civil(std::stoll(rfc3339.substr(0, 4)), static_cast<unsigned>(std::stoi(rfc3339.substr(5, 2))),
                         static_cast<unsigned>(std::stoi(rfc3339.substr(8, 2))));
}

}  // namespace

std::optional<std::int64_t> parse_positive_id(std::string_view text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1 || text.size() > 18) return std::nullopt;
  return v;
}

config_key parse_config(std::string_view text) {
  // kernel/runtime/dtype/bN, split from the right: a kernel name may itself hold '/'.
  auto fail = [&] {
    throw error(errc::bad_input,
                "configuration \"" + shown(text) +
                    "\" is not valid: write KERNEL/RUNTIME/DTYPE/bBATCH, e.g. softmax/eager/float32/b8 "
                    "(percent-encode it as one path segment)");
  };
  std::vector<std::string_view> parts;
  std::string_view rest = text;
  for (int i = 0; i < 3; ++i) {
    auto slash = rest.rfind('/');
    if (slash == std::string_view::npos) fail();
    parts.push_back(rest.substr(slash + 1));
    rest = rest.substr(0, slash);
  }
  if (rest.empty() || rest.size() > 200) fail();
  std::string_view batch = parts[0];
  if (batch.size() < 2 || batch[0] != 'b') fail();
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(batch.data() + 1, batch.data() + batch.size(), n);
  if (ec != std::errc() || end != batch.data() + batch.size() || n < 0) fail();
  if (parts[1].empty() || parts[2].empty()) fail();
  return {std::string(rest), std::string(parts[2]), std::string(parts[1]), n};
}

std::string parse_time(std::string_view text, std::string_view parameter) {
  auto fail = [&] {
    throw error(errc::bad_input, "query parameter " + std::string(parameter) + "=\"" + shown(text) +
                                     "\" is not a date: write YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)");
  };
  auto digits = [&](std::size_t at, std::size_t n) {
    for (std::size_t i = at; i < at + n; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
    }
    return true;
  };
  if (text.size() != 10 && text.size() != 20) fail();
  if (!digits(0, 4) || text[4] != '-' || !digits(5, 2) || text[7] != '-' || !digits(8, 2)) fail();
  int month = std::stoi(std::string(text.substr(5, 2)));
  int day = std::stoi(std::string(text.substr(8, 2)));
  if (month < 1 || month > 12 || day < 1 || day > 31) fail();
  if (text.size() == 10) return std::string(text) + "T00:00:00Z";
  if (text[10] != 'T' || !digits(11, 2) || text[13] != ':' || !digits(14, 2) || text[16] != ':' || !digits(17, 2) ||
      text[19] != 'Z') {
    fail();
  }
  if (std::stoi(std::string(text.substr(11, 2))) > 23 || std::stoi(std::string(text.substr(14, 2))) > 59 ||
      std::stoi(std::string(text.substr(17, 2))) > 60) {
    fail();
  }
  return std::string(text);
}

void validate(const history_query& q) {
  if (q.points < 10 || q.points > max_points) {
    throw error(errc::bad_input, "query parameter points=" + std::to_string(q.points) + " is out of range: use 10 to " +
                                     std::to_string(max_points) + " points per environment");
  }
  if (q.from && q.to) {
    if (*q.to <= *q.from) {
      throw error(errc::bad_input, "query parameters from=" + *q.from + " and to=" + *q.to +
                                       " give an empty range: `to` must come after `from`");
    }
    if (day_number(*q.to) - day_number(*q.from) > max_range_days) {
      throw error(errc::bad_input, "the range from=" + *q.from + " to=" + *q.to + " is longer than " +
                                       std::to_string(max_range_days) +
                                       " days; ask for a shorter range or leave from/to out for all runs");
    }
  }
}

std::vector<std::int64_t> parse_run_list(std::string_view text) {
  std::vector<std::int64_t> ids;
  std::set<std::int64_t> seen;
  std::string_view rest = text;
  while (true) {
    auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    auto id = parse_positive_id(item);
    if (!id) {
      throw error(errc::bad_input, "query parameter runs: \"" + shown(item) +
                                       "\" is not a run id; write runs=ID,ID,... with 2 to " +
                                       std::to_string(max_compare_runs) + " numeric run ids");
    }
    if (!seen.insert(*id).second) {
      throw error(errc::bad_input, "query parameter runs names run " + std::to_string(*id) + " twice; name each once");
    }
    ids.push_back(*id);
    if (ids.size() > static_cast<std::size_t>(max_compare_runs)) {
      throw error(errc::bad_input, "query parameter runs names more than " + std::to_string(max_compare_runs) +
                                       " runs; compare at most " + std::to_string(max_compare_runs));
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (ids.size() < 2) {
    throw error(errc::bad_input, "query parameter runs names one run; a comparison needs 2 to " +
                                     std::to_string(max_compare_runs) + " runs (runs=ID,ID)");
  }
  return ids;
}

std::map<std::string, double> parse_prices(std::string_view text) {
  std::map<std::string, double> prices;
  if (text.empty()) return prices;
  std::string_view rest = text;
  while (true) {
    auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    auto colon = item.rfind(':');
    double price = 0;
    bool ok = colon != std::string_view::npos && colon > 0 && colon + 1 < item.size() && prices.size() < 16;
    if (ok) {
      std::string number(item.substr(colon + 1));
      char* end = nullptr;
      price = std::strtod(number.c_str(), &end);
      ok = end == number.c_str() + number.size() && std::isfinite(price) && price > 0 && price < 1e6;
    }
    if (!ok) {
      throw error(errc::bad_input, "query parameter prices: \"" + shown(item) +
                                       "\" is not ENV_ID:USD_PER_HOUR with a price above 0 and below 1000000 "
                                       "(e.g. prices=ab12cd:2.50,ef34gh:0.90)");
    }
    prices[std::string(item.substr(0, colon))] = price;
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return prices;
}

}  // namespace rnx::pages
