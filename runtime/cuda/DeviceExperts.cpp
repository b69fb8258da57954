// DeviceExperts implementation: row indices are made on the host (backend/Experts.h) and
// uploaded; the rows move by kernels and NCCL on the owner's stream.
#include "cuda/DeviceExperts.h"

#include "cuda/Kernels.h"

namespace schedc::cuda {

namespace {
std::vector<int64_t> concatenated(const std::vector<std::vector<int64_t>> &lists) {
  std::vector<int64_t> all;
  for (const std::vector<int64_t> &l : lists)
    all.insert(all.end(), l.begin(), l.end());
  return all;
}
} // namespace

Buffer DeviceExperts::copiesOf(const Buffer &x, int64_t rows, int64_t k) {
  std::vector<int64_t> index(static_cast<size_t>(rows * k));
  for (size_t i = 0; i < index.size(); ++i)
    index[i] = static_cast<int64_t>(i) / k;
  Buffer out = copies_.buffer(rows * k * h_, low_), at = copies_.uploadIndices(index);
  gatherRows(out->raw(), x->raw(), static_cast<const int32_t *>(at->raw()), rows * k, h_, low_, stream_);
  return out;
}

Buffer DeviceExperts::sumOfCopies(const Buffer &copies, int64_t rows, int64_t k) {
  Buffer out = copies_.buffer(rows * h_, low_);
  sumCopies(out->raw(), copies->raw(), rows, k, h_, low_, stream_);
  return out;
}

Buffer DeviceExperts::maskOf(const std::vector<float> &mask) {
  return mask.empty() ? nullptr : copies_.upload(mask);
}

Buffer DeviceExperts::dispatch(const Buffer &in, const std::vector<std::vector<int64_t>> &rows,
                               const std::vector<int64_t> &fromEach, const std::vector<int64_t> &members) {
  std::vector<int64_t> index = concatenated(rows), sendCounts, recvCounts;
  for (const std::vector<int64_t> &r : rows)
    sendCounts.push_back(static_cast<int64_t>(r.size()) * h_);
  int64_t received = 0;
  for (int64_t n : fromEach) {
    recvCounts.push_back(n * h_);
    received += n;
  }
  const auto sent = static_cast<int64_t>(index.size());
  Buffer packed = copies_.buffer(sent * h_, low_), at = copies_.uploadIndices(index),
         out = copies_.buffer(received * h_, low_);
  gatherRows(packed->raw(), in->raw(), static_cast<const int32_t *>(at->raw()), sent, h_, low_, stream_);
  nccl_.allToAll(packed->raw(), sendCounts, out->raw(), recvCounts, low_, members, stream_);
  return out;
}

Buffer DeviceExperts::combine(const Buffer &in, const std::vector<int64_t> &toEach,
                              const std::vector<std::vector<int64_t>> &places, int64_t copies,
                              const std::vector<int64_t> &members) {
  std::vector<int64_t> sendCounts, recvCounts, index = concatenated(places);
  int64_t sent = 0;
  for (int64_t n : toEach) {
    sendCounts.push_back(n * h_);
    sent += n * h_;
  }
  for (const std::vector<int64_t> &p : places)
    recvCounts.push_back(static_cast<int64_t>(p.size()) * h_);
  const auto received = static_cast<int64_t>(index.size());
  // What the members' micro-batches need (a wrong schedule forced with --no-verify may hold
  // other rows: zeros stand in).
  Buffer source = in->count() == sent ? in : copies_.zeros(sent, low_);
  Buffer came = copies_.buffer(received * h_, low_), out = copies_.zeros(copies * h_, low_),
         at = copies_.uploadIndices(index);
  nccl_.allToAll(source->raw(), sendCounts, came->raw(), recvCounts, low_, members, stream_);
  scatterRows(out->raw(), came->raw(), static_cast<const int32_t *>(at->raw()), received, h_, low_, stream_);
  return out;
}

} // namespace schedc::cuda
