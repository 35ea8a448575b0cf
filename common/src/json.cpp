// JSON parsing with positions, serialization and the path-tracking reader.
#include "rnx/common/json.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/files.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value_stack.hpp>

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace rnx::json {

namespace {

std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// Boost.JSON writes every double in exponent form (0.02 as 2E-2, 1.0 as 1E0); rnx writes the shortest decimal
// that reads back as the same double, with a fraction so it stays a double (2.0, 0.02, 0.00001), which is
// what people, diffs and the documented examples expect. JSON has no NaN or infinity: those are null.
void write_double(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  char buffer[512];  // the longest fixed form of a double (the smallest subnormal) is about 330 characters
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::fixed);
  if (ec != std::errc()) {
    out += bj::serialize(bj::value(d));  // cannot happen with this buffer; still a valid JSON number
    return;
  }
  std::string_view text(buffer, static_cast<std::size_t>(end - buffer));
  out += text;
  if (text.find('.') == std::string_view::npos) out += ".0";
}

void write_compact(std::string& out, const bj::value& v);

void write_scalar(std::string& out, const bj::value& v) {
  if (v.is_double()) {
    write_double(out, v.get_double());
  } else {
    out += bj::serialize(v);
  }
}

void write_compact(std::string& out, const bj::value& v) {
  switch (v.kind()) {
    case bj::kind::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, member] : v.get_object()) {
        if (!first) out += ',';
        first = false;
        out += bj::serialize(bj::string_view(key));
        out += ':';
        write_compact(out, member);
      }
      out += '}';
      return;
    }
    case bj::kind::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v.get_array()) {
        if (!first) out += ',';
        first = false;
        write_compact(out, e);
      }
      out += ']';
      return;
    }
    default: write_scalar(out, v);
  }
}

void pretty_print(std::string& out, const bj::value& v, int indent) {
  const std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
  switch (v.kind()) {
    case bj::kind::object: {
      const auto& obj = v.get_object();
      if (obj.empty()) {
        out += "{}";
        return;
      }
      out += "{\n";
      bool first = true;
      for (const auto& [key, member] : obj) {
        if (!first) out += ",\n";
        first = false;
        out += pad + "  " + bj::serialize(bj::string_view(key)) + ": ";
        pretty_print(out, member, indent + 1);
      }
      out += "\n" + pad + "}";
      return;
    }
    case bj::kind::array: {
      const auto& arr = v.get_array();
      // Arrays of scalars (samples) stay on one line so documents remain readable.
      bool scalars = true;
      for (const auto& e : arr) scalars = scalars && !e.is_object() && !e.is_array();
      if (arr.empty() || scalars) {
        write_compact(out, v);
        return;
      }
      out += "[\n";
      bool first = true;
      for (const auto& e : arr) {
        if (!first) out += ",\n";
        first = false;
        out += pad + "  ";
        pretty_print(out, e, indent + 1);
      }
      out += "\n" + pad + "]";
      return;
    }
    default: write_scalar(out, v);
  }
}

// Builds the value tree as Boost.JSON's own parser does, except numbers with a fraction or exponent: Boost 1.81
// reads about one in six of them one unit in the last place off (1.7350280055981457 as ...455), so a document
// sent, stored and read back would hold other samples than the writer's, and every statistic seeded by its
// samples (the bootstrap's) would give another answer. std::from_chars reads the nearest double, which is the
// one write_double wrote.
class exact_number_handler {
 public:
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  bj::value release() { return values_.release(); }

  bool on_document_begin(boost::system::error_code&) {
    values_.reset();
    return true;
  }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_array_begin(boost::system::error_code&) { return true; }
  bool on_array_end(std::size_t n, boost::system::error_code&) {
    values_.push_array(n);
    return true;
  }
  bool on_object_begin(boost::system::error_code&) { return true; }
  bool on_object_end(std::size_t n, boost::system::error_code&) {
    values_.push_object(n);
    return true;
  }
  bool on_string_part(bj::string_view s, std::size_t, boost::system::error_code&) {
    values_.push_chars(s);
    return true;
  }
  bool on_string(bj::string_view s, std::size_t, boost::system::error_code&) {
    values_.push_string(s);
    return true;
  }
  bool on_key_part(bj::string_view s, std::size_t, boost::system::error_code&) {
    values_.push_chars(s);
    return true;
  }
  bool on_key(bj::string_view s, std::size_t, boost::system::error_code&) {
    values_.push_key(s);
    return true;
  }
  bool on_number_part(bj::string_view s, boost::system::error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, bj::string_view, boost::system::error_code&) {
    number_.clear();
    values_.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, bj::string_view, boost::system::error_code&) {
    number_.clear();
    values_.push_uint64(u);
    return true;
  }
  bool on_double(double d, bj::string_view s, boost::system::error_code&) {
    number_.append(s.data(), s.size());
    double exact = 0;
    auto [end, ec] = std::from_chars(number_.data(), number_.data() + number_.size(), exact);
    // Out of range (1e999) stays what Boost read; the text is valid JSON, so nothing else can fail here.
    values_.push_double(ec == std::errc() && end == number_.data() + number_.size() ? exact : d);
    number_.clear();
    return true;
  }
  bool on_bool(bool b, boost::system::error_code&) {
    values_.push_bool(b);
    return true;
  }
  bool on_null(boost::system::error_code&) {
    values_.push_null();
    return true;
  }
  bool on_comment_part(bj::string_view, boost::system::error_code&) { return true; }
  bool on_comment(bj::string_view, boost::system::error_code&) { return true; }

