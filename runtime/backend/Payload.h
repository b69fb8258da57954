// Payload — how a real backend hangs its data on a sim::Value: every backend keeps three
// shapes (its own types): a Flat (pieces of a layer's flat H x H array: weights and weight
// gradients), an Opt (optimizer-state moments) and Rows (T rows per micro-batch: activations
// and activation gradients). A value's payload is shared and never changed once attached.
#pragma once

#include "sim/Value.h"

#include <memory>

namespace schedc::backend {

// A copy of `meta` carrying `data` (`elements` of real data, from which memory is measured).
template <class T> sim::ValuePtr attach(const sim::ValuePtr &meta, std::shared_ptr<const T> data, int64_t elements) {
  sim::Value v = *meta;
  v.payload = std::move(data);
  v.payloadElements = elements;
  return sim::makeValue(std::move(v));
}

template <class Flat> sim::ValuePtr withFlat(const sim::ValuePtr &meta, Flat f) {
  int64_t n = f.elements();
  return attach<Flat>(meta, std::make_shared<const Flat>(std::move(f)), n);
}
template <class Rows> sim::ValuePtr withRows(const sim::ValuePtr &meta, Rows r, int64_t hidden) {
  int64_t n = r.rows * hidden;
  return attach<Rows>(meta, std::make_shared<const Rows>(std::move(r)), n);
}

// The data of `v` in its shape, or null (no value, no data, or another kind).
template <class Flat> const Flat *flatOf(const sim::ValuePtr &v) {
  return v && v->payload && (v->kind == sim::Kind::Weight || v->kind == sim::Kind::WeightGrad)
             ? static_cast<const Flat *>(v->payload.get())
             : nullptr;
}
template <class Opt> const Opt *optOf(const sim::ValuePtr &v) {
  return v && v->payload && v->kind == sim::Kind::OptState ? static_cast<const Opt *>(v->payload.get()) : nullptr;
}
template <class Rows> const Rows *rowsOf(const sim::ValuePtr &v) {
  return v && v->payload && (v->kind == sim::Kind::Activation || v->kind == sim::Kind::ActGrad)
             ? static_cast<const Rows *>(v->payload.get())
             : nullptr;
}

// A backend's three shapes together: `using P = Payloads<Flat, Opt, Rows>;` then
// P::flat(v), P::withRows(meta, rows, h), ...
template <class Flat, class Opt, class Rows> struct Payloads {
  static const Flat *flat(const sim::ValuePtr &v) { return flatOf<Flat>(v); }
  static const Opt *opt(const sim::ValuePtr &v) { return optOf<Opt>(v); }
  static const Rows *rows(const sim::ValuePtr &v) { return rowsOf<Rows>(v); }
  static sim::ValuePtr withFlat(const sim::ValuePtr &meta, Flat f) { return backend::withFlat(meta, std::move(f)); }
  static sim::ValuePtr withRows(const sim::ValuePtr &meta, Rows r, int64_t hidden) {
    return backend::withRows(meta, std::move(r), hidden);
  }
};

} // namespace schedc::backend
