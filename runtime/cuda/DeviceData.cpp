// DeviceData implementation: the words that describe a value's shape, and the stream
// bookkeeping of its buffers.
#include "cuda/DeviceData.h"

namespace schedc::cuda {

std::vector<BufferUses *> usesOf(std::initializer_list<sim::ValuePtr> values) {
  std::vector<int64_t> words;
  std::vector<Buffer> buffers;
  for (const sim::ValuePtr &v : values)
    describe(v, words, buffers);
  return usesOf(buffers);
}

void describe(const sim::ValuePtr &v, std::vector<int64_t> &words, std::vector<Buffer> &buffers) {
  auto flat = [&](const DeviceFlat &f) {
    words.push_back(static_cast<int64_t>(f.pieces.size()));
    for (const DevicePiece &p : f.pieces) {
      words.insert(words.end(), {p.begin, p.values ? 1 : 0});
      if (p.values)
        buffers.push_back(p.values);
    }
  };
  if (const DeviceRows *r = DevicePayloads::rows(v)) {
    words.insert(words.end(), {1, r->rows, r->values ? 1 : 0});
    if (r->values)
      buffers.push_back(r->values);
  } else if (const DeviceFlat *f = DevicePayloads::flat(v)) {
    words.push_back(2);
    flat(*f);
  } else if (const DeviceOpt *o = DevicePayloads::opt(v)) {
    words.insert(words.end(), {3, static_cast<int64_t>(o->moments.size())});
    for (const DeviceFlat &m : o->moments)
      flat(m);
    flat(o->master);
  } else {
    words.push_back(0);
  }
}

sim::ValuePtr rebuild(const sim::ValuePtr &meta, const std::vector<int64_t> &words,
                      const std::vector<Buffer> &buffers) {
  size_t w = 0, b = 0;
  auto word = [&] { return words.at(w++); };
  auto next = [&](bool present) { return present ? buffers.at(b++) : Buffer(); };
  auto flat = [&] {
    DeviceFlat f;
    for (int64_t n = word(); n > 0; --n) {
      DevicePiece p;
      p.begin = word();
      p.values = next(word() != 0);
      f.pieces.push_back(std::move(p));
    }
    return f;
  };
  switch (word()) {
  case 1: {
    int64_t rows = word();
    return withData(meta, DeviceRows{rows, next(word() != 0)});
  }
  case 2: return withData(meta, flat());
  case 3: {
    DeviceOpt o;
    for (int64_t n = word(); n > 0; --n)
      o.moments.push_back(flat());
    o.master = flat();
    return withData(meta, std::move(o));
  }
  default: return meta;
  }
}

} // namespace schedc::cuda
