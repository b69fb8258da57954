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

} // namespace schedc::sim
