// ComputeRank: the parts every real backend shares.
#include "backend/ComputeRank.h"

namespace schedc::backend {

int64_t ComputeRank::bytesAtPrecision(sim::Kind kind, int64_t elements) const {
  if (kind == sim::Kind::OptState)
    return elements * 4; // fp32 moments, each counted in `elements`
  sim::ByteModel widths;
  widths.precision = precision_;
  return elements * widths.elementBytes(kind);
}

std::pair<int64_t, int64_t> ComputeRank::shard(int64_t s, int64_t total) {
  int64_t n = weightElements();
  if (total < 1 || n % total != 0)
    comm_.abort("the " + std::to_string(d_.hidden) + " x " + std::to_string(d_.hidden) +
                " weight cannot be split into " + std::to_string(total) +
                " equal shards; choose a hidden size whose square is a multiple of " + std::to_string(total));
  return {s * (n / total), n / total};
}

std::string ComputeRank::writeFinalWeights(const sim::Rank &rank, int64_t layers, const std::string &dir,
                                           bool overwrite) {
  // Every updated weight piece this rank holds: (layer, begin, values).
  std::vector<char> mine;
  rank.forEachHeld([&](const sim::Storage::Held &h) {
    const ValuePtr &v = h.value;
    if (v->kind != sim::Kind::Weight || v->step < 1 || !v->payload)
      return;
    cpu::HostData data = toHost(v);
    for (const cpu::Piece &p : data.flat->pieces) {
      cpu::putI(mine, v->layer);
      cpu::putI(mine, p.begin);
      cpu::putFloats(mine, p.values);
    }
  });
  return cpu::gatherWeights(comm_, mine, layers, d_.hidden, dir, overwrite);
}

} // namespace schedc::backend
