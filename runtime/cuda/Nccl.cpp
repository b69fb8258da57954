// Nccl implementation.
#include "cuda/Nccl.h"

#include <algorithm>

namespace schedc::cuda {

namespace {
ncclDataType_t ncclType(DType t) {
  return t == DType::BF16 ? ncclBfloat16 : ncclFloat;
}
} // namespace

std::vector<ncclComm_t> openCommunicators(const std::vector<std::vector<int64_t>> &groups, int64_t me,
                                          DeviceMemory &memory) {
  auto check = [&](ncclResult_t r, const char *what) { checkNccl(r, what, memory); };
  auto mpi = [&](int code, const char *what) { checkMpi(code, what, memory); };
  MPI_Comm control; // the ids, apart from every other message
  mpi(MPI_Comm_dup(MPI_COMM_WORLD, &control), "MPI_Comm_dup");
  std::vector<ncclUniqueId> ids(groups.size());
  std::vector<int> positions(groups.size(), -1);
  std::vector<MPI_Request> requests;
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<int64_t> &members = groups[g];
    auto at = std::find(members.begin(), members.end(), me);
    if (at == members.end())
      continue;
    positions[g] = static_cast<int>(at - members.begin());
    if (positions[g] == 0) {
      check(ncclGetUniqueId(&ids[g]), "ncclGetUniqueId");
      for (size_t m = 1; m < members.size(); ++m)
        mpi(MPI_Isend(&ids[g], sizeof ids[g], MPI_BYTE, static_cast<int>(members[m]), 0, control,
                      &requests.emplace_back()),
            "MPI_Isend");
    } else {
      mpi(MPI_Irecv(&ids[g], sizeof ids[g], MPI_BYTE, static_cast<int>(members[0]), 0, control,
                    &requests.emplace_back()),
          "MPI_Irecv");
    }
  }
  mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  MPI_Comm_free(&control);
  std::vector<ncclComm_t> comms(groups.size(), nullptr);
  check(ncclGroupStart(), "ncclGroupStart");
  for (size_t g = 0; g < groups.size(); ++g)
    if (positions[g] >= 0)
      check(ncclCommInitRank(&comms[g], static_cast<int>(groups[g].size()), ids[g], positions[g]), "ncclCommInitRank");
  check(ncclGroupEnd(), "ncclGroupEnd");
  return comms;
}

NcclGroups::NcclGroups(backend::Comm &mpi, DeviceMemory &memory, const std::vector<std::vector<int64_t>> &groups)
    : memory_(memory) {
  std::vector<ncclComm_t> comms = openCommunicators(groups, mpi.rank(), memory);
  for (size_t g = 0; g < groups.size(); ++g)
    if (comms[g])
      comms_.emplace(groups[g], comms[g]);
}

NcclGroups::~NcclGroups() {
  for (auto &[members, comm] : comms_)
    ncclCommDestroy(comm);
}

void checkNccl(ncclResult_t r, const char *what, const DeviceMemory &memory) {
  if (r != ncclSuccess)
    memory.fail(std::string(what) + ": " + ncclGetErrorString(r));
}

void checkMpi(int code, const char *what, const DeviceMemory &memory) {
  if (code != MPI_SUCCESS)
    // diag-coverage: unreachable (only a dead peer or a broken MPI fails these calls; no schedule or option does)
    memory.fail(std::string("MPI error in ") + what);
}

ncclComm_t NcclGroups::communicator(const std::vector<int64_t> &members) {
  auto it = comms_.find(members);
  if (it == comms_.end())
    // diag-coverage: unreachable (the verification run of the same schedule called every collective)
    memory_.fail("internal error: no NCCL communicator for a collective over ranks " + std::to_string(members.front()) +
                 " to " + std::to_string(members.back()) + " (the verification run did not see it)");
  return it->second;
}

void NcclGroups::allReduce(void *data, DType type, int64_t n, const std::vector<int64_t> &members,
                           cudaStream_t stream) {
  if (n == 0) // a mixture-of-experts layer's router: no weights, on every member alike
    return;
  check(ncclAllReduce(data, data, static_cast<size_t>(n), ncclType(type), ncclSum, communicator(members), stream),
        "ncclAllReduce");
}

void NcclGroups::reduceScatter(const void *data, void *part, DType type, int64_t n, const std::vector<int64_t> &members,
                               cudaStream_t stream) {
  if (n == 0)
    return;
  check(ncclReduceScatter(data, part, static_cast<size_t>(n / static_cast<int64_t>(members.size())), ncclType(type),
                          ncclSum, communicator(members), stream),
        "ncclReduceScatter");
}

void NcclGroups::gather(const void *data, void *out, DType type, const std::vector<int64_t> &counts,
                        const std::vector<int64_t> &members, cudaStream_t stream) {
  ncclComm_t comm = communicator(members);
  if (std::all_of(counts.begin(), counts.end(), [](int64_t c) { return c == 0; }))
    return;
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

void NcclGroups::allToAll(const void *send, const std::vector<int64_t> &sendCounts, void *recv,
                          const std::vector<int64_t> &recvCounts, DType type, const std::vector<int64_t> &members,
                          cudaStream_t stream) {
  ncclComm_t comm = communicator(members);
  check(ncclGroupStart(), "ncclGroupStart");
  int64_t sent = 0, received = 0;
  for (size_t m = 0; m < members.size(); ++m) {
    if (sendCounts[m] > 0)
      check(ncclSend(static_cast<const char *>(send) + sent * sizeOf(type), static_cast<size_t>(sendCounts[m]),
                     ncclType(type), static_cast<int>(m), comm, stream),
            "ncclSend");
    if (recvCounts[m] > 0)
      check(ncclRecv(static_cast<char *>(recv) + received * sizeOf(type), static_cast<size_t>(recvCounts[m]),
                     ncclType(type), static_cast<int>(m), comm, stream),
            "ncclRecv");
    sent += sendCounts[m];
    received += recvCounts[m];
  }
  check(ncclGroupEnd(), "ncclGroupEnd");
}

} // namespace schedc::cuda
