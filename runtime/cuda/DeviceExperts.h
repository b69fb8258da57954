// DeviceExperts — the cuda backend's mixture-of-experts layer beside its GEMMs (the layer and
// its router are backend/Experts.h's, the same rows in the same places as the cpu backend's):
// the router's copies of each row and their sum, the mask that keeps a row to its experts'
// units, and the all-to-alls of tokens, packed by a gather kernel, moved by grouped
// ncclSend/ncclRecv (NcclGroups::allToAll) and unpacked by a scatter. Each call enqueues on
// the stream its owner's operation uses (the reference `stream`: CudaRank's current_).
#pragma once

#include "backend/Experts.h"
#include "cuda/DeviceCopies.h"
#include "cuda/Nccl.h"

#include <vector>

namespace schedc::cuda {

class DeviceExperts {
public:
  DeviceExperts(DeviceCopies &copies, NcclGroups &nccl, const cudaStream_t &stream, DType low, int64_t hidden)
      : copies_(copies), nccl_(nccl), stream_(stream), low_(low), h_(hidden) {}

  // Each of `rows` rows of `x` k times, in (row, choice) order; back, the k copies of each
  // row summed.
  Buffer copiesOf(const Buffer &x, int64_t rows, int64_t k);
  Buffer sumOfCopies(const Buffer &copies, int64_t rows, int64_t k);
  // `mask` (rows x units of 0 and 1) on the device, or null where there is none.
  Buffer maskOf(const std::vector<float> &mask);
  // Out to the experts: this member's rows `rows` of `in` (dispatchRows) to each member in
  // turn, and `fromEach[i]` rows from the i-th. Returns what came, member after member.
  Buffer dispatch(const Buffer &in, const std::vector<std::vector<int64_t>> &rows, const std::vector<int64_t> &fromEach,
                  const std::vector<int64_t> &members);
  // Back from the experts: `in` holds, member after member, `toEach[i]` rows to go back to the
  // i-th; what comes lands at its place (combineRows) among this member's `copies` rows.
  Buffer combine(const Buffer &in, const std::vector<int64_t> &toEach, const std::vector<std::vector<int64_t>> &places,
                 int64_t copies, const std::vector<int64_t> &members);

private:
  DeviceCopies &copies_;
  NcclGroups &nccl_;
  const cudaStream_t &stream_;
  DType low_;
  int64_t h_;
};

} // namespace schedc::cuda
