// Nccl — the cuda backend's collectives: one NCCL communicator per group of ranks the
// schedule calls collectives over, all opened before the run (from the verification run's
// groups; each group's lowest rank makes its unique id and sends it to the other members
// over MPI; every rank then joins all its groups in one NCCL group call), so only members
// take part, as MPI_Comm_create_group does for the cpu backend. Not lazily at the first
// collective: opening a communicator allocates device memory, which can wait for the NCCL
// kernels already in flight — a send waiting for its receiver, say — while that receiver
// waits for this rank. Collectives are enqueued on the stream given (the rank's stream for collectives),
// in the order the schedule calls them, which the checker has proved the same on every
// member.
#pragma once

#include "backend/Comm.h"
#include "cuda/DeviceMemory.h"

#include <map>
#include <nccl.h>
#include <vector>

namespace schedc::cuda {

// Ends the job with `what` and NCCL's words unless `r` is success.
void checkNccl(ncclResult_t r, const char *what, const DeviceMemory &memory);
// Likewise for an MPI call's return code.
void checkMpi(int code, const char *what, const DeviceMemory &memory);

// Opens one communicator for each member list in `groups` that has this rank `me` (a
// member's rank in it is its position in the list; the first makes the unique id and sends
// it to the others over MPI), all in one NCCL group call, so no two ranks wait for each
// other while opening them. Returns them by list, null for lists without `me`. Collective:
// every rank calls it with the same lists.
std::vector<ncclComm_t> openCommunicators(const std::vector<std::vector<int64_t>> &groups, int64_t me,
                                          DeviceMemory &memory);

class NcclGroups {
public:
  // Opens a communicator for every group in `groups` this rank is a member of. Collective:
  // every rank calls it, with the same groups.
  NcclGroups(backend::Comm &mpi, DeviceMemory &memory, const std::vector<std::vector<int64_t>> &groups);
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

  // Sends sendCounts[i] elements (from `send`, member after member) to the i-th member and
  // receives recvCounts[i] from it (into `recv`, member after member): ncclSend and ncclRecv
  // to and from every member in one group call, as NCCL's own all-to-all is made (nccl-tests
  // src/alltoall.cu, AlltoAllRunColl).
  void allToAll(const void *send, const std::vector<int64_t> &sendCounts, void *recv,
                const std::vector<int64_t> &recvCounts, DType type, const std::vector<int64_t> &members,
                cudaStream_t stream);

private:
  ncclComm_t communicator(const std::vector<int64_t> &members);
  void check(ncclResult_t r, const char *what) { checkNccl(r, what, memory_); }

  DeviceMemory &memory_;
  std::map<std::vector<int64_t>, ncclComm_t> comms_;
};

} // namespace schedc::cuda
