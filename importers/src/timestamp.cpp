// The harnesses' time stamps as UTC: ISO 8601 with or without a UTC offset, and old Google Benchmark's local forms.
#include "import_detail.hpp"

#include <array>
#include <chrono>
#include <cstdio>

namespace rnx::importers::detail {

namespace {

// Consumes `width` digits at `pos`; nullopt when they are not all digits.
std::optional<int> digits(std::string_view text, std::size_t& pos, std::size_t width) {
  if (pos + width > text.size()) return std::nullopt;
  int n = 0;
  for (std::size_t i = 0; i < width; ++i) {
    const char c = text[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  pos += width;
  return n;
}

bool expect_char(std::string_view text, std::size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

// Three numbers joined by `sep` ("2024-05-01", "05/01/24", "12:30:00"): the first `first_width` digits, the others
// two; nullopt when any is missing.
std::optional<std::array<int, 3>> three_numbers(std::string_view text, std::size_t& pos, std::size_t first_width,
                                                char sep) {
  auto a = digits(text, pos, first_width);
  auto b = a && expect_char(text, pos, sep) ? digits(text, pos, 2) : std::nullopt;
  auto c = b && expect_char(text, pos, sep) ? digits(text, pos, 2) : std::nullopt;
  if (!c) return std::nullopt;
  return std::array<int, 3>{*a, *b, *c};
}

struct civil_time {
  int year = 0;
  int month = 0;
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
};

// "YYYY-MM-DD" then "T" or " " then "HH:MM:SS" (ISO 8601, and Google Benchmark before its offsets), or
// "MM/DD/YY HH:MM:SS" (the C locale's %x %X, which the oldest Google Benchmark wrote).
std::optional<civil_time> read_civil(std::string_view text, std::size_t& pos) {
  civil_time t;
  std::size_t p = 0;
  if (text.size() >= 8 && text[2] == '/' && text[5] == '/') {
    auto mdy = three_numbers(text, p, 2, '/');
    if (!mdy) return std::nullopt;
    t.year = 2000 + (*mdy)[2];
    t.month = (*mdy)[0];
    t.day = (*mdy)[1];
  } else {
    auto ymd = three_numbers(text, p, 4, '-');
    if (!ymd) return std::nullopt;
    t.year = (*ymd)[0];
    t.month = (*ymd)[1];
    t.day = (*ymd)[2];
  }
  if (!expect_char(text, p, 'T') && !expect_char(text, p, ' ')) return std::nullopt;
  auto hms = three_numbers(text, p, 2, ':');
  if (!hms) return std::nullopt;
  t.hour = (*hms)[0];
  t.minute = (*hms)[1];
  t.second = (*hms)[2];
  const std::chrono::year_month_day date{std::chrono::year{t.year}, std::chrono::month{static_cast<unsigned>(t.month)},
                                         std::chrono::day{static_cast<unsigned>(t.day)}};
  // 60: a leap second, as ISO 8601 allows.
  if (!date.ok() || t.hour > 23 || t.minute > 59 || t.second > 60) return std::nullopt;
  pos = p;
  return t;
}

// The offset east of UTC in minutes: "Z", "+02:00", "-0500", "+02"; nullopt when malformed.
std::optional<int> read_offset(std::string_view rest) {
  if (rest == "Z" || rest == "z") return 0;
  if (rest.size() < 3 || (rest[0] != '+' && rest[0] != '-')) return std::nullopt;
  const int sign = rest[0] == '-' ? -1 : 1;
  std::size_t p = 1;
  auto h = digits(rest, p, 2);
  if (!h) return std::nullopt;
  int minutes = 0;
  if (p < rest.size()) {
    expect_char(rest, p, ':');
    auto m = digits(rest, p, 2);
    if (!m || p != rest.size()) return std::nullopt;
    minutes = *m;
  }
  if (*h > 23 || minutes > 59) return std::nullopt;
  return sign * (*h * 60 + minutes);
}

}  // namespace

std::optional<time_stamp> read_timestamp(std::string_view text) {
  std::size_t pos = 0;
  const auto civil = read_civil(text, pos);
  if (!civil) return std::nullopt;
  std::string_view rest = text.substr(pos);
  if (!rest.empty() && (rest.front() == '.' || rest.front() == ',')) {
    // Fractions of a second are dropped: created_at is to the second.
    std::size_t i = 1;
    while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') ++i;
    if (i == 1) return std::nullopt;
    rest = rest.substr(i);
  }
  time_stamp out;
  int offset_minutes = 0;
  if (rest.empty()) {
    out.naive = true;
  } else {
    const auto offset = read_offset(rest);
    if (!offset) return std::nullopt;
    offset_minutes = *offset;
  }
  using namespace std::chrono;
  const sys_days day = year{civil->year} / month{static_cast<unsigned>(civil->month)} /
                       std::chrono::day{static_cast<unsigned>(civil->day)};
  const sys_seconds local = day + hours{civil->hour} + minutes{civil->minute} + seconds{std::min(civil->second, 59)};
  const sys_seconds utc = local - minutes{offset_minutes};
  const sys_days utc_day = floor<days>(utc);
  const year_month_day ymd{utc_day};
  const hh_mm_ss<seconds> clock{utc - utc_day};
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02dZ", int(ymd.year()), unsigned(ymd.month()),
                unsigned(ymd.day()), static_cast<int>(clock.hours().count()), static_cast<int>(clock.minutes().count()),
                static_cast<int>(clock.seconds().count()));
  out.utc = buffer;
  return out;
}

}  // namespace rnx::importers::detail
