// PytorchCsv implementation: cells split on commas, each parsed as an action or an
// OVERLAP_F_B pair; columns are counted as the source manager counts them (the file is ASCII
// or refused).
#include "interop/PytorchCsv.h"

#include "memory/HugePages.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace schedc::interop {

namespace {

struct TypeName {
  ActionType type;
  const char *name;
};
// Longest first, so that `SEND_F` is not read as `S...` and `BW` not as `B`.
constexpr std::array<TypeName, 12> kTypes{{{ActionType::ReduceGrad, "REDUCE_GRAD"},
                                           {ActionType::Unshard, "UNSHARD"},
                                           {ActionType::Reshard, "RESHARD"},
                                           {ActionType::SendF, "SEND_F"},
                                           {ActionType::RecvF, "RECV_F"},
                                           {ActionType::SendB, "SEND_B"},
                                           {ActionType::RecvB, "RECV_B"},
                                           {ActionType::FullBackward, "BW"},
                                           {ActionType::Forward, "F"},
                                           {ActionType::BackwardInput, "I"},
                                           {ActionType::BackwardWeight, "W"},
                                           {ActionType::Backward, "B"}}};

constexpr std::string_view kOverlap = "OVERLAP_F_B";
constexpr int64_t kMaxNumber = 1'000'000; // stages and micro-batches past this are refused

// Reads the decimal number at the front of `s` (nullopt: none, or too large: `why` says which).
std::optional<int64_t> number(std::string_view &s, const char *what, std::string &why) {
  size_t n = 0;
  int64_t v = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') {
    v = v * 10 + (s[n] - '0');
    if (v > kMaxNumber) {
      why = std::string(what) + " numbers go up to " + std::to_string(kMaxNumber);
      return std::nullopt;
    }
    ++n;
  }
  if (n == 0) {
    why = std::string("expected a ") + what + " number";
    return std::nullopt;
  }
  s.remove_prefix(n);
  return v;
}

// One action (`2SEND_F3`, `1UNSHARD`), or nullopt with `why` set.
std::optional<Action> parseAction(std::string_view s, std::string &why) {
  Action a;
  std::optional<int64_t> stage = number(s, "stage", why);
  if (!stage)
    return std::nullopt;
  a.stage = *stage;
  const TypeName *found = nullptr;
  for (const TypeName &t : kTypes)
    if (!s.empty() && s[0] == t.name[0] && s.substr(0, std::string_view(t.name).size()) == t.name) {
      found = &t;
      break;
    }
  if (!found) {
    why = "unknown action type";
    return std::nullopt;
  }
  a.type = found->type;
  s.remove_prefix(std::string_view(found->name).size());
  if (!hasMicroBatch(a.type)) {
    if (!s.empty())
      why = std::string(found->name) + " takes no micro-batch";
    return s.empty() ? std::optional<Action>(a) : std::nullopt;
  }
  std::optional<int64_t> mb = number(s, "micro-batch", why);
  if (!mb || !s.empty()) {
    if (mb || why.rfind("expected", 0) == 0)
      why = std::string(found->name) + " needs a micro-batch number after it";
    return std::nullopt;
  }
  a.microBatch = *mb;
  return a;
}

// A cell's actions: one, or `(F;B)OVERLAP_F_B`.
std::optional<Actions> parseCell(std::string_view s, std::string &why) {
  if (s.empty() || s.front() != '(') {
    std::optional<Action> a = parseAction(s, why);
    return a ? std::optional<Actions>(Actions{*a}) : std::nullopt;
  }
  size_t close = s.find(')');
  size_t semi = s.find(';');
  if (close == std::string_view::npos || semi == std::string_view::npos || semi > close ||
      s.substr(close + 1) != kOverlap) {
    why = "an overlapped pair is written `(<forward>;<backward>)OVERLAP_F_B`";
    return std::nullopt;
  }
  std::optional<Action> f = parseAction(s.substr(1, semi - 1), why);
  std::optional<Action> b = f ? parseAction(s.substr(semi + 1, close - semi - 1), why) : std::nullopt;
  if (!f || !b)
    return std::nullopt;
  bool backward =
      b->type == ActionType::Backward || b->type == ActionType::FullBackward || b->type == ActionType::BackwardInput;
  if (f->type != ActionType::Forward || !backward) {
    why = "OVERLAP_F_B pairs a forward (F) with a backward (B, BW or I)";
    return std::nullopt;
  }
  return Actions{*f, *b};
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

SourceRange cellRange(uint32_t file, uint32_t line, size_t begin, size_t length) {
  uint32_t col = static_cast<uint32_t>(begin + 1);
  return {{file, line, col}, {file, line, static_cast<uint32_t>(col + (length ? length - 1 : 0))}};
}

} // namespace

