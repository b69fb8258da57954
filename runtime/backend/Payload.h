// Payload — how a real backend hangs its data on a sim::Value: every backend keeps three
// shapes (its own types): a Flat (pieces of a layer's flat H x H array: weights and weight
// gradients), an Opt (optimizer-state moments) and Rows (T rows per micro-batch: activations
// and activation gradients). A value's payload is shared and never changed once attached.
// Each payload comes with the bytes it takes where the backend keeps it (the measured
// memory): the cuda backend's device buffers; on the cpu backend, the elements at the
// width the run's precision stores them (it computes in float32 and rounds where bf16
// would be stored, see cpu/Kernels.h).
#pragma once

#include "sim/Value.h"

#include <memory>

namespace schedc::backend {

// A copy of `meta` carrying `data`, which takes `bytes` (from which memory is measured).
template <class T> sim::ValuePtr attach(const sim::ValuePtr &meta, std::shared_ptr<const T> data, int64_t bytes) {
  sim::Value v = *meta;
  auto payload = new sim::Payload;
  payload->data = std::move(data);
  payload->bytes = bytes;
  v.payload = payload;
  return sim::makeValue(std::move(v));
}

// The data of `v` in its shape, or null (no value, no data, or another kind).
template <class Flat> const Flat *flatOf(const sim::ValuePtr &v) {
  return v && v->payload && (v->kind == sim::Kind::Weight || v->kind == sim::Kind::WeightGrad)
             ? static_cast<const Flat *>(v->payload->data.get())
             : nullptr;
}
template <class Opt> const Opt *optOf(const sim::ValuePtr &v) {
  return v && v->payload && v->kind == sim::Kind::OptState ? static_cast<const Opt *>(v->payload->data.get()) : nullptr;
}
template <class Rows> const Rows *rowsOf(const sim::ValuePtr &v) {
  return v && v->payload && (v->kind == sim::Kind::Activation || v->kind == sim::Kind::ActGrad)
             ? static_cast<const Rows *>(v->payload->data.get())
             : nullptr;
}

// A backend's three shapes together: `using P = Payloads<Flat, Opt, Rows>;` then
// P::flat(v), P::with(meta, rows, bytes), ...
template <class Flat, class Opt, class Rows> struct Payloads {
  static const Flat *flat(const sim::ValuePtr &v) { return flatOf<Flat>(v); }
  static const Opt *opt(const sim::ValuePtr &v) { return optOf<Opt>(v); }
  static const Rows *rows(const sim::ValuePtr &v) { return rowsOf<Rows>(v); }
  template <class T> static sim::ValuePtr with(const sim::ValuePtr &meta, T data, int64_t bytes) {
    return attach<T>(meta, std::make_shared<const T>(std::move(data)), bytes);
  }
};

} // namespace schedc::backend
