// Timeline implementation: layout in one pass over the events, SVG written as text.
#include "sim/Timeline.h"

#include "sim/TextOut.h"
#include "sim/Trace.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

namespace schedc::sim {

namespace {

std::string escape(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// Colours from the event table: a fixed colour, or a hue per layer (golden-angle hues) at
// the event's lightness (forward boxes; backward the same, lighter; the deferred half of a
// split backward lighter still).
std::string colourOf(EventKind kind, int64_t layer) {
  const EventInfo &e = eventInfo(kind);
  if (!e.shade)
    return e.colour;
  double hue = std::fmod(static_cast<double>(layer) * 137.508, 360.0);
  return "hsl(" + num(hue) + ",65%," + std::to_string(e.shade) + "%)";
}

// Micro-batch labels are dark on light boxes.
bool lightBox(EventKind kind) {
  return eventInfo(kind).shade > 60;
}

// The legend, from the event table in its order: each event's label is an entry of its
// own, or ("/label") joins the entry of an earlier event with its colour; one marked "?" is
// listed only when the run has such events.
struct LegendItem {
  std::string colour, label;
};
std::vector<LegendItem> eventLegend(const std::vector<bool> &present) {
  std::vector<LegendItem> items;
  for (int k = 0; k < kEventKinds; ++k) {
    auto kind = static_cast<EventKind>(k);
    std::string_view label = eventInfo(kind).legend;
    if (label.starts_with('?')) {
      if (!present[static_cast<size_t>(k)])
        continue;
      label.remove_prefix(1);
    }
    std::string colour = colourOf(kind, 0);
    if (!label.starts_with('/')) {
      items.push_back({colour, std::string(label)});
      continue;
    }
    auto joined = std::find_if(items.begin(), items.end(), [&](const LegendItem &i) { return i.colour == colour; });
    SCHEDC_ASSERT(joined != items.end(), "a legend label joins no earlier entry of its colour");
    joined->label += " / " + std::string(label.substr(1));
  }
  return items;
}

// Ticks at 1, 2 or 5 times a power of ten, about ten of them.
double tickStep(double span) {
  double raw = span / 10, power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * power)
      return m * power;
  return 10 * power;
}

std::string batchesText(const Event &e) {
  if (!e.batches)
    return "";
  const auto &b = e.batches->elements();
  if (b.size() > 3)
    return std::to_string(b.front()) + "-" + std::to_string(b.back());
  std::string s;
  for (size_t i = 0; i < b.size(); ++i)
    s += (i ? "," : "") + std::to_string(b[i]);
  return s;
}

void writeTimelineSvg(std::ostream &out, const World &world, const Report &report, const SourceManager &sources,
                      const std::string &schedule, const MeasuredRun *measured) {
  const int64_t ranks = world.model().ranks;
  const double left = 64, right = 20, top = 46, plotWidth = 1100;
  const double rowH = std::clamp(std::floor(1400.0 / static_cast<double>(ranks)), 4.0, 44.0);
  const double boxH = std::max(2.0, std::floor(rowH * 0.5)), memH = std::max(1.0, rowH - boxH - 3);
  // A cost model with streams (the hardware model) draws each in a lane of the rank's row:
  // compute, collectives, point-to-point from the top.
  const cost::CostModel &cost = *world.options().costModel;
  const double laneH = cost.oneStream() ? boxH : boxH / static_cast<double>(cost::kStreams);
  const double plotBottom = top + rowH * static_cast<double>(ranks);
  const double height = plotBottom + 86, width = left + plotWidth + right;
  // Times and memory: the cost model's, or what a real run measured. A model in seconds
  // draws the bytes it predicts, not the puzzle's units.
  const bool inBytes = !measured && cost.inSeconds();
  auto startOf = [&](int64_t r, size_t i) {
    return measured ? (*measured)[r][i].start : world.events(r)[i].start.asDouble();
  };
  auto lengthOf = [&](int64_t r, size_t i) {
    return measured ? (*measured)[r][i].length : world.events(r)[i].length.asDouble();
  };
  auto memoryOf = [&](int64_t r, size_t i) {
    if (measured)
      return static_cast<double>((*measured)[r][i].memory);
    return inBytes ? world.events(r)[i].bytes : world.events(r)[i].memory.asDouble();
  };
  double span = 1e-9, maxMemory = 1e-9, peakTime = report.maxMemoryTime.asDouble();
  int64_t peakRank = report.maxMemoryRank;
  std::vector<bool> present(kEventKinds); // the kinds of event the run has
  for (int64_t r = 0; r < ranks; ++r)
    for (size_t i = 0; i < world.events(r).size(); ++i) {
      present[static_cast<size_t>(world.events(r)[i].kind)] = true;
      span = std::max(span, startOf(r, i) + lengthOf(r, i));
      if (memoryOf(r, i) > maxMemory) {
        maxMemory = memoryOf(r, i);
        if (measured || inBytes) {
          peakRank = r;
          peakTime = startOf(r, i);
        }
      }
    }
  auto x = [&](double t) { return left + t / span * plotWidth; };
  std::vector<std::vector<const char *>> names = eventNames(world);

  TextOut s(out);
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(height) +
       "\" viewBox=\"0 0 " + num(width) + " " + num(height) + "\" font-family=\"sans-serif\">\n";
  s += "<rect x=\"0\" y=\"0\" width=\"" + num(width) + "\" height=\"" + num(height) + "\" fill=\"white\"/>\n";
  char figures[200];
  if (measured)
    std::snprintf(figures, sizeof figures, " — measured: step %.4f s, largest memory %s on GPU %lld", span,
                  bytesText(maxMemory).c_str(), static_cast<long long>(peakRank));
  else if (inBytes)
    std::snprintf(figures, sizeof figures, " — Step: %.4g s   Maximum Bytes: %s at GPU: %lld time: %.4g s",
                  report.makespan.asDouble(), gigabytes(maxMemory).c_str(), static_cast<long long>(peakRank), peakTime);
  std::string caption =
      measured || inBytes
          ? schedule + figures
          : schedule + " — Timesteps: " + report.timesteps.str() + "   Maximum Memory: " + report.maxMemory.str() +
                " at GPU: " + std::to_string(report.maxMemoryRank) + " time: " + report.maxMemoryTime.str();
  s += "<text class=\"caption\" x=\"" + num(left) + "\" y=\"24\" font-size=\"15\">" + escape(caption) + "</text>\n";

  // Rank labels: as many as fit (at least 10 px apart).
  int64_t labelEvery = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(10.0 / rowH)));
  for (int64_t r = 0; r < ranks; r += labelEvery)
    s += "<text x=\"" + num(left - 6) + "\" y=\"" + num(top + rowH * r + boxH * 0.8) + "\" font-size=\"" +
         num(std::min(11.0, std::max(7.0, rowH * 0.6))) + "\" text-anchor=\"end\">GPU " + std::to_string(r) +
         "</text>\n";

