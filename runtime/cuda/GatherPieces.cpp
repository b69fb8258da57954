// GatherPieces implementation: the pieces' places over MPI, their elements over NCCL.
#include "cuda/GatherPieces.h"

#include <algorithm>

namespace schedc::cuda {

DeviceFlat gatherPieces(const DeviceFlat *in, const std::vector<int64_t> &group, DType type, DeviceCopies &copies,
                        NcclGroups &nccl, backend::Comm &comm, cudaStream_t stream) {
  std::vector<int64_t> header;
  if (in)
    for (const DevicePiece &p : in->pieces) {
      header.push_back(p.begin);
      header.push_back(p.count());
    }
  std::vector<std::vector<int64_t>> headers = comm.allgatherInts(header, group);
  std::vector<int64_t> counts;
  int64_t total = 0;
  for (const std::vector<int64_t> &h : headers) {
    int64_t c = 0;
    for (size_t i = 1; i < h.size(); i += 2)
      c += h[i];
    counts.push_back(c);
    total += c;
  }
  // Where each received piece lies in the gathered buffer, sorted by its place in the weight.
  std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> places; // begin -> (offset, count)
  int64_t at = 0;
  for (const std::vector<int64_t> &h : headers)
    for (size_t i = 0; i + 1 < h.size(); i += 2) {
      places.push_back({h[i], {at, h[i + 1]}});
      at += h[i + 1];
    }
  std::sort(places.begin(), places.end());
  // Contiguous (the whole, or a tensor-parallel part): one piece, ready for GEMMs.
  bool contiguous = !places.empty();
  for (size_t i = 1; i < places.size(); ++i)
    contiguous &= places[i].first == places[i - 1].first + places[i - 1].second.second;
  int64_t mine = in ? in->elements() : 0;
  Buffer packed = copies.buffer(mine, type), out = copies.buffer(total, type);
  int64_t offset = 0;
  if (in)
    for (const DevicePiece &p : in->pieces) {
      if (p.values)
        copies.copy(packed->at(offset), copies.converted(p.values, type), p.count());
      offset += p.count();
    }
  nccl.gather(packed->raw(), out->raw(), type, counts, group, stream);
  DeviceFlat gathered;
  if (contiguous) {
    Buffer all = copies.buffer(total, type);
    int64_t first = places.front().first;
    for (auto &[begin, where] : places)
      copies.copy(all->at(begin - first), out, where.second, where.first);
    gathered.pieces.push_back(DevicePiece{first, all});
  } else {
    for (auto &[begin, where] : places)
      gathered.pieces.push_back(DevicePiece{begin, copies.copyOf(out, where.first, where.second)});
  }
  return gathered;
}

} // namespace schedc::cuda
