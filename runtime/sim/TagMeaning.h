// TagMeaning — what the message of a point-to-point tag carries, in words ("stage 2's input
// of micro-batch 0, `2RECV_F0`"), for messages about the tag. An imported PyTorch schedule
// makes one (interop/ImportSchedule.h); the sim backend's messages use it
// (sim::Options::tagMeaning). Empty: the tag alone.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace schedc::sim {

using TagMeaning = std::function<std::string(int64_t tag)>;

} // namespace schedc::sim