  // Events and memory bars.
  for (int64_t r = 0; r < ranks; ++r) {
    const EventLog &events = world.events(r);
    double y = top + rowH * static_cast<double>(r);
    for (size_t i = 0; i < events.size(); ++i) {
      const Event &e = events[i];
      const char *name = names[r][i];
      const SourceRange &at = world.site(e.site);
      double x0 = x(startOf(r, i)), w = std::max(1.0, x(startOf(r, i) + lengthOf(r, i)) - x0);
      std::string details = std::string(name) + (e.layer >= 0 ? " layer " + std::to_string(e.layer) : "") +
                            (e.batches ? ", micro-batches " + e.batches->str() : "") + ", start " +
                            (measured ? num(startOf(r, i) * 1e3) + " ms" : e.start.str()) + ", length " +
                            (measured ? num(lengthOf(r, i) * 1e3) + " ms" : e.length.str()) + ", memory " +
                            (measured  ? std::to_string((*measured)[r][i].memory)
                             : inBytes ? gigabytes(e.bytes)
                                       : e.memory.str()) +
                            (at.valid() ? ", " + sources.where(at) : "");
      double lane = y + (cost.oneStream() ? 0 : laneH * static_cast<double>(e.stream));
      s += "<rect class=\"event\" x=\"" + num(x0) + "\" y=\"" + num(lane) + "\" width=\"" + num(w) + "\" height=\"" +
           num(laneH) + "\" fill=\"" + colourOf(e.kind, e.layer) + "\" stroke=\"white\" stroke-width=\"0.5\"><title>" +
           escape(details) + "</title></rect>\n";
      // The micro-batches, written only where they fit.
      std::string label = batchesText(e);
      double fontSize = std::min(11.0, laneH - 3);
      if (!label.empty() && fontSize >= 7 && w >= static_cast<double>(label.size()) * fontSize * 0.62 + 4)
        s += "<text x=\"" + num(x0 + w / 2) + "\" y=\"" + num(lane + laneH / 2 + fontSize * 0.35) + "\" font-size=\"" +
             num(fontSize) + "\" text-anchor=\"middle\" fill=\"" + (lightBox(e.kind) ? "#222" : "white") +
             "\" pointer-events=\"none\">" + label + "</text>\n";
      // Memory from this event to the next (or to the end of the last).
      double next = i + 1 < events.size() ? startOf(r, i + 1) : startOf(r, i) + lengthOf(r, i);
      double barW = std::max(0.5, x(next) - x0), barH = memH * memoryOf(r, i) / maxMemory;
      s += "<rect class=\"mem\" x=\"" + num(x0) + "\" y=\"" + num(y + boxH + 1 + memH - barH) + "\" width=\"" +
           num(barW) + "\" height=\"" + num(barH) + "\" fill=\"#b8c4d0\"/>\n";
    }
  }
  // The largest memory sample.
  double px = x(peakTime), py = top + rowH * static_cast<double>(peakRank) + boxH + 1;
  s += "<path class=\"peak\" d=\"M" + num(px) + " " + num(py) +
       " l-5 -7 l10 0 z\" fill=\"#e03131\"><title>peak memory " +
       (measured  ? num(maxMemory)
        : inBytes ? gigabytes(maxMemory)
                  : report.maxMemory.str()) +
       " on GPU " + std::to_string(peakRank) + "</title></path>\n";

