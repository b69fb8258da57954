// Operations — the language's operations, events and value kinds as C++ sees them, all
// from the two tables Operations.def and ValueKinds.def: the enums, each operation's
// signature (parameters in call order, results), each event's name, class and colour, and
// the named parameters of each operation (param::Forward::weight), so no code refers to an
// operand by its position.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace schedc {

// ---- Value kinds ---------------------------------------------------------------------------

enum class ValueKind : uint8_t {
#define VALUE_KIND(Name, name, plural) Name,
#include "ops/ValueKinds.def"
};
constexpr int kValueKinds = 0
#define VALUE_KIND(Name, name, plural) +1
#include "ops/ValueKinds.def"
    ;
const char *valueKindName(ValueKind k);   // "weight", "activation gradient", ...
const char *valueKindPlural(ValueKind k); // "weights", "activation gradients", ...

// ---- Memory tiers --------------------------------------------------------------------------

// Where a value lives (docs/language.md, "Memory tiers"): in its accelerator's memory, in its
// node's host memory, or on its node's NVMe. The language names them with the builtin names
// `device`, `host`, `nvme`, which stand for these numbers (load's `on`, offload's `to`).
enum class Tier : uint8_t { Device, Host, Nvme };
constexpr int kTiers = 3;
struct TierInfo {
  const char *name;  // its builtin name
  const char *place; // "in device memory", "in host memory", "on NVMe"
};
constexpr std::array<TierInfo, kTiers> kTierInfos{
    {{"device", "in device memory"}, {"host", "in host memory"}, {"nvme", "on NVMe"}}};
inline const char *tierName(Tier t) {
  return kTierInfos[static_cast<size_t>(t)].name;
}
inline const char *tierPlace(Tier t) {
  return kTierInfos[static_cast<size_t>(t)].place;
}
// The tier a builtin name stands for, if it is one.
constexpr std::optional<Tier> tierNamed(std::string_view name) {
  for (size_t i = 0; i < kTierInfos.size(); ++i)
    if (name == kTierInfos[i].name)
      return static_cast<Tier>(i);
  return std::nullopt;
}

// ---- Events --------------------------------------------------------------------------------

enum class EventKind : uint8_t {
#define EVENT(Name, name, class, colour, shade, legend) Name,
#include "ops/Operations.def"
};
constexpr int kEventKinds = 0
#define EVENT(Name, name, class, colour, shade, legend) +1
#include "ops/Operations.def"
    ;

// Transfer: a copy between the device and host memory or NVMe (offload, prefetch).
enum class EventClass : uint8_t { Compute, Collective, PointToPoint, Transfer, Other };

struct EventInfo {
  const char *name;
  EventClass eventClass;
  const char *colour; // "#rrggbb", or "": a hue per layer, at lightness `shade` %
  int shade;
  const char *legend; // its legend label: "/label" joins an earlier entry, "?" only when present
};
// Each event kind's, in EventKind order (Operations.cpp): read inline, on the simulator's
// every event.
extern const std::array<EventInfo, kEventKinds> kEventInfos;
inline const EventInfo &eventInfo(EventKind k) {
  return kEventInfos[static_cast<size_t>(k)];
}
inline const char *eventName(EventKind k) {
  return eventInfo(k).name;
}
// Forward, backward and its halves: the work bubbles are measured against.
inline bool isComputeEvent(EventKind k) {
  return eventInfo(k).eventClass == EventClass::Compute;
}
// Point-to-point and collectives.
inline bool isCommunicationEvent(EventKind k) {
  EventClass c = eventInfo(k).eventClass;
  return c == EventClass::Collective || c == EventClass::PointToPoint;
}

// Offload and prefetch: copies between memory tiers.
inline bool isTransferEvent(EventKind k) {
  return eventInfo(k).eventClass == EventClass::Transfer;
}

// ---- Operations ----------------------------------------------------------------------------

enum class OpKind : uint8_t {
#define OPERATION(Name, spelling, form, event) Name,
#include "ops/Operations.def"
};
constexpr int kOpKinds = 0
#define OPERATION(Name, spelling, form, event) +1
#include "ops/Operations.def"
    ;

enum class ParamKind : uint8_t { Int, Set, Value, Group };

// The type of a parameter or a result: an integer, a set, a value of one kind, a value of
// any kind (known at run time), or (results only) the kind of the operation's value operand.
enum class SigType : uint8_t {
  Int,
  Set,
#define VALUE_KIND(Name, name, plural) Name,
#include "ops/ValueKinds.def"
  Value,
  Operand,
};
std::optional<ValueKind> valueKindOf(SigType t); // for a value kind; nullopt otherwise

struct ParamInfo {
  const char *name;
  ParamKind kind;
  SigType type;
  bool optional;
  int64_t defaultValue; // an optional Int's
  uint8_t slot;         // its index among the operation's Int and Set operands, or its Value operands
};

struct OpInfo {
  const char *name;                  // its spelling
  bool called;                       // called by name (else made by sema from other syntax)
  std::optional<EventKind> event;    // what it logs
  std::span<const ParamInfo> params; // in call order
  std::span<const SigType> results;
};
constexpr size_t kMaxParams = 9;
constexpr size_t kMaxResults = 2;

// Each operation's, in OpKind order (Operations.cpp): read inline, as eventInfo.
extern const std::array<OpInfo, kOpKinds> kOpInfos;
inline const OpInfo &opInfo(OpKind k) {
  return kOpInfos[static_cast<size_t>(k)];
}
inline const char *opName(OpKind k) {
  return opInfo(k).name;
}

