// Arithmetic over the shape symbols, as rnx.toml declares a kernel's work: flops = "2*B*256*512*512".
//
//   rnx::shape_expression e = rnx::shape_expression::parse("2*B*(256+1)", "rnx.toml:9: key 'kernel.gemm.flops'");
//   double flops = e.evaluate(8);  // B = 8
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rnx {

// The symbols an input shape may use, and so an expression: B, the batch size.
inline constexpr std::string_view shape_symbols = "B";

class shape_expression {
 public:
  // Non-negative integers (or decimals), the shape symbols, + - * /, parentheses and spaces. Throws
  // rnx::error(invalid), beginning with `where`, naming an unknown symbol or the first character that does not fit.
  static shape_expression parse(std::string_view text, std::string_view where);

  // The value with B = batch (division is exact, not integer division).
  double evaluate(std::int64_t batch) const;
  const std::string& text() const { return text_; }

 private:
  // The expression in postfix order, evaluated on a stack.
  enum class op { number, batch, add, subtract, multiply, divide };
  struct step {
    op what = op::number;
    double value = 0;
  };
  friend class expression_parser;
  std::string text_;
  std::vector<step> program_;
};

}  // namespace rnx
