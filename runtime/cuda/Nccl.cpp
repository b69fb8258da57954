// Nccl implementation.
#include "cuda/Nccl.h"

#include <algorithm>

namespace schedc::cuda {

namespace {
ncclDataType_t ncclType(DType t) {
  return t == DType::BF16 ? ncclBfloat16 : ncclFloat;
}
} // namespace

NcclGroups::NcclGroups(cpu::Comm &mpi, DeviceMemory &memory) : mpi_(mpi), memory_(memory) {
  MPI_Comm_dup(MPI_COMM_WORLD, &control_);
}

NcclGroups::~NcclGroups() {
  for (auto &[members, comm] : comms_)
    ncclCommDestroy(comm);
  if (control_ != MPI_COMM_NULL)
    MPI_Comm_free(&control_);
}

void NcclGroups::check(ncclResult_t r, const char *what) {
  if (r != ncclSuccess)
    memory_.fail(std::string(what) + ": " + ncclGetErrorString(r));
}

ncclComm_t NcclGroups::communicator(const std::vector<int64_t> &members) {
  auto it = comms_.find(members);
  if (it != comms_.end())
    return it->second;
  int position = static_cast<int>(std::find(members.begin(), members.end(), mpi_.rank()) - members.begin());
  ncclUniqueId id;
  if (position == 0) {
    check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    for (size_t m = 1; m < members.size(); ++m)
      MPI_Send(&id, sizeof id, MPI_BYTE, static_cast<int>(members[m]), 1, control_);
  } else {
    MPI_Recv(&id, sizeof id, MPI_BYTE, static_cast<int>(members[0]), 1, control_, MPI_STATUS_IGNORE);
  }
  ncclComm_t comm;
  check(ncclCommInitRank(&comm, static_cast<int>(members.size()), id, position), "ncclCommInitRank");
  comms_.emplace(members, comm);
  return comm;
}

void NcclGroups::allReduce(void *data, DType type, int64_t n, const std::vector<int64_t> &members,
                           cudaStream_t stream) {
  check(ncclAllReduce(data, data, static_cast<size_t>(n), ncclType(type), ncclSum, communicator(members), stream),
        "ncclAllReduce");
}

void NcclGroups::reduceScatter(const void *data, void *part, DType type, int64_t n, const std::vector<int64_t> &members,
                               cudaStream_t stream) {
  check(ncclReduceScatter(data, part, static_cast<size_t>(n / static_cast<int64_t>(members.size())), ncclType(type),
                          ncclSum, communicator(members), stream),
        "ncclReduceScatter");
}

void NcclGroups::gather(const void *data, void *out, DType type, const std::vector<int64_t> &counts,
                        const std::vector<int64_t> &members, cudaStream_t stream) {
  ncclComm_t comm = communicator(members);
  bool equal = std::all_of(counts.begin(), counts.end(), [&](int64_t c) { return c == counts[0]; });
  if (equal) { // the common case (one shard each): one all-gather
    check(ncclAllGather(data, out, static_cast<size_t>(counts[0]), ncclType(type), comm, stream), "ncclAllGather");
    return;
  }
  // Unequal parts: each member broadcasts its own, in one group call.
  check(ncclGroupStart(), "ncclGroupStart");
  int64_t offset = 0;
  for (size_t m = 0; m < members.size(); ++m) {
    if (counts[m] > 0)
      check(ncclBroadcast(data, static_cast<char *>(out) + offset * sizeOf(type), static_cast<size_t>(counts[m]),
                          ncclType(type), static_cast<int>(m), comm, stream),
            "ncclBroadcast");
    offset += counts[m];
  }
  check(ncclGroupEnd(), "ncclGroupEnd");
}

} // namespace schedc::cuda