// ---- Collectives ---------------------------------------------------------------------------
// The events of class Collective, each logged by the operation of its name: a closed enum, so
// a `switch` over it names every collective and a new one fails to compile until every place
// handles it (-Werror=switch).
#define SCHEDC_IF_Collective(...) __VA_ARGS__
#define SCHEDC_IF_Compute(...)
#define SCHEDC_IF_PointToPoint(...)
#define SCHEDC_IF_Transfer(...)
#define SCHEDC_IF_Other(...)
enum class CollectiveKind : uint8_t {
#define EVENT(Name, name, class, colour, shade, legend) SCHEDC_IF_##class(Name, )
#include "ops/Operations.def"
};
constexpr int kCollectiveKinds = 0
#define EVENT(Name, name, class, colour, shade, legend) SCHEDC_IF_##class(+1)
#include "ops/Operations.def"
    ;
// Each collective's operation, in CollectiveKind order.
constexpr std::array<OpKind, kCollectiveKinds> kCollectiveOps = {
#define EVENT(Name, name, class, colour, shade, legend) SCHEDC_IF_##class(OpKind::Name, )
#include "ops/Operations.def"
};
// Each collective's event, in CollectiveKind order.
constexpr std::array<EventKind, kCollectiveKinds> kCollectiveEvents = {
#define EVENT(Name, name, class, colour, shade, legend) SCHEDC_IF_##class(EventKind::Name, )
#include "ops/Operations.def"
};
#undef SCHEDC_IF_Collective
#undef SCHEDC_IF_Compute
#undef SCHEDC_IF_PointToPoint
#undef SCHEDC_IF_Transfer
#undef SCHEDC_IF_Other
// Every collective, for the `switch`es that treat them alike and must still name each kind
// (the dispatch of operations, the cost models' "no flops"): `SCHEDC_COLLECTIVE_OP_CASES`
// stands for `case OpKind::AllReduce: ...`, `SCHEDC_COLLECTIVE_EVENT_CASES` for the events'.
// A collective added to Operations.def and not here fails the static_assert below, so the
// places that say what a collective does (sim/Collective.cpp, the kernels, the hardware
// model's time) are the only ones a new collective touches.
#define SCHEDC_FOR_EACH_COLLECTIVE(X) X(AllReduce) X(AllGather) X(ReduceScatter) X(AllToAll)
#define SCHEDC_CASE_OP(Name) case OpKind::Name:
#define SCHEDC_CASE_EVENT(Name) case EventKind::Name:
#define SCHEDC_COLLECTIVE_OP_CASES SCHEDC_FOR_EACH_COLLECTIVE(SCHEDC_CASE_OP)
#define SCHEDC_COLLECTIVE_EVENT_CASES SCHEDC_FOR_EACH_COLLECTIVE(SCHEDC_CASE_EVENT)
#define SCHEDC_LIST_EVENT(Name) EventKind::Name,
static_assert(std::array<EventKind, kCollectiveKinds>{SCHEDC_FOR_EACH_COLLECTIVE(SCHEDC_LIST_EVENT)} ==
                  kCollectiveEvents,
              "SCHEDC_FOR_EACH_COLLECTIVE must list every collective of Operations.def, in its order");
#undef SCHEDC_LIST_EVENT

inline OpKind opOf(CollectiveKind k) {
  return kCollectiveOps[static_cast<size_t>(k)];
}
inline EventKind eventOf(CollectiveKind k) {
  return kCollectiveEvents[static_cast<size_t>(k)];
}
// As the source spells it: allreduce, allgather, reducescatter (the events keep the puzzle's
// names: scatterreduce).
inline const char *collectiveName(CollectiveKind k) {
  return opName(opOf(k));
}
// The collective `op` calls, if it is one.
inline std::optional<CollectiveKind> collectiveOf(OpKind op) {
  for (size_t i = 0; i < kCollectiveOps.size(); ++i)
    if (kCollectiveOps[i] == op)
      return static_cast<CollectiveKind>(i);
  return std::nullopt;
}
// The collective that logs `e`, if it is one's.
inline std::optional<CollectiveKind> collectiveOf(EventKind e) {
  for (size_t i = 0; i < kCollectiveEvents.size(); ++i)
    if (kCollectiveEvents[i] == e)
      return static_cast<CollectiveKind>(i);
  return std::nullopt;
}

// The operation a schedule calls `name` (including aliases), if any; every such name.
std::optional<OpKind> findOperation(std::string_view name);
std::span<const std::string_view> operationNames();

// Each operation's parameters by name: param::Forward::weight. ParamOf<P>::kind is the
// operation a parameter enum belongs to.
namespace param {
#define OPERATION(Name, spelling, form, event) enum class Name : uint8_t {
#define PARAM(Name, param, kind, type, use, default) param,
#define END_OPERATION(Name)                                                                                            \
  }                                                                                                                    \
  ;
#include "ops/Operations.def"
} // namespace param

template <class P> struct ParamOf;
#define OPERATION(Name, spelling, form, event)                                                                         \
  template <> struct ParamOf<param::Name> { static constexpr OpKind kind = OpKind::Name; };
#include "ops/Operations.def"

// The parameter `p` of its operation.
template <class P> const ParamInfo &paramInfo(P p) {
  return opInfo(ParamOf<P>::kind).params[static_cast<size_t>(p)];
}

} // namespace schedc
