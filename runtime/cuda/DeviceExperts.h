// DeviceExperts — the cuda backend's mixture-of-experts layer beside its GEMMs (the layer and
// its router are backend/Experts.h's, the same rows in the same places as the cpu backend's):
// the router's copies of each row and their sum, the mask that keeps a row to its experts'
// units, and the all-to-alls of tokens, packed by a gather kernel, moved by grouped
// ncclSend/ncclRecv (NcclGroups::allToAll) and unpacked by a scatter. Each call enqueues on
// the stream its owner's operation uses (the reference `stream`: CudaRank's current_).
#pragma once

#include "backend/Comm.h"
#include "backend/Experts.h"
#include "cuda/DeviceCopies.h"
#include "cuda/Nccl.h"

#include <vector>

namespace schedc::cuda {

class DeviceExperts {
public:
  DeviceExperts(DeviceCopies &copies, NcclGroups &nccl, backend::Comm &comm, const cudaStream_t &stream, DType low,
                int64_t hidden)
      : copies_(copies), nccl_(nccl), comm_(comm), stream_(stream), low_(low), h_(hidden) {}

  // Each of `rows` rows of `x` k times, in (row, choice) order; back, the k copies of each
  // row summed.
  Buffer copiesOf(const Buffer &x, int64_t rows, int64_t k);
  Buffer sumOfCopies(const Buffer &copies, int64_t rows, int64_t k);
  // `mask` (rows x units of 0 and 1) on the device, or null where there is none.
  Buffer maskOf(const std::vector<float> &mask);
  // Out to the experts: this member's rows `rows` of `in` (dispatchRows, for its `batches`
  // micro-batches) to each member in turn; from each member, `mine` copies of each of its
  // micro-batches. Returns what came, member after member.
  Buffer dispatch(const Buffer &in, const std::vector<std::vector<int64_t>> &rows, int64_t batches, int64_t mine,
                  const std::vector<int64_t> &members);
  // Back from the experts: `in` holds, member after member, each member's micro-batches'
  // copies routed here (`mine` a micro-batch, the member's `batches` each); each goes back
  // and lands at its place (combineRows) among this member's `copies` rows.
  Buffer combine(const Buffer &in, int64_t mine, const std::vector<std::vector<int64_t>> &places, int64_t copies,
                 int64_t batches, const std::vector<int64_t> &members);

private:
  // Every member's micro-batch count (MPI, before the NCCL call: the receivers' counts).
  std::vector<int64_t> batchesOf(int64_t mine, const std::vector<int64_t> &members);

  DeviceCopies &copies_;
  NcclGroups &nccl_;
  backend::Comm &comm_;
  const cudaStream_t &stream_;
  DType low_;
  int64_t h_;
};

} // namespace schedc::cuda
