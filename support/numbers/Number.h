// Number — a clock or memory figure of the `puzzle` cost model: an integer until a
// fractional amount is added, then a double, exactly as Python's int/float arithmetic in the
// original puzzle library behaves. Figures are printed the way Python prints them (`8`,
// `2621440.0`, `19.90000000000001`), so schedc reproduces the library's output digit for
// digit. The order of additions matters for the last digits; callers keep it.
#pragma once

#include <bit>
#include <cstdint>
#include <string>

namespace schedc {

class Number {
public:
  Number() = default;
  static Number integer(int64_t v) {
    Number n;
    n.int_ = v;
    return n;
  }
  static Number real(double v) {
    Number n;
    n.isReal_ = true;
    n.real_ = v;
    return n;
  }

  bool isInteger() const { return !isReal_; }
  double asDouble() const { return isReal_ ? real_ : static_cast<double>(int_); }

  // Python `a + b`: int + int stays int, anything else is a double sum.
  friend Number operator+(const Number &a, const Number &b) {
    if (!a.isReal_ && !b.isReal_)
      return integer(a.int_ + b.int_);
    return real(a.asDouble() + b.asDouble());
  }
  Number &operator+=(const Number &b) { return *this = *this + b; }
  // Exact comparisons (all figures stay far below 2^53, where int -> double is exact).
  friend bool operator<(const Number &a, const Number &b) { return a.asDouble() < b.asDouble(); }
  friend bool operator>(const Number &a, const Number &b) { return b < a; }

  // Python `max(a, b)`: `a` unless `b` is strictly larger (keeps `a`'s int/float-ness on ties).
  static Number pythonMax(const Number &a, const Number &b) { return b > a ? b : a; }

  // Python's repr: `8`, `2621440.0`, `19.90000000000001`, `1e+16`.
  std::string str() const;

  // Its 8 bytes (the integer's or the double's) and, with whether it is a double, the Number
  // again (NumberLog keeps the two apart).
  uint64_t payload() const { return isReal_ ? std::bit_cast<uint64_t>(real_) : static_cast<uint64_t>(int_); }
  static Number fromPayload(uint64_t payload, bool isReal) {
    return isReal ? real(std::bit_cast<double>(payload)) : integer(static_cast<int64_t>(payload));
  }

private:
  bool isReal_ = false;
  union { // which one: isReal_ (16 bytes in all; every event holds several)
    int64_t int_ = 0;
    double real_;
  };
};

// Python's repr of a float: the shortest digits that round-trip, in fixed notation when the
// decimal exponent is in [-4, 16), else scientific; `.0` added to integral fixed values.
std::string pythonFloatRepr(double v);

} // namespace schedc
