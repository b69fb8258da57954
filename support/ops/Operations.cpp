// Operations implementation: the tables of Operations.def and ValueKinds.def, laid out once
// as constant arrays.
#include "ops/Operations.h"

#include <array>
#include <vector>

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
#define EVENT(Name, name, class, colour, legend) {name, EventClass::class, colour, legend},
#include "ops/Operations.def"
};

// An operation's event by name, or None.
namespace event_of {
constexpr std::optional<EventKind> None = std::nullopt;
#define EVENT(Name, name, class, colour, legend) constexpr std::optional<EventKind> Name = EventKind::Name;
#include "ops/Operations.def"
} // namespace event_of

constexpr bool Required = false, Optional = true;

// Every parameter and result, operation by operation; slots are filled in by Table.
ParamInfo kParams[] = {
#define PARAM(Name, param, kind, type, use, default) {#param, ParamKind::kind, SigType::type, use, default, 0},
#include "ops/Operations.def"
};
constexpr SigType kResults[] = {
#define RESULT(Name, type) SigType::type,
#include "ops/Operations.def"
    SigType::Int, // (no operation's: keeps the array non-empty)
};
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

struct Table {
  std::array<OpInfo, kOpKinds> ops;
  std::vector<std::string_view> names; // what schedules call, aliases last
  Table() {
    static constexpr const char *spellings[] = {
#define OPERATION(Name, spelling, form, event) spelling,
#include "ops/Operations.def"
    };
    static constexpr bool called[] = {
#define OPERATION(Name, spelling, form, event) std::string_view(#form) == "Call",
#include "ops/Operations.def"
    };
    static constexpr std::optional<EventKind> events[] = {
#define OPERATION(Name, spelling, form, event) event_of::event,
#include "ops/Operations.def"
    };
    size_t param = 0, result = 0;
    for (size_t k = 0; k < ops.size(); ++k) {
      std::span<ParamInfo> params(kParams + param, kParamCount[k]);
      uint8_t exprs = 0, values = 0;
      for (ParamInfo &p : params)
        p.slot = p.kind == ParamKind::Value ? values++ : p.kind == ParamKind::Group ? 0 : exprs++;
      ops[k] = OpInfo{spellings[k], called[k], events[k], params, std::span(kResults + result, kResultCount[k])};
      param += kParamCount[k];
      result += kResultCount[k];
      if (called[k])
        names.push_back(spellings[k]);
    }
#define ALIAS(Name, spelling) names.push_back(spelling);
#include "ops/Operations.def"
  }
};

const Table &table() {
  static const Table t;
  return t;
}

constexpr size_t largest(std::span<const size_t> counts) {
  size_t most = 0;
  for (size_t c : counts)
    most = c > most ? c : most;
  return most;
}

static_assert(std::size(kEvents) == kEventKinds);
static_assert(largest(kParamCount) <= kMaxParams && largest(kResultCount) <= kMaxResults);
static_assert(std::size(kParamCount) == kOpKinds && std::size(kResultCount) == kOpKinds);

} // namespace

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

const EventInfo &eventInfo(EventKind k) {
  return kEvents[static_cast<size_t>(k)];
}

const OpInfo &opInfo(OpKind k) {
  return table().ops[static_cast<size_t>(k)];
}

std::optional<OpKind> findOperation(std::string_view name) {
#define ALIAS(Name, spelling)                                                                                     \
  if (name == spelling)                                                                                          \
    return OpKind::Name;
#include "ops/Operations.def"
  const Table &t = table();
  for (size_t k = 0; k < t.ops.size(); ++k)
    if (t.ops[k].called && name == t.ops[k].name)
      return static_cast<OpKind>(k);
  return std::nullopt;
}

std::span<const std::string_view> operationNames() {
  return table().names;
}

} // namespace schedc
