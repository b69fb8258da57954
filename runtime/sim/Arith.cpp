// Arith implementation.
#include "sim/Arith.h"

namespace schedc::sim {

std::optional<int64_t> arith(char op, int64_t a, int64_t b, std::string &error) {
  int64_t r = 0;
  bool overflow = false;
  switch (op) {
  case '+':
  case '-':
  case '*':
    if (std::optional<int64_t> v = addSubMul(op, a, b))
      return v;
    overflow = true;
    break;
  case '/':
  case '%':
    if (b == 0) {
      error = std::string(op == '/' ? "division" : "modulo") + " by zero";
      return std::nullopt;
    }
    if (a == INT64_MIN && b == -1) {
      overflow = true;
      break;
    }
    r = op == '/' ? a / b : a % b;
    if (a % b != 0 && (a < 0) != (b < 0)) // round toward negative infinity
      r = op == '/' ? r - 1 : r + b;
    break;
  default:
    // diag-coverage: unreachable (callers pass only + - * / %)
    error = std::string("unknown operator `") + op + "`";
    return std::nullopt;
  }
  if (overflow) {
    error = "integer overflow in `" + std::to_string(a) + " " + op + " " + std::to_string(b) + "`";
    return std::nullopt;
  }
  return r;
}

} // namespace schedc::sim