const char *spelling(ActionType t) {
  for (const TypeName &n : kTypes)
    if (n.type == t)
      return n.name;
  return "?";
}

bool hasMicroBatch(ActionType t) {
  return t != ActionType::Unshard && t != ActionType::Reshard && t != ActionType::ReduceGrad;
}

std::optional<ActionTable> readActionTable(uint32_t file, const SourceManager &sources, DiagnosticEngine &diags) {
  const std::string &text = sources.text(file);
  // Quotes, other control characters and non-ASCII bytes are in no action.
  auto foreign = std::find_if(text.begin(), text.end(), [](char ch) {
    auto c = static_cast<unsigned char>(ch);
    return c == '"' || c >= 0x7f || (c < 0x20 && c != '\n' && c != '\r' && c != '\t');
  });
  if (foreign != text.end()) {
    auto bad = static_cast<size_t>(foreign - text.begin());
    size_t lineStart = text.rfind('\n', bad);
    lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
    auto line = static_cast<uint32_t>(std::count(text.begin(), foreign, '\n') + 1);
    diags.error(cellRange(file, line, bad - lineStart, 1),
                "a PyTorch schedule file holds actions such as `0F1` separated by commas; this character "
                "is not part of one");
    return std::nullopt;
  }
  ActionTable table;
  size_t lines = 0;
  bool bad = false;
  for (size_t start = 0; start < text.size(); ++lines) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    std::string_view row(text.data() + start, end - start);
    auto line = static_cast<uint32_t>(lines + 1);
    std::string_view whole = row.substr(0, row.find_last_not_of(" \t\r") + 1); // npos + 1 == 0: empty
    table.rowRanges.push_back(cellRange(file, line, 0, whole.size()));
    // A large file allocates as a large run does (memory/HugePages.h), its cells each once.
    memory::useHugePagesOnceLarge();
    std::vector<Cell> cells;
    cells.reserve(static_cast<size_t>(std::count(row.begin(), row.end(), ',')) + 1);
    int32_t idle = 0;
    for (size_t at = 0; at <= row.size();) {
      size_t comma = row.find(',', at);
      if (comma == std::string_view::npos)
        comma = row.size();
      std::string_view raw = row.substr(at, comma - at);
      std::string_view cell = trimmed(raw);
      size_t begin = at + static_cast<size_t>(cell.data() - raw.data());
      if (!cell.empty()) {
        std::string why;
        std::optional<Actions> actions = parseCell(cell, why);
        SourceRange range = cellRange(file, line, begin, cell.size());
        if (actions) {
          cells.push_back(Cell{std::move(*actions), range});
          cells.back().idleBefore = idle;
          idle = 0;
        } else {
          diags.error(range, "`" + std::string(cell) + "` is not a PyTorch pipeline action: " + why +
                                 " (actions are <stage><type><micro-batch>, e.g. `0F1`; types F, I, W, B, BW, "
                                 "SEND_F, RECV_F, SEND_B, RECV_B, UNSHARD, RESHARD, REDUCE_GRAD)");
          bad = true;
        }
      } else if (comma < row.size()) { // (not the end of a row: `a,b` has no idle slot after b)
        ++idle;
      }
      at = comma + 1;
    }
    table.rows.push_back(std::move(cells));
    start = end + 1;
  }
  if (table.rows.empty()) {
    diags.error(cellRange(file, 1, 0, 1), "the file is empty: a PyTorch schedule has a row of actions per rank");
    return std::nullopt;
  }
  if (bad)
    return std::nullopt;
  return table;
}

const Cell *firstCellWith(const ActionTable &table, const std::function<bool(const Action &)> &pred) {
  for (const std::vector<Cell> &row : table.rows)
    for (const Cell &cell : row)
      if (std::any_of(cell.actions.begin(), cell.actions.end(), pred))
        return &cell;
  return nullptr;
}

std::string spell(const Cell &cell) {
  auto one = [](const Action &a) {
    return std::to_string(a.stage) + spelling(a.type) + (hasMicroBatch(a.type) ? std::to_string(a.microBatch) : "");
  };
  if (cell.actions.size() == 1)
    return one(cell.actions[0]);
  return "(" + one(cell.actions[0]) + ";" + one(cell.actions[1]) + ")" + std::string(kOverlap);
}

std::string writeActionTable(const std::vector<std::vector<Cell>> &rows) {
  std::string out;
  for (const std::vector<Cell> &row : rows) {
    for (size_t i = 0; i < row.size(); ++i)
      out += (i ? "," : "") + spell(row[i]);
    out += "\n";
  }
  return out;
}

} // namespace schedc::interop
