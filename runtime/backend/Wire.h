// Wire — the byte format real backends use for what they pass over MPI as bytes (the data
// of point-to-point messages, the final weights gathered at rank 0): little-endian int64
// counts and float32 arrays, read back in the same order.
#pragma once

#include "backend/Tensors.h"

#include <cstring>
#include <optional>
#include <vector>

namespace schedc::backend {

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
// A value's data on the host, as it travels: at most one of the three is set (none: a value
// without data, e.g. a poisoned one under --no-verify).
struct HostData {
  std::optional<Rows> rows;
  std::optional<Flat> flat;
  std::optional<OptState> opt;
};

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

// The kind first (0 rows, 1 flat, 2 optimizer state, -1 no data), then the data (an
// optimizer state: the number of moments, the moments, the master).
inline void putData(std::vector<char> &b, const HostData &d) {
  if (d.rows) {
    putI(b, 0);
    putI(b, d.rows->rows);
    putFloats(b, d.rows->values);
  } else if (d.flat) {
    putI(b, 1);
    putFlat(b, *d.flat);
  } else if (d.opt) {
    putI(b, 2);
    putI(b, static_cast<int64_t>(d.opt->moments.size()));
    for (const Flat &f : d.opt->moments)
      putFlat(b, f);
    putFlat(b, d.opt->master);
  } else {
    putI(b, -1);
  }
}

inline HostData readData(const std::vector<char> &b) {
  Reader r{b};
  HostData d;
  switch (r.i()) {
  case 0: {
    Rows rows;
    rows.rows = r.i();
    rows.values = r.floats();
    d.rows = std::move(rows);
    break;
  }
  case 1: d.flat = r.flat(); break;
  case 2: {
    OptState s;
    for (int64_t k = r.i(); k > 0; --k)
      s.moments.push_back(r.flat());
    s.master = r.flat();
    d.opt = std::move(s);
    break;
  }
  default: break;
  }
  return d;
}

} // namespace schedc::backend
