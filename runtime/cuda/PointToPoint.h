// PointToPoint — the cuda backend's send and recv over NCCL. In the schedule language a
// send never waits, but an NCCL send waits on its stream until the receiver posts the
// receive, and NCCL runs one communicator's operations in the order they were issued: one
// stream or one communicator shared by several pairs can hang a legal schedule
// (docs/cuda.md has two). So every ordered (sender, receiver) route of the schedule gets a
// channel of its own: a two-rank communicator and a stream. They are all opened before the
// run, from the routes the verification run saw (sim::World::routes), in one NCCL group
// call, so no two ranks wait for each other while opening them, and each carries one small
// message at once (NCCL connects a pair at its first exchange, where the sender can wait
// for the receiver). A message is a small header
// over MPI (non-blocking) — its tag, its buffers' sizes and types, and the sender's
// description of the value — then one ncclSend per buffer on the channel. The receiver
// reads a route's headers in the order they were sent and posts the receives in that
// order; a message with another tag than the one asked for is received all the same and
// kept for the recv that asks for it. Buffers cross streams by StreamOrder's rules, so
// compute never waits for a send, and waits for a receive only when it uses the value.
#pragma once

#include "backend/Comm.h"
#include "cuda/DeviceMemory.h"
#include "cuda/Nccl.h"

#include <deque>
#include <map>
#include <nccl.h>
#include <vector>

namespace schedc::cuda {

class PointToPoint {
public:
  struct Message {
    int64_t tag = 0;
    std::vector<int64_t> description; // the sender's, of the value; opaque here
    std::vector<Buffer> buffers;
  };

  // Opens a channel for every route this rank sends or receives on. Collective: every rank
  // calls it, with the same routes.
  PointToPoint(backend::Comm &mpi, DeviceMemory &memory, const std::vector<std::pair<int64_t, int64_t>> &routes);
  ~PointToPoint();
  PointToPoint(const PointToPoint &) = delete;
  PointToPoint &operator=(const PointToPoint &) = delete;

  void send(int64_t to, int64_t tag, const std::vector<int64_t> &description, const std::vector<Buffer> &buffers);
  // The next message from `from` with `tag`, its buffers being received (StreamOrder makes
  // whoever uses them wait).
  Message recv(int64_t from, int64_t tag);
  // Receives (and drops) every message the schedule never received, so that every send
  // completes, and waits for the channels. Collective: every rank calls it.
  void finish();
  // Makes `stream` wait for the work enqueued on every channel so far.
  void joinInto(cudaStream_t stream);

private:
  struct Channel {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
  };
  Channel &channel(int64_t from, int64_t to);
  // Reads the next header from `from` and posts its receives.
  Message receiveNext(int64_t from);
  void check(ncclResult_t r, const char *what) { checkNccl(r, what, memory_); }
  void checkMpi(int code, const char *what) { cuda::checkMpi(code, what, memory_); }

  backend::Comm &mpi_;
  DeviceMemory &memory_;
  MPI_Comm headers_ = MPI_COMM_NULL;                                 // the headers, apart from every other message
  std::map<std::pair<int64_t, int64_t>, Channel> channels_;          // (from, to)
  std::map<std::pair<int64_t, int64_t>, std::deque<Message>> early_; // (from, tag): received before asked for
  std::vector<int64_t> sent_, read_;                                 // headers sent to / read from each rank
  struct PendingHeader {
    MPI_Request request;
    std::shared_ptr<std::vector<int64_t>> words;
  };
  std::vector<PendingHeader> pending_;
};

} // namespace schedc::cuda
