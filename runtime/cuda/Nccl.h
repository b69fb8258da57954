// Nccl — the cuda backend's collectives: one NCCL communicator per group of ranks, made
// the first time the group's members meet in a collective (its lowest rank makes the
// unique id and sends it to the other members over MPI; every member then joins with
// ncclCommInitRank), so only members take part, as MPI_Comm_create_group does for the cpu
// backend. Collectives are enqueued on the stream given (the rank's stream for collectives),
// in the order the schedule calls them, which the checker has proved the same on every
// member.
#pragma once

#include "cpu/Comm.h"
#include "cuda/DeviceMemory.h"

#include <map>
#include <nccl.h>
#include <vector>

namespace schedc::cuda {

class NcclGroups {
public:
  NcclGroups(cpu::Comm &mpi, DeviceMemory &memory);
  ~NcclGroups();
  NcclGroups(const NcclGroups &) = delete;
  NcclGroups &operator=(const NcclGroups &) = delete;

  // Elements are `type` (fp32 or bf16; NCCL sums bf16 in bf16 steps); the work goes on
  // `stream`.
  // Sum over `members` (ascending world ranks, including this one), in place.
  void allReduce(void *data, DType type, int64_t n, const std::vector<int64_t> &members, cudaStream_t stream);
  // Sums the n elements of `data` over the members; `part` (n / members) gets this
  // member's part, the position-th.
  void reduceScatter(const void *data, void *part, DType type, int64_t n, const std::vector<int64_t> &members,
                     cudaStream_t stream);
  // Every member's elements from `data` into `out` (count_m at offset_m for member m,
  // counts given for every member in member order).
  void gather(const void *data, void *out, DType type, const std::vector<int64_t> &counts,
              const std::vector<int64_t> &members, cudaStream_t stream);

private:
  ncclComm_t communicator(const std::vector<int64_t> &members);
  void check(ncclResult_t r, const char *what);

  cpu::Comm &mpi_;
  DeviceMemory &memory_;
  MPI_Comm control_ = MPI_COMM_NULL; // for the unique ids, apart from the schedule's messages
  std::map<std::vector<int64_t>, ncclComm_t> comms_;
};

} // namespace schedc::cuda