 private:
  bj::value_stack values_;
  std::string number_;  // the text of a number read in parts
};

}  // namespace

bj::value parse(std::string_view text, std::string_view source, std::size_t max_depth) {
  bj::parse_options options;
  options.max_depth = max_depth;
  bj::basic_parser<exact_number_handler> parser(options);
  boost::system::error_code ec;
  std::size_t consumed = parser.write_some(true, text.data(), text.size(), ec);
  if (!ec && consumed < text.size()) ec = bj::error::extra_data;
  if (!ec && !parser.done()) parser.write_some(false, nullptr, 0, ec);
  if (ec) {
    auto [line, column] = line_column(text, consumed);
    std::ostringstream msg;
    msg << source << ":" << line << ":" << column << ": malformed JSON: " << ec.message();
    throw error(errc::bad_input, msg.str());
  }
  return parser.handler().release();
}

bj::value parse_file(const std::filesystem::path& path, std::size_t max_depth) {
  auto text = read_whole_file(path);
  if (!text) {
    throw error(errc::not_found, path.string() + ": cannot open file (check the path and permissions)");
  }
  return parse(*text, path.string(), max_depth);
}

std::string serialize(const bj::value& v, bool pretty) {
  std::string out;
  if (!pretty) {
    write_compact(out, v);
    return out;
  }
  pretty_print(out, v, 0);
  out += "\n";
  return out;
}

std::string_view kind_name(const bj::value& v) {
  switch (v.kind()) {
    case bj::kind::null: return "null";
    case bj::kind::bool_: return "a boolean";
    case bj::kind::int64:
    case bj::kind::uint64:
    case bj::kind::double_: return "a number";
    case bj::kind::string: return "a string";
    case bj::kind::array: return "an array";
    case bj::kind::object: return "an object";
  }
  return "unknown";
}

void reader::fail(std::string_view expected) const {
  std::ostringstream msg;
  msg << source_ << ": " << path_ << ": expected " << expected << ", got ";
  if (value_->is_string() || value_->is_number()) {
    std::string shown = rnx::json::serialize(*value_);
    if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
    msg << shown;
  } else {
    msg << kind_name(*value_);
  }
  throw error(errc::invalid, msg.str());
}

const bj::object& reader::object() const {
  if (!value_->is_object()) fail("an object");
  return value_->get_object();
}

const bj::array& reader::array() const {
  if (!value_->is_array()) fail("an array");
  return value_->get_array();
}

bool reader::has(std::string_view key) const {
  const auto& obj = object();
  auto it = obj.find(key);
  return it != obj.end() && !it->value().is_null();
}

reader reader::at(std::string_view key) const {
  const auto& obj = object();
  auto it = obj.find(key);
  if (it == obj.end()) {
    throw error(errc::invalid, source_ + ": " + path_ + ": missing required member \"" + std::string(key) + "\"");
  }
  return reader(it->value(), source_, path_ + "." + std::string(key));
}

std::optional<reader> reader::maybe(std::string_view key) const {
  const auto& obj = object();
  auto it = obj.find(key);
  if (it == obj.end() || it->value().is_null()) return std::nullopt;
  return reader(it->value(), source_, path_ + "." + std::string(key));
}

reader reader::at(std::size_t index) const {
  const auto& arr = array();
  if (index >= arr.size()) fail("at least " + std::to_string(index + 1) + " elements");
  return reader(arr[index], source_, path_ + "[" + std::to_string(index) + "]");
}

std::string reader::string() const {
  if (!value_->is_string()) fail("a string");
  return std::string(value_->get_string());
}

std::string reader::string_or(std::string_view key, std::string fallback) const {
  auto member = maybe(key);
  return member ? member->string() : std::move(fallback);
}

double reader::number() const {
  double result = 0;
  if (value_->is_double()) {
    result = value_->get_double();
  } else if (value_->is_int64()) {
    result = static_cast<double>(value_->get_int64());
  } else if (value_->is_uint64()) {
    result = static_cast<double>(value_->get_uint64());
  } else {
    fail("a number");
  }
  if (!std::isfinite(result)) fail("a finite number");
  return result;
}

std::int64_t reader::integer() const {
  if (value_->is_int64()) return value_->get_int64();
  if (value_->is_uint64() && value_->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return static_cast<std::int64_t>(value_->get_uint64());
  }
  if (value_->is_double()) {
    double d = value_->get_double();
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9e15) return static_cast<std::int64_t>(d);
  }
  fail("an integer");
}

bool reader::boolean() const {
  if (!value_->is_bool()) fail("true or false");
  return value_->get_bool();
}

void reader::only_keys(std::initializer_list<std::string_view> allowed) const {
  for (const auto& [key, member] : object()) {
    bool known = false;
    for (auto a : allowed) known = known || a == std::string_view(key);
    if (!known) {
      throw error(errc::invalid, source_ + ": " + path_ + "." + std::string(key) +
                                     ": unknown member (remove it, or check its spelling)");
    }
  }
}

}  // namespace rnx::json