  // Time axis.
  double step = tickStep(span);
  s += "<line x1=\"" + num(left) + "\" y1=\"" + num(plotBottom + 4) + "\" x2=\"" + num(left + plotWidth) + "\" y2=\"" +
       num(plotBottom + 4) + "\" stroke=\"#444\"/>\n";
  for (double t = 0; t <= span + 1e-9; t += step) {
    s += "<line x1=\"" + num(x(t)) + "\" y1=\"" + num(plotBottom + 4) + "\" x2=\"" + num(x(t)) + "\" y2=\"" +
         num(plotBottom + 9) + "\" stroke=\"#444\"/>\n";
    char label[32];
    std::snprintf(label, sizeof label, "%g", t);
    s += "<text x=\"" + num(x(t)) + "\" y=\"" + num(plotBottom + 21) + "\" font-size=\"10\" text-anchor=\"middle\">" +
         label + "</text>\n";
  }
  s += "<text x=\"" + num(left + plotWidth) + "\" y=\"" + num(plotBottom + 34) +
       "\" font-size=\"10\" text-anchor=\"end\">" +
       (measured || cost.inSeconds() ? "time (seconds)" : "time (puzzle steps)") + "</text>\n";

  // Legend.
  std::vector<LegendItem> legend = eventLegend(present);
  legend.push_back({"#b8c4d0", inBytes ? "memory (bytes)" : "memory"});
  legend.push_back({"#e03131", "peak memory"});
  double lx = left, ly = plotBottom + 50;
  for (const LegendItem &item : legend) {
    s += "<rect x=\"" + num(lx) + "\" y=\"" + num(ly) + "\" width=\"12\" height=\"12\" fill=\"" + item.colour +
         "\"/><text x=\"" + num(lx + 16) + "\" y=\"" + num(ly + 10) + "\" font-size=\"11\">" + escape(item.label) +
         "</text>\n";
    lx += 34 + static_cast<double>(item.label.size()) * 6.4;
    if (lx > left + plotWidth - 150) {
      lx = left;
      ly += 16;
    }
  }
  s += "</svg>\n";
}

void writeTimelineHtml(std::ostream &out, const World &world, const Report &report, const SourceManager &sources,
                       const std::string &schedule, const MeasuredRun *measured) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + escape(schedule) +
             " timeline</title>\n<style>\nbody { font-family: sans-serif; margin: 16px; }\n"
             "#details { position: sticky; top: 0; background: #f6f8fa; border: 1px solid #d0d7de; padding: 6px 10px; "
             "min-height: 1.4em; font-size: 14px; }\nrect.event:hover { stroke: black; stroke-width: 1.5; }\n</style>\n"
             "</head>\n<body>\n<div id=\"details\">Hover over an event to see its details.</div>\n";
  writeTimelineSvg(out, world, report, sources, schedule, measured);
  out << "<script>\nfor (const box of document.querySelectorAll('rect.event')) {\n"
         "  box.addEventListener('mouseover', () => {\n"
         "    document.getElementById('details').textContent = box.querySelector('title').textContent;\n"
         "  });\n}\n</script>\n</body>\n</html>\n";
}

} // namespace

void writeTimeline(std::ostream &out, bool html, const World &world, const Report &report, const SourceManager &sources,
                   const std::string &schedule, const MeasuredRun *measured) {
  if (html)
    writeTimelineHtml(out, world, report, sources, schedule, measured);
  else
    writeTimelineSvg(out, world, report, sources, schedule, measured);
}

} // namespace schedc::sim
