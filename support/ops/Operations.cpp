// Operations implementation: the tables of Operations.def and ValueKinds.def, laid out once
// as constant arrays.
#include "ops/Operations.h"

#include <array>

namespace schedc {

namespace {

constexpr const char *kKindNames[] = {
#define VALUE_KIND(Name, name, plural) name,
#include "ops/ValueKinds.def"
};
constexpr const char *kKindPlurals[] = {
#define VALUE_KIND(Name, name, plural) plural,
#include "ops/ValueKinds.def"
};

constexpr EventInfo kEvents[] = {
#define EVENT(Name, name, class, colour, shade, legend) {name, EventClass::class, colour, shade, legend},
#include "ops/Operations.def"
};

// An operation's event by name, or None.
namespace event_of {
constexpr std::optional<EventKind> None = std::nullopt;
#define EVENT(Name, name, class, colour, shade, legend) constexpr std::optional<EventKind> Name = EventKind::Name;
#include "ops/Operations.def"
} // namespace event_of

constexpr bool Required = false, Optional = true;

constexpr size_t kParamCount[] = {
#define OPERATION(Name, spelling, form, event) 0
#define PARAM(Name, param, kind, type, use, default) +1
#define END_OPERATION(Name) ,
#include "ops/Operations.def"
};
constexpr size_t kResultCount[] = {
#define OPERATION(Name, spelling, form, event) 0
#define RESULT(Name, type) +1
#define END_OPERATION(Name) ,
#include "ops/Operations.def"
};

constexpr size_t sum(std::span<const size_t> counts) {
  size_t total = 0;
  for (size_t c : counts)
    total += c;
  return total;
}

constexpr size_t largest(std::span<const size_t> counts) {
  size_t most = 0;
  for (size_t c : counts)
    most = c > most ? c : most;
  return most;
}

// Every parameter, operation by operation, each with its slot: its index among the
// operation's Int and Set arguments, or among its Value arguments.
constexpr std::array<ParamInfo, sum(kParamCount)> kParams = [] {
  std::array<ParamInfo, sum(kParamCount)> params = {{
#define PARAM(Name, param, kind, type, use, default) {#param, ParamKind::kind, SigType::type, use, default, 0},
#include "ops/Operations.def"
  }};
  size_t next = 0;
  for (size_t count : kParamCount) {
    uint8_t exprs = 0, values = 0;
    for (size_t i = 0; i < count; ++i, ++next) {
      ParamInfo &p = params[next];
      p.slot = p.kind == ParamKind::Value ? values++ : p.kind == ParamKind::Group ? 0 : exprs++;
    }
  }
  return params;
}();

constexpr SigType kResults[] = {
#define RESULT(Name, type) SigType::type,
#include "ops/Operations.def"
    SigType::Int, // (no operation's: keeps the array non-empty)
};

constexpr std::array<OpInfo, kOpKinds> kOps = [] {
  constexpr const char *spellings[] = {
#define OPERATION(Name, spelling, form, event) spelling,
#include "ops/Operations.def"
  };
  constexpr bool called[] = {
#define OPERATION(Name, spelling, form, event) std::string_view(#form) == "Call",
#include "ops/Operations.def"
  };
  constexpr std::optional<EventKind> events[] = {
#define OPERATION(Name, spelling, form, event) event_of::event,
#include "ops/Operations.def"
  };
  std::array<OpInfo, kOpKinds> ops{};
  size_t param = 0, result = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    ops[k] = OpInfo{spellings[k], called[k], events[k], std::span(kParams.data() + param, kParamCount[k]),
                    std::span(kResults + result, kResultCount[k])};
    param += kParamCount[k];
    result += kResultCount[k];
  }
  return ops;
}();

// What schedules call operations: each called operation's name, then the aliases.
constexpr std::string_view kAliases[] = {
#define ALIAS(Name, spelling) spelling,
#include "ops/Operations.def"
};
constexpr size_t kCalled = [] {
  size_t n = 0;
  for (const OpInfo &op : kOps)
    n += op.called;
  return n;
}();
constexpr std::array<std::string_view, kCalled + std::size(kAliases)> kNames = [] {
  std::array<std::string_view, kCalled + std::size(kAliases)> names{};
  size_t n = 0;
  for (const OpInfo &op : kOps)
    if (op.called)
      names[n++] = op.name;
  for (std::string_view alias : kAliases)
    names[n++] = alias;
  return names;
}();

// The collectives are exactly the operations whose event is of class Collective, each logging
// the event of its own name (CollectiveKind, Operations.h).
constexpr bool collectivesMatchTheirEvents() {
  for (size_t k = 0; k < kOps.size(); ++k) {
    std::optional<EventKind> e = kOps[k].event;
    bool logsCollective = e && kEvents[static_cast<size_t>(*e)].eventClass == EventClass::Collective;
    bool listed = false;
    for (size_t c = 0; c < kCollectiveOps.size(); ++c)
      if (kCollectiveOps[c] == static_cast<OpKind>(k)) {
        listed = true;
        if (!e || static_cast<size_t>(*e) != static_cast<size_t>(kCollectiveEvents[c]))
          return false;
      }
    if (listed != logsCollective)
      return false;
  }
  return true;
}
static_assert(collectivesMatchTheirEvents());
static_assert(std::size(kEvents) == kEventKinds);
static_assert(std::size(kParamCount) == kOpKinds && std::size(kResultCount) == kOpKinds);
static_assert(largest(kParamCount) <= kMaxParams && largest(kResultCount) <= kMaxResults);

} // namespace

// The tables, for the inline lookups (Operations.h); constinit: set before any code runs,
// so other files' static initializers may look them up.
constinit const std::array<EventInfo, kEventKinds> kEventInfos = std::to_array(kEvents);
constinit const std::array<OpInfo, kOpKinds> kOpInfos = kOps;

const char *valueKindName(ValueKind k) {
  return kKindNames[static_cast<size_t>(k)];
}

const char *valueKindPlural(ValueKind k) {
  return kKindPlurals[static_cast<size_t>(k)];
}

std::optional<ValueKind> valueKindOf(SigType t) {
  if (t < SigType::Weight || t >= SigType::Value)
    return std::nullopt;
  return static_cast<ValueKind>(static_cast<int>(t) - static_cast<int>(SigType::Weight));
}

std::optional<OpKind> findOperation(std::string_view name) {
#define ALIAS(Name, spelling)                                                                                          \
  if (name == spelling)                                                                                                \
    return OpKind::Name;
#include "ops/Operations.def"
  for (size_t k = 0; k < kOps.size(); ++k)
    if (kOps[k].called && name == kOps[k].name)
      return static_cast<OpKind>(k);
  return std::nullopt;
}

std::span<const std::string_view> operationNames() {
  return kNames;
}

} // namespace schedc
