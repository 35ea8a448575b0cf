// Parsing and evaluating arithmetic over the shape symbols (recursive descent into a postfix program).
#include "rnx/common/shape_expression.hpp"

#include "rnx/common/error.hpp"

#include <cctype>

namespace rnx {

// expression := term (('+' | '-') term)*;  term := factor (('*' | '/') factor)*;
// factor := number | symbol | '(' expression ')'
class expression_parser {
 public:
  expression_parser(std::string_view text, std::string_view where) : text_(text), where_(where) {}

  std::vector<shape_expression::step> parse() {
    if (at_end()) fail("it is empty");
    expression();
    if (!at_end()) unexpected();
    return std::move(program_);
  }

 private:
  using op = shape_expression::op;

  void expression() {
    term();
    while (peek() == '+' || peek() == '-') {
      const op o = take() == '+' ? op::add : op::subtract;
      term();
      program_.push_back({o, 0});
    }
  }

  void term() {
    factor();
    while (peek() == '*' || peek() == '/') {
      const op o = take() == '*' ? op::multiply : op::divide;
      factor();
      program_.push_back({o, 0});
    }
  }

  void factor() {
    const char c = peek();
    if (c == '(') {
      take();
      expression();
      if (peek() != ')') unexpected();
      take();
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      number();
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      symbol();
    } else {
      unexpected();
    }
  }

  void number() {
    skip_spaces();
    std::size_t end = pos_;
    while (end < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[end])) || text_[end] == '.')) ++end;
    const std::string digits(text_.substr(pos_, end - pos_));
    if (digits.find('.') != digits.rfind('.')) fail("'" + digits + "' is not a number");
    program_.push_back({op::number, std::stod(digits)});
    pos_ = end;
  }

  void symbol() {
    skip_spaces();
    std::size_t end = pos_;
    while (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) ++end;
    const std::string name(text_.substr(pos_, end - pos_));
    if (name != shape_symbols) {
      fail("unknown symbol '" + name + "'",
           "the one symbol shapes use is " + std::string(shape_symbols) +
               ", the batch size; write other sizes as numbers, e.g. \"2*B*256*512*512\"");
    }
    program_.push_back({op::batch, 0});
    pos_ = end;
  }

  void skip_spaces() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool at_end() {
    skip_spaces();
    return pos_ >= text_.size();
  }
  char peek() { return at_end() ? '\0' : text_[pos_]; }
  char take() {
    const char c = peek();
    ++pos_;
    return c;
  }

  [[noreturn]] void unexpected() {
    if (at_end()) fail("it ends too early");
    fail("unexpected '" + std::string(1, text_[pos_]) + "' at character " + std::to_string(pos_ + 1));
  }
  [[noreturn]] void fail(
      const std::string& problem,
      const std::string& fix = "write arithmetic of numbers and B with + - * / and parentheses") const {
    throw error(errc::invalid, std::string(where_) + ": \"" + std::string(text_) + "\": " + problem + " (" + fix + ")");
  }

  std::string_view text_;
  std::string_view where_;
  std::size_t pos_ = 0;
  std::vector<shape_expression::step> program_;
};

shape_expression shape_expression::parse(std::string_view text, std::string_view where) {
  shape_expression e;
  e.text_ = std::string(text);
  e.program_ = expression_parser(text, where).parse();
  return e;
}

double shape_expression::evaluate(std::int64_t batch) const {
  std::vector<double> stack;
  for (const step& s : program_) {
    if (s.what == op::number || s.what == op::batch) {
      stack.push_back(s.what == op::number ? s.value : static_cast<double>(batch));
      continue;
    }
    const double right = stack.back();
    stack.pop_back();
    double& left = stack.back();
    switch (s.what) {
      case op::add: left += right; break;
      case op::subtract: left -= right; break;
      case op::multiply: left *= right; break;
      case op::divide: left /= right; break;
      default: break;
    }
  }
  return stack.back();
}

}  // namespace rnx
