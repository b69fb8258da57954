// Comm — the MPI job real backends run in: one MPI process per rank (the cpu backend's
// collectives and messages; the cuda backend bootstraps NCCL over it and gathers the final
// weights with it). Groups become MPI communicators (made once per group, collectively over
// its members only). Sends are non-blocking (MPI_Isend with the buffer kept until it
// completes), because in the schedule language a send never waits; receives, collectives
// and the final gather block. Any MPI failure ends the whole job at once (MPI_Abort) with a
// message naming the rank.
#pragma once

#include "backend/Tensors.h"

#include <map>
#include <memory>
#include <mpi.h>
#include <string>
#include <vector>

namespace schedc::backend {

class Comm {
public:
  Comm();
  ~Comm();
  int rank() const { return rank_; }
  int size() const { return size_; }

  // Sum over `members` (ascending world ranks, including this one), in place.
  void allreduce(std::vector<float> &data, const std::vector<int64_t> &members);
  // Every member contributes its pieces; returns everyone's (pieces may arrive in any order).
  std::vector<Piece> allgather(const std::vector<Piece> &mine, const std::vector<int64_t> &members);
  // Sums `data` (n elements) over the members; returns this member's part: the
  // position-th of size() equal parts.
  std::vector<float> reduceScatter(const std::vector<float> &data, const std::vector<int64_t> &members);
  // Sends toEach[i] to the i-th member (any length each); returns what each member sent this
  // one, in member order.
  std::vector<std::vector<float>> alltoallv(const std::vector<std::vector<float>> &toEach,
                                            const std::vector<int64_t> &members);
  // Point-to-point messages carry the schedule's tag (MPI_ANY_TAG receives any).
  void send(int64_t to, int tag, std::shared_ptr<std::vector<char>> bytes);
  std::vector<char> recv(int64_t from, int tag);
  // Every member's integers (any number each), in member order.
  std::vector<std::vector<int64_t>> allgatherInts(const std::vector<int64_t> &mine,
                                                  const std::vector<int64_t> &members);
  // Gathers every rank's bytes at rank 0 (empty elsewhere).
  std::vector<std::vector<char>> gather(const std::vector<char> &mine);
  // Receives (and drops) the messages the schedule never received, then waits for every
  // send still in flight. Collective: every rank calls it.
  void finish();
  // Ends the whole job: prints `message` naming this rank, then MPI_Abort.
  [[noreturn]] void abort(const std::string &message);
  static bool initialized();
  // Seconds spent inside MPI calls so far.
  double mpiSeconds() const { return mpiSeconds_; }

private:
  MPI_Comm communicator(const std::vector<int64_t> &members);
  void check(int code, const char *what);

  int rank_ = 0, size_ = 1;
  double mpiSeconds_ = 0;
  std::map<std::vector<int64_t>, MPI_Comm> comms_;
  struct Pending {
    MPI_Request request;
    std::shared_ptr<std::vector<char>> bytes;
  };
  std::vector<Pending> pending_;
  std::vector<int64_t> sentTo_, receivedFrom_; // messages per peer (to drain unreceived ones)
};

// Gathers every rank's updated weight pieces at rank 0 — `mine` holds (layer, begin,
// rounded, floats) records in the Wire format; rounded is 1 for a bf16 weight, 0 for an
// fp32 weight or master — and there writes DIR/layer_<l>.npy (H x H) for every layer into
// DIR (atomically, never over what schedc did not write: see WeightsDir.h; `overwrite` is
// --overwrite-weights). An element takes an fp32 value where any rank has one, else the
// bf16 one; replicas hold the same values, the first wins.
// Collective. Returns an error message, or empty.
std::string gatherWeights(Comm &comm, const std::vector<char> &mine, int64_t layers, int64_t hidden,
                          const std::string &dir, bool overwrite);

// This process's place among the MPI processes on its node (MPI_COMM_TYPE_SHARED): its
// rank there, how many there are, and the node's physical memory shared among them (bytes
// per process; 0 where the system does not say). Collective.
struct NodePlace {
  int rank = 0, size = 1;
  double memoryPerProcess = 0;
};
NodePlace nodePlace();

// Writes `values` (rows x cols, float32) as a .npy file, atomically (a temporary file, then
// a rename). Returns false on an I/O error.
bool writeNpy(const std::string &path, const std::vector<float> &values, int64_t rows, int64_t cols);

} // namespace schedc::backend
