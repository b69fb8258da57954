// Comm implementation, and the .npy writer.
#include "backend/Comm.h"
#include "backend/WeightsDir.h"
#include "backend/Wire.h"
#include "files/AtomicFile.h"

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace schedc::backend {

bool Comm::initialized() {
  int flag = 0;
  MPI_Initialized(&flag);
  return flag != 0;
}

Comm::Comm() {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Comm::~Comm() {
  for (auto &[members, comm] : comms_)
    if (comm != MPI_COMM_WORLD && comm != MPI_COMM_NULL)
      MPI_Comm_free(&comm);
}

void Comm::abort(const std::string &message) {
  // One write: other ranks may be saying theirs at the same time.
  std::cerr << "schedc: error: rank " + std::to_string(rank_) + ": " + message + "\n";
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

namespace {
// Runs an MPI call and adds its duration to `seconds`.
template <class F> int timed(double &seconds, F &&call) {
  auto start = std::chrono::steady_clock::now();
  int code = call();
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return code;
}
} // namespace

void Comm::check(int code, const char *what) {
  if (code == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  abort(std::string("MPI error in ") + what + ": " + std::string(text, static_cast<size_t>(length)));
}

MPI_Comm Comm::communicator(const std::vector<int64_t> &members) {
  if (static_cast<int>(members.size()) == size_)
    return MPI_COMM_WORLD;
  auto it = comms_.find(members);
  if (it != comms_.end())
    return it->second;
  std::vector<int> ranks(members.begin(), members.end());
  MPI_Group world, group;
  check(MPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group");
  check(MPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(), &group), "MPI_Group_incl");
  MPI_Comm comm;
  check(MPI_Comm_create_group(MPI_COMM_WORLD, group, 0, &comm), "MPI_Comm_create_group");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  comms_[members] = comm;
  return comm;
}

void Comm::allreduce(std::vector<float> &data, const std::vector<int64_t> &members) {
  check(timed(mpiSeconds_,
              [&] {
                return MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()), MPI_FLOAT, MPI_SUM,
                                     communicator(members));
              }),
        "MPI_Allreduce");
}

std::vector<Piece> Comm::allgather(const std::vector<Piece> &mine, const std::vector<int64_t> &members) {
  MPI_Comm comm = communicator(members);
  int n = static_cast<int>(members.size());
  // Each member sends (begin, count) pairs, then the values.
  std::vector<int64_t> header;
  std::vector<float> values;
  for (const Piece &p : mine) {
    header.push_back(p.begin);
    header.push_back(static_cast<int64_t>(p.values.size()));
    values.insert(values.end(), p.values.begin(), p.values.end());
  }
  int myHeader = static_cast<int>(header.size()), myValues = static_cast<int>(values.size());
  std::vector<int> headerCounts(static_cast<size_t>(n)), valueCounts(static_cast<size_t>(n));
  check(timed(mpiSeconds_, [&] { return MPI_Allgather(&myHeader, 1, MPI_INT, headerCounts.data(), 1, MPI_INT, comm); }),
        "MPI_Allgather");
  check(timed(mpiSeconds_, [&] { return MPI_Allgather(&myValues, 1, MPI_INT, valueCounts.data(), 1, MPI_INT, comm); }),
        "MPI_Allgather");
  std::vector<int> headerOffsets(static_cast<size_t>(n)), valueOffsets(static_cast<size_t>(n));
  for (int i = 1; i < n; ++i) {
    headerOffsets[i] = headerOffsets[i - 1] + headerCounts[i - 1];
    valueOffsets[i] = valueOffsets[i - 1] + valueCounts[i - 1];
  }
  std::vector<int64_t> allHeaders(static_cast<size_t>(headerOffsets[n - 1] + headerCounts[n - 1]));
  std::vector<float> allValues(static_cast<size_t>(valueOffsets[n - 1] + valueCounts[n - 1]));
  check(timed(mpiSeconds_,
              [&] {
                return MPI_Allgatherv(header.data(), myHeader, MPI_INT64_T, allHeaders.data(), headerCounts.data(),
                                      headerOffsets.data(), MPI_INT64_T, comm);
              }),
        "MPI_Allgatherv");
  check(timed(mpiSeconds_,
              [&] {
                return MPI_Allgatherv(values.data(), myValues, MPI_FLOAT, allValues.data(), valueCounts.data(),
                                      valueOffsets.data(), MPI_FLOAT, comm);
              }),
        "MPI_Allgatherv");
  std::vector<Piece> out;
  size_t at = 0;
  for (size_t h = 0; h < allHeaders.size(); h += 2) {
    Piece p;
    p.begin = allHeaders[h];
    p.values.assign(allValues.begin() + static_cast<long>(at),
                    allValues.begin() + static_cast<long>(at + allHeaders[h + 1]));
    at += static_cast<size_t>(allHeaders[h + 1]);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::vector<int64_t>> Comm::allgatherInts(const std::vector<int64_t> &mine,
                                                      const std::vector<int64_t> &members) {
  MPI_Comm comm = communicator(members);
  int n = static_cast<int>(members.size()), count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<size_t>(n)), offsets(static_cast<size_t>(n));
  check(timed(mpiSeconds_, [&] { return MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm); }),
        "MPI_Allgather");
  for (int i = 1; i < n; ++i)
    offsets[i] = offsets[i - 1] + counts[i - 1];
  std::vector<int64_t> all(static_cast<size_t>(offsets[n - 1] + counts[n - 1]));
  check(timed(mpiSeconds_,
              [&] {
                return MPI_Allgatherv(mine.data(), count, MPI_INT64_T, all.data(), counts.data(), offsets.data(),
                                      MPI_INT64_T, comm);
              }),
        "MPI_Allgatherv");
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    out[i].assign(all.begin() + offsets[i], all.begin() + offsets[i] + counts[i]);
  return out;
}

std::vector<float> Comm::reduceScatter(const std::vector<float> &data, const std::vector<int64_t> &members) {
  int n = static_cast<int>(members.size());
  std::vector<float> part(data.size() / static_cast<size_t>(n));
  check(timed(mpiSeconds_,
              [&] {
                return MPI_Reduce_scatter_block(data.data(), part.data(), static_cast<int>(part.size()), MPI_FLOAT,
                                                MPI_SUM, communicator(members));
              }),
        "MPI_Reduce_scatter_block");
  return part;
}

std::vector<std::vector<float>> Comm::alltoallv(const std::vector<std::vector<float>> &toEach,
                                                const std::vector<int64_t> &members) {
  MPI_Comm comm = communicator(members);
  const size_t n = members.size();
  std::vector<int> sendCounts(n), sendOffsets(n), recvCounts(n), recvOffsets(n);
  std::vector<float> out;
  size_t total = 0;
  for (const std::vector<float> &each : toEach)
    total += each.size();
  if (total > static_cast<size_t>(INT_MAX)) // MPI's counts and offsets are ints
    abort("an all-to-all of " + std::to_string(total) + " elements is more than MPI_Alltoallv's int counts hold; " +
          "give a smaller --hidden or --tokens");
  for (size_t i = 0; i < n; ++i) {
    sendOffsets[i] = static_cast<int>(out.size());
    sendCounts[i] = static_cast<int>(toEach[i].size());
    out.insert(out.end(), toEach[i].begin(), toEach[i].end());
  }
  check(timed(mpiSeconds_,
              [&] { return MPI_Alltoall(sendCounts.data(), 1, MPI_INT, recvCounts.data(), 1, MPI_INT, comm); }),
        "MPI_Alltoall");
  for (size_t i = 1; i < n; ++i)
    recvOffsets[i] = recvOffsets[i - 1] + recvCounts[i - 1];
  std::vector<float> in(static_cast<size_t>(recvOffsets[n - 1] + recvCounts[n - 1]));
  check(timed(mpiSeconds_,
              [&] {
                return MPI_Alltoallv(out.data(), sendCounts.data(), sendOffsets.data(), MPI_FLOAT, in.data(),
                                     recvCounts.data(), recvOffsets.data(), MPI_FLOAT, comm);
              }),
        "MPI_Alltoallv");
  std::vector<std::vector<float>> fromEach(n);
  for (size_t i = 0; i < n; ++i)
    fromEach[i].assign(in.begin() + recvOffsets[i], in.begin() + recvOffsets[i] + recvCounts[i]);
  return fromEach;
}

void Comm::send(int64_t to, int tag, std::shared_ptr<std::vector<char>> bytes) {
  // Let finished sends go before adding one.
  for (size_t i = 0; i < pending_.size();) {
    int done = 0;
    check(MPI_Test(&pending_[i].request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) {
      pending_[i] = std::move(pending_.back());
      pending_.pop_back();
    } else {
      ++i;
    }
  }
  sentTo_.resize(static_cast<size_t>(size_));
  ++sentTo_[static_cast<size_t>(to)];
  Pending p{MPI_REQUEST_NULL, std::move(bytes)};
  check(MPI_Isend(p.bytes->data(), static_cast<int>(p.bytes->size()), MPI_BYTE, static_cast<int>(to), tag,
                  MPI_COMM_WORLD, &p.request),
        "MPI_Isend");
  pending_.push_back(std::move(p));
}

std::vector<char> Comm::recv(int64_t from, int tag) {
  receivedFrom_.resize(static_cast<size_t>(size_));
  ++receivedFrom_[static_cast<size_t>(from)];
  MPI_Status status;
  check(timed(mpiSeconds_, [&] { return MPI_Probe(static_cast<int>(from), tag, MPI_COMM_WORLD, &status); }),
        "MPI_Probe");
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::vector<char> bytes(static_cast<size_t>(count));
  check(timed(mpiSeconds_,
              [&] {
                return MPI_Recv(bytes.data(), count, MPI_BYTE, static_cast<int>(from), status.MPI_TAG, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE);
              }),
        "MPI_Recv");
  return bytes;
}

std::vector<std::vector<char>> Comm::gather(const std::vector<char> &mine) {
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<size_t>(size_)), offsets(static_cast<size_t>(size_));
  check(
      timed(mpiSeconds_, [&] { return MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD); }),
      "MPI_Gather");
  int total = 0;
  for (int i = 0; i < size_; ++i) {
    offsets[i] = total;
    total += counts[i];
  }
  std::vector<char> all(static_cast<size_t>(rank_ == 0 ? total : 0));
  check(timed(mpiSeconds_,
              [&] {
                return MPI_Gatherv(mine.data(), count, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE, 0,
                                   MPI_COMM_WORLD);
              }),
        "MPI_Gatherv");
  std::vector<std::vector<char>> out;
  if (rank_ == 0)
    for (int i = 0; i < size_; ++i)
      out.emplace_back(all.begin() + offsets[i], all.begin() + offsets[i] + counts[i]);
  return out;
}

void Comm::finish() {
  // A message the schedule never receives (check warns about it) would leave its send in
  // flight forever. Every rank learns how many messages each other rank sent it, receives
  // and drops the ones the schedule did not, and then every send completes.
  std::vector<int64_t> sentToMe(static_cast<size_t>(size_));
  sentTo_.resize(static_cast<size_t>(size_));
  check(timed(mpiSeconds_,
              [&] {
                return MPI_Alltoall(sentTo_.data(), 1, MPI_INT64_T, sentToMe.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
              }),
        "MPI_Alltoall");
  receivedFrom_.resize(static_cast<size_t>(size_));
  for (int from = 0; from < size_; ++from)
    for (int64_t k = receivedFrom_[from]; k < sentToMe[from]; ++k)
      recv(from, MPI_ANY_TAG);
  for (Pending &p : pending_)
    check(MPI_Wait(&p.request, MPI_STATUS_IGNORE), "MPI_Wait");
  pending_.clear();
}

std::string gatherWeights(Comm &comm, const std::vector<char> &mine, int64_t layers, int64_t hidden,
                          const std::string &dir, bool overwrite) {
  std::vector<std::vector<char>> all = comm.gather(mine);
  if (comm.rank() != 0)
    return "";
  int64_t n = hidden * hidden;
  std::vector<std::vector<float>> weights(static_cast<size_t>(layers), std::vector<float>(static_cast<size_t>(n)));
  std::vector<std::vector<bool>> have(static_cast<size_t>(layers), std::vector<bool>(static_cast<size_t>(n)));
  // fp32 pieces first, over every rank; then bf16 weights fill what no master covers.
  for (int64_t pass : {0, 1})
    for (const std::vector<char> &bytes : all) {
      Reader r{bytes};
      while (r.at < bytes.size()) {
        int64_t layer = r.i(), begin = r.i(), rounded = r.i();
        std::vector<float> values = r.floats();
        if (rounded != pass)
          continue;
        for (size_t i = 0; i < values.size(); ++i)
          if (!have[layer][begin + i]) { // replicas hold the same values: the first wins
            weights[layer][begin + i] = values[i];
            have[layer][begin + i] = true;
          }
      }
    }
  std::string tmp;
  if (std::string problem = makeWeightsStaging(dir, tmp); !problem.empty())
    return problem;
  for (int64_t l = 0; l < layers; ++l)
    if (!writeNpy(tmp + "/layer_" + std::to_string(l) + ".npy", weights[l], hidden, hidden)) {
      discardWeightsStaging(tmp);
      return "cannot write the weights of layer " + std::to_string(l) + " beside `" + dir + "`";
    }
  return publishWeights(tmp, dir, overwrite);
}

NodePlace nodePlace() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  NodePlace place;
  MPI_Comm_rank(node, &place.rank);
  MPI_Comm_size(node, &place.size);
  MPI_Comm_free(&node);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0)
    place.memoryPerProcess = static_cast<double>(pages) * static_cast<double>(page) / place.size;
  return place;
}

bool writeNpy(const std::string &path, const std::vector<float> &values, int64_t rows, int64_t cols) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
  // Pad so the data starts on a 64-byte boundary; the header ends with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  uint16_t length = static_cast<uint16_t>(header.size());
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes.append(reinterpret_cast<const char *>(&length), 2);
  bytes += header;
  bytes.append(reinterpret_cast<const char *>(values.data()), values.size() * 4);
  return writeAtomically(path, bytes);
}

} // namespace schedc::backend
