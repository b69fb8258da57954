// Wire — the byte format real backends use for what they pass over MPI as bytes (cpu
// send/recv, the final weights gathered at rank 0, the cuda backend's message headers):
// little-endian int64 counts and float32 arrays, read back in the same order.
#pragma once

#include "cpu/Tensors.h"

#include <cstring>
#include <vector>

namespace schedc::cpu {

inline void put(std::vector<char> &b, const void *p, size_t n) {
  b.insert(b.end(), (const char *)p, (const char *)p + n);
}
inline void putI(std::vector<char> &b, int64_t v) {
  put(b, &v, 8);
}
inline void putFloats(std::vector<char> &b, const std::vector<float> &v) {
  putI(b, static_cast<int64_t>(v.size()));
  put(b, v.data(), v.size() * 4);
}
inline void putFlat(std::vector<char> &b, const Flat &f) {
  putI(b, static_cast<int64_t>(f.pieces.size()));
  for (const Piece &p : f.pieces) {
    putI(b, p.begin);
    putFloats(b, p.values);
  }
}
struct Reader {
  const std::vector<char> &b;
  size_t at = 0;
  int64_t i() {
    int64_t v;
    std::memcpy(&v, b.data() + at, 8);
    at += 8;
    return v;
  }
  std::vector<float> floats() {
    int64_t n = i();
    std::vector<float> v(static_cast<size_t>(n));
    std::memcpy(v.data(), b.data() + at, static_cast<size_t>(n) * 4);
    at += static_cast<size_t>(n) * 4;
    return v;
  }
  Flat flat() {
    Flat f;
    for (int64_t k = i(); k > 0; --k) {
      Piece p;
      p.begin = i();
      p.values = floats();
      f.pieces.push_back(std::move(p));
    }
    return f;
  }
};

} // namespace schedc::cpu
