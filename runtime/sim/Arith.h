// Arith — the language's integer arithmetic: 64-bit, overflow is an error, `/` and `%`
// round toward negative infinity (as in Python), and dividing by zero is an error. The
// interpreter and compiled code both compute through here (compiled code only on its
// slow path: overflow, division), so both agree to the last case.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace schedc::sim {

// `a op b` for op in + - * / %; nullopt with a message on overflow or division by zero.
std::optional<int64_t> arith(char op, int64_t a, int64_t b, std::string &error);

// `a op b` for op in + - *, or nullopt if it overflows: arith's own computation of those,
// inline, for a caller's fast path (arith then says what went wrong).
inline std::optional<int64_t> addSubMul(char op, int64_t a, int64_t b) {
  int64_t r = 0;
  bool overflow = op == '+'   ? __builtin_add_overflow(a, b, &r)
                  : op == '-' ? __builtin_sub_overflow(a, b, &r)
                              : __builtin_mul_overflow(a, b, &r);
  return overflow ? std::nullopt : std::optional<int64_t>(r);
}

} // namespace schedc::sim
