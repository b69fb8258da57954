// Trace implementation.
#include "report/Trace.h"

#include "files/ScheduleFiles.h"
#include "report/ReportFormat.h"
#include "report/TextOut.h"

#include <cstring>
#include <map>

namespace schedc::sim {

// The text an event's site covers, where it is a PyTorch schedule's action (a CSV file's
// cell, such as `7F4`: the importer places each event at its action), else "".
std::string pytorchAction(const SourceRange &at, const SourceManager &sources) {
  if (!at.valid() || at.begin.line != at.end.line || at.end.col < at.begin.col)
    return "";
  if (!isPytorchSchedule(sources.name(at.begin.file)))
    return "";
  std::string_view line = sources.lineText(at.begin.file, at.begin.line);
  size_t from = at.begin.col - 1, length = at.end.col - at.begin.col + 1;
  return from < line.size() ? std::string(line.substr(from, length)) : "";
}

namespace {

// Microseconds: one puzzle time unit is a millisecond.
std::string micros(const Number &t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", t.asDouble() * 1000.0);
  return buf;
}

} // namespace

std::vector<std::vector<const char *>> eventNames(const World &world) {
  std::vector<std::vector<const char *>> names(static_cast<size_t>(world.model().ranks));
  std::map<int64_t, std::pair<int64_t, size_t>> firstSeen; // flow -> (rank, index) of one end
  for (int64_t r = 0; r < world.model().ranks; ++r) {
    const EventLog &events = world.events(r);
    for (size_t i = 0; i < events.size(); ++i) {
      const Event &e = events[i];
      names[r].push_back(eventName(e.kind));
      if (e.kind != EventKind::Pass || e.flow < 0)
        continue;
      auto [it, inserted] = firstSeen.emplace(e.flow, std::make_pair(r, i));
      names[r][i] = "send";
      if (!inserted) { // both ends known: the earlier start is the send
        const Event &other = world.events(it->second.first)[it->second.second];
        bool mineFirst = e.start < other.start;
        names[r][i] = mineFirst ? "send" : "recv";
        names[it->second.first][it->second.second] = mineFirst ? "recv" : "send";
      }
    }
  }
  return names;
}

namespace {

// An event's details in the trace: its memory, where in the source, its layer and
// micro-batches, and the bytes of real data held then (`measuredBytes`, -1: not measured).
std::string eventArgs(const Event &e, const std::string &memory, const std::string &where, const std::string &action,
                      int64_t measuredBytes) {
  std::string args = "\"memory\": " + memory + ", \"source\": " + jsonString(where);
  if (!action.empty())
    args += ", \"pytorch_action\": " + jsonString(action);
  if (e.layer >= 0)
    args += ", \"layer\": " + std::to_string(e.layer);
  if (e.batches) {
    args += ", \"batches\": [";
    for (size_t k = 0; k < e.batches->size(); ++k)
      args += (k ? ", " : "") + std::to_string(e.batches->elements()[k]);
    args += "]";
  }
  if (measuredBytes >= 0)
    args += ", \"measured_bytes\": " + std::to_string(measuredBytes);
  return args;
}

} // namespace

void writeChromeTrace(std::ostream &out, const World &world, const SourceManager &sources, const std::string &schedule,
                      const MeasuredRun *measured) {
  auto seconds = [](double t) { // real time, in microseconds
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", t * 1e6);
    return std::string(buf);
  };
  // The hardware cost model's times are seconds, shown as they are; the puzzle's steps as ms.
  bool inSeconds = world.options().costModel->inSeconds();
  bool streams = !world.options().costModel->oneStream();
  auto modelTime = [&](const Number &t) { return inSeconds ? seconds(t.asDouble()) : micros(t); };
  std::string unit = measured    ? "measured real time"
                     : inSeconds ? "seconds (" + std::string(world.options().costModel->name()) + " cost model)"
                                 : "1 puzzle time step = 1 ms";
  TextOut s(out);
  s += "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"schedule\": " + jsonString(schedule) + ", \"time_unit\": \"" +
       unit + "\"},\n\"traceEvents\": [\n";
  bool first = true;
  auto add = [&](const std::string &event) {
    s += first ? "  " : ",\n  ";
    s += event;
    first = false;
  };
  // Which events are sends and receives of the same message (flow id -> sender, receiver).
  std::map<int64_t, std::pair<std::pair<int64_t, size_t>, std::pair<int64_t, size_t>>> flows;
  std::vector<std::vector<const char *>> names = eventNames(world);
  for (int64_t r = 0; r < world.model().ranks; ++r) {
    std::string pid = std::to_string(r);
    add("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " + pid + ", \"args\": {\"name\": \"rank " + pid +
        "\"}}");
    add("{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": " + pid + ", \"args\": {\"sort_index\": " + pid +
        "}}");
    // A track per stream where the cost model has streams; else compute and communication.
    for (size_t t = 0; t < (streams ? cost::kStreams : 2); ++t)
      add("{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " + pid + ", \"tid\": " + std::to_string(t) +
          ", \"args\": {\"name\": \"" +
          (streams ? cost::streamName(static_cast<cost::Stream>(t))
           : t     ? "communication"
                   : "compute") +
          "\"}}");
    const EventLog &events = world.events(r);
    for (size_t i = 0; i < events.size(); ++i) {
      const Event &e = events[i];
      const char *name = names[r][i];
      // Memory in the puzzle's units; under a model in seconds, the bytes it predicts.
      std::string ts = modelTime(e.start), dur = modelTime(e.length),
                  memory = inSeconds ? std::to_string(static_cast<int64_t>(e.bytes)) : e.memory.str();
      if (measured) {
        const Measured &m = (*measured)[r][i];
        ts = seconds(m.start);
        dur = seconds(m.length);
        memory = std::to_string(m.memory);
      }
      const SourceRange &at = world.site(e.site);
      std::string args =
          eventArgs(e, memory, sources.where(at), pytorchAction(at, sources), world.rank(r).measuredAt(i));
      std::string tid = streams ? std::to_string(static_cast<int>(e.stream)) : isCommunicationEvent(e.kind) ? "1" : "0";
      std::string title = e.layer >= 0 ? std::string(name) + " " + std::to_string(e.layer) : name;
      add("{\"name\": " + jsonString(title) + ", \"cat\": \"" + (tid != "0" ? "communication" : "compute") +
          "\", \"ph\": \"X\", \"pid\": " + pid + ", \"tid\": " + tid + ", \"ts\": " + ts + ", \"dur\": " + dur +
          ", \"args\": {" + args + "}}");
      add("{\"name\": \"memory\", \"ph\": \"C\", \"pid\": " + pid + ", \"ts\": " + ts +
          ", \"args\": {\"memory\": " + memory + "}}");
      if (e.flow >= 0) {
        auto &f = flows[e.flow];
        (std::strcmp(name, "send") == 0 ? f.first : f.second) = {r, i};
      }
    }
  }
  for (const auto &[id, ends] : flows) {
    auto start = [&](const std::pair<int64_t, size_t> &at) {
      return measured ? seconds((*measured)[at.first][at.second].start)
                      : modelTime(world.events(at.first)[at.second].start);
    };
    std::string flow = std::to_string(id), tid = streams ? "2" : "1"; // the point-to-point track
    add("{\"name\": \"message\", \"cat\": \"p2p\", \"ph\": \"s\", \"id\": " + flow + ", \"pid\": " +
        std::to_string(ends.first.first) + ", \"tid\": " + tid + ", \"ts\": " + start(ends.first) + "}");
    add("{\"name\": \"message\", \"cat\": \"p2p\", \"ph\": \"f\", \"bp\": \"e\", \"id\": " + flow + ", \"pid\": " +
        std::to_string(ends.second.first) + ", \"tid\": " + tid + ", \"ts\": " + start(ends.second) + "}");
  }
  s += "\n]}\n";
}

} // namespace schedc::sim
