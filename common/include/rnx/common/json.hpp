// JSON helpers over Boost.JSON: parsing with line/column errors and a path-tracking field reader.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::json {

namespace bj = boost::json;

// Parses text; on failure throws rnx::error(bad_input) "SOURCE:LINE:COL: malformed JSON: REASON".
// max_depth guards against hostile nesting.
bj::value parse(std::string_view text, std::string_view source, std::size_t max_depth = 64);
// Reads and parses a file; a missing file is errc::not_found naming the path.
bj::value parse_file(const std::filesystem::path& path, std::size_t max_depth = 64);
// Compact serialization; pretty=true indents by two spaces for people and diffs. Numbers are plain decimals:
// a double is the shortest decimal that reads back as it, with a fraction (0.00001, 2.0, never 1E-5 or 2E0).
std::string serialize(const bj::value& v, bool pretty = false);

// Walks a document keeping the JSON path ("$.results[3].samples_ms") for error messages.
// Every failure throws rnx::error(invalid) "SOURCE: $.path: expected X, got Y".
class reader {
 public:
  reader(const bj::value& v, std::string source, std::string path = "$")
      : value_(&v), source_(std::move(source)), path_(std::move(path)) {}

  const bj::value& value() const { return *value_; }
  const std::string& path() const { return path_; }
  const std::string& source() const { return source_; }

  const bj::object& object() const;
  const bj::array& array() const;
  bool has(std::string_view key) const;
  reader at(std::string_view key) const;                    // required member
  std::optional<reader> maybe(std::string_view key) const;  // absent or null -> nullopt
  reader at(std::size_t index) const;

  std::string string() const;
  double number() const;         // any JSON number, finite
  std::int64_t integer() const;  // integral number
  bool boolean() const;

  std::string string(std::string_view key) const { return at(key).string(); }
  std::string string_or(std::string_view key, std::string fallback) const;
  double number(std::string_view key) const { return at(key).number(); }
  std::int64_t integer(std::string_view key) const { return at(key).integer(); }

  // Rejects members not in `allowed`, naming the unknown one.
  void only_keys(std::initializer_list<std::string_view> allowed) const;
  [[noreturn]] void fail(std::string_view expected) const;

 private:
  const bj::value* value_;
  std::string source_;
  std::string path_;
};

std::string_view kind_name(const bj::value& v);

}  // namespace rnx::json
