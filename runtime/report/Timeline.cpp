// Timeline implementation: layout in one pass over the events, SVG written as text.
#include "report/Timeline.h"

#include "report/TextOut.h"
#include "report/Trace.h"

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

// One timeline picture: its layout (rows of ranks, a lane per stream where the cost model has
// streams), what it draws (the cost model's times and memory, or a real run's measured ones)
// and the parts it is drawn in, top to bottom.
class SvgTimeline {
public:
  SvgTimeline(TextOut &s, const World &world, const Report &report, const MeasuredRun *measured)
      : s_(s), world_(world), report_(report), measured_(measured), cost_(*world.options().costModel),
        ranks_(world.model().ranks), rowH_(std::clamp(std::floor(1400.0 / static_cast<double>(ranks_)), 4.0, 44.0)),
        boxH_(std::max(2.0, std::floor(rowH_ * 0.5))), memH_(std::max(1.0, rowH_ - boxH_ - 3)),
        plotBottom_(kTop + rowH_ * static_cast<double>(ranks_)), height_(plotBottom_ + 86),
        // A model in seconds draws the bytes it predicts, not the puzzle's units.
        inBytes_(!measured && cost_.inSeconds()), peakTime_(report.maxMemoryTime.asDouble()),
        peakRank_(report.maxMemoryRank), present_(kEventKinds) {
    scan();
  }

  void draw(const SourceManager &sources, const std::string &schedule) {
    s_ += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width()) + "\" height=\"" + num(height_) +
          "\" viewBox=\"0 0 " + num(width()) + " " + num(height_) + "\" font-family=\"sans-serif\">\n";
    s_ += "<rect x=\"0\" y=\"0\" width=\"" + num(width()) + "\" height=\"" + num(height_) + "\" fill=\"white\"/>\n";
    caption(schedule);
    rankLabels();
    std::vector<std::vector<const char *>> names = eventNames(world_);
    for (int64_t r = 0; r < ranks_; ++r)
      rank(r, names[r], sources);
    peak();
    timeAxis();
    legend();
    s_ += "</svg>\n";
  }

private:
  static constexpr double kLeft = 64, kTop = 46, kPlotWidth = 1100;
  // Where stream `stream`'s lane starts in a row, and its height: a cost model with streams
  // (the hardware model) draws each in a lane of the rank's row, compute (11/20 of the box,
  // room for micro-batch numbers), collectives, point-to-point and transfers (3/20 each)
  // from the top.
  static constexpr double kComputeLane = 0.55, kOtherLane = (1 - kComputeLane) / (cost::kStreams - 1);
  double laneTop(size_t stream) const {
    return cost_.oneStream() ? 0
           : stream == 0     ? 0
                             : boxH_ * (kComputeLane + kOtherLane * static_cast<double>(stream - 1));
  }
  double laneHeight(size_t stream) const {
    return cost_.oneStream() ? boxH_ : boxH_ * (stream == 0 ? kComputeLane : kOtherLane);
  }
  // The right margin: room for the lanes' names where there are streams.
  double width() const { return kLeft + kPlotWidth + (cost_.oneStream() && !inBytes_ ? 20 : 64); }

  // Times and memory: the cost model's, or what a real run measured.
  double startOf(int64_t r, size_t i) const {
    return measured_ ? (*measured_)[r][i].start : world_.events(r)[i].start.asDouble();
  }
  double lengthOf(int64_t r, size_t i) const {
    return measured_ ? (*measured_)[r][i].length : world_.events(r)[i].length.asDouble();
  }
  double memoryOf(int64_t r, size_t i) const {
    if (measured_)
      return static_cast<double>((*measured_)[r][i].memory);
    return inBytes_ ? world_.events(r)[i].bytes : world_.events(r)[i].memory.asDouble();
  }
  double x(double t) const { return kLeft + t / span_ * kPlotWidth; }

  // The span, the largest memory (and, measured or in bytes, where it is) and the kinds of
  // event the run has.
  void scan() {
    for (int64_t r = 0; r < ranks_; ++r)
      for (size_t i = 0; i < world_.events(r).size(); ++i) {
        present_[static_cast<size_t>(world_.events(r)[i].kind)] = true;
        span_ = std::max(span_, startOf(r, i) + lengthOf(r, i));
        if (memoryOf(r, i) > maxMemory_) {
          maxMemory_ = memoryOf(r, i);
          if (measured_ || inBytes_) {
            peakRank_ = r;
            peakTime_ = startOf(r, i);
          }
        }
      }
  }

  void caption(const std::string &schedule) {
    char figures[200];
    if (measured_)
      std::snprintf(figures, sizeof figures, " — measured: step %.4f s, largest memory %s on GPU %lld", span_,
                    bytesText(maxMemory_).c_str(), static_cast<long long>(peakRank_));
    else if (inBytes_)
      std::snprintf(figures, sizeof figures, " — Step: %.4g s   Peak memory: %s on GPU %lld at %.4g s",
                    report_.makespan.asDouble(), gibibytes(maxMemory_).c_str(), static_cast<long long>(peakRank_),
                    peakTime_);
    std::string caption =
        measured_ || inBytes_
            ? schedule + figures
            : schedule + " — Timesteps: " + report_.timesteps.str() + "   Maximum Memory: " + report_.maxMemory.str() +
                  " at GPU: " + std::to_string(report_.maxMemoryRank) + " time: " + report_.maxMemoryTime.str();
    s_ += "<text class=\"caption\" x=\"" + num(kLeft) + "\" y=\"24\" font-size=\"15\">" + escape(caption) + "</text>\n";
  }

  // As many as fit (at least 10 px apart); with streams, the lanes named on the right of the
  // first rank's row.
  void rankLabels() {
    int64_t labelEvery = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(10.0 / rowH_)));
    for (int64_t r = 0; r < ranks_; r += labelEvery)
      s_ += "<text x=\"" + num(kLeft - 6) + "\" y=\"" + num(kTop + rowH_ * r + boxH_ * 0.8) + "\" font-size=\"" +
            num(std::min(11.0, std::max(7.0, rowH_ * 0.6))) + "\" text-anchor=\"end\">GPU " + std::to_string(r) +
            "</text>\n";
    if (cost_.oneStream() || laneHeight(1) < 3)
      return;
    for (size_t l = 0; l < cost::kStreams; ++l)
      s_ += "<text x=\"" + num(kLeft + kPlotWidth + 2) + "\" y=\"" + num(kTop + laneTop(l) + laneHeight(l) * 0.8) +
            "\" font-size=\"" + num(std::min(9.0, laneHeight(l) + 2)) + "\" fill=\"#555\">" +
            cost::streamName(static_cast<cost::Stream>(l)) + "</text>\n";
  }

  // Where events i .. last of rank r are one box: a model in seconds (the hardware model)
  // draws a stage's run of layers for one micro-batch and phase as one box — the same kind
  // on the same stream for the same micro-batches, each starting as the one before ends —
  // instead of a barcode of a box a layer; the puzzle's timelines keep a box an event.
  size_t lastOfBox(int64_t r, size_t i) const {
    const EventLog &events = world_.events(r);
    size_t last = i;
    if (!inBytes_)
      return last;
    while (last + 1 < events.size()) {
      const Event &a = events[last], &b = events[last + 1];
      bool same = b.kind == a.kind && b.stream == a.stream && a.batches && b.batches && *a.batches == *b.batches &&
                  std::abs(startOf(r, last + 1) - (startOf(r, last) + lengthOf(r, last))) <= 1e-9 * span_;
      if (!same)
        break;
      ++last;
    }
    return last;
  }

  // "1.234 s" (4 significant digits) for a model in seconds; the puzzle's exact steps.
  std::string timeText(double seconds, const Number &steps) const {
    if (!cost_.inSeconds())
      return steps.str();
    char text[32];
    std::snprintf(text, sizeof text, "%.4g s", seconds);
    return text;
  }

  // A rank's events (each box with its details on hover and its micro-batches where they
  // fit) and its memory bars.
  void rank(int64_t r, const std::vector<const char *> &names, const SourceManager &sources) {
    const EventLog &events = world_.events(r);
    double y = kTop + rowH_ * static_cast<double>(r);
    double rowPeak = 0;
    for (size_t i = 0, last = 0; i < events.size(); i = last + 1) {
      last = lastOfBox(r, i);
      const Event &e = events[i];
      const SourceRange &at = world_.site(e.site);
      double end = startOf(r, last) + lengthOf(r, last);
      double x0 = x(startOf(r, i)), w = std::max(1.0, x(end) - x0);
      // Memory from each event to the next (or to the end of the last), drawn after the box;
      // the box's most.
      double boxPeak = 0;
      std::string bars;
      for (size_t k = i; k <= last; ++k) {
        boxPeak = std::max(boxPeak, memoryOf(r, k));
        double from = x(startOf(r, k));
        double next = k + 1 < events.size() ? startOf(r, k + 1) : startOf(r, k) + lengthOf(r, k);
        double barW = std::max(0.5, x(next) - from), barH = memH_ * memoryOf(r, k) / maxMemory_;
        bars += "<rect class=\"mem\" x=\"" + num(from) + "\" y=\"" + num(y + boxH_ + 1 + memH_ - barH) + "\" width=\"" +
                num(barW) + "\" height=\"" + num(barH) + "\" fill=\"#b8c4d0\"/>\n";
      }
      rowPeak = std::max(rowPeak, boxPeak);
      std::string layers = e.layer < 0 ? ""
                           : last == i
                               ? " layer " + std::to_string(e.layer)
                               : " layers " + std::to_string(e.layer) + "-" + std::to_string(events[last].layer);
      std::string action = pytorchAction(at, sources);
      std::string details =
          (action.empty() ? "" : "PyTorch " + action + ": ") + std::string(names[i]) + layers +
          (e.batches ? ", micro-batches " + e.batches->str() : "") + ", start " +
          (measured_ ? num(startOf(r, i) * 1e3) + " ms" : timeText(startOf(r, i), e.start)) + ", length " +
          (measured_ ? num((end - startOf(r, i)) * 1e3) + " ms" : timeText(end - startOf(r, i), e.length)) +
          ", memory " +
          (measured_  ? std::to_string((*measured_)[r][i].memory)
           : inBytes_ ? gibibytes(boxPeak)
                      : e.memory.str()) +
          (at.valid() ? ", " + sources.where(at) : "");
      size_t stream = static_cast<size_t>(e.stream);
      double lane = y + laneTop(stream), laneH = laneHeight(stream);
      s_ += "<rect class=\"event\" x=\"" + num(x0) + "\" y=\"" + num(lane) + "\" width=\"" + num(w) + "\" height=\"" +
            num(laneH) + "\" fill=\"" + colourOf(e.kind, e.layer) + "\" stroke=\"white\" stroke-width=\"0.5\"><title>" +
            escape(details) + "</title></rect>\n";
      std::string label = batchesText(e);
      double fontSize = std::min(11.0, laneH - 3);
      if (!label.empty() && fontSize >= 7 && w >= static_cast<double>(label.size()) * fontSize * 0.62 + 4)
        s_ += "<text x=\"" + num(x0 + w / 2) + "\" y=\"" + num(lane + laneH / 2 + fontSize * 0.35) + "\" font-size=\"" +
              num(fontSize) + "\" text-anchor=\"middle\" fill=\"" + (lightBox(e.kind) ? "#222" : "white") +
              "\" pointer-events=\"none\">" + label + "</text>\n";
      s_ += bars;
    }
    if (inBytes_) // the row's peak, on the right of its memory bars (they share one scale)
      s_ += "<text class=\"mem-peak\" x=\"" + num(kLeft + kPlotWidth + 2) + "\" y=\"" + num(y + boxH_ + 1 + memH_) +
            "\" font-size=\"9\" fill=\"#556\">" + gibibytes(rowPeak) + "</text>\n";
  }

  // The largest memory sample.
  void peak() {
    double px = x(peakTime_), py = kTop + rowH_ * static_cast<double>(peakRank_) + boxH_ + 1;
    s_ += "<path class=\"peak\" d=\"M" + num(px) + " " + num(py) +
          " l-5 -7 l10 0 z\" fill=\"#e03131\"><title>peak memory " +
          (measured_  ? num(maxMemory_)
           : inBytes_ ? gibibytes(maxMemory_)
                      : report_.maxMemory.str()) +
          " on GPU " + std::to_string(peakRank_) + "</title></path>\n";
  }

  void timeAxis() {
    double step = tickStep(span_);
    s_ += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(plotBottom_ + 4) + "\" x2=\"" + num(kLeft + kPlotWidth) +
          "\" y2=\"" + num(plotBottom_ + 4) + "\" stroke=\"#444\"/>\n";
    for (double t = 0; t <= span_ + 1e-9; t += step) {
      s_ += "<line x1=\"" + num(x(t)) + "\" y1=\"" + num(plotBottom_ + 4) + "\" x2=\"" + num(x(t)) + "\" y2=\"" +
            num(plotBottom_ + 9) + "\" stroke=\"#444\"/>\n";
      char label[32];
      std::snprintf(label, sizeof label, "%g", t);
      s_ += "<text x=\"" + num(x(t)) + "\" y=\"" + num(plotBottom_ + 21) +
            "\" font-size=\"10\" text-anchor=\"middle\">" + label + "</text>\n";
    }
    s_ += "<text x=\"" + num(kLeft + kPlotWidth) + "\" y=\"" + num(plotBottom_ + 34) +
          "\" font-size=\"10\" text-anchor=\"end\">" +
          (measured_ || cost_.inSeconds() ? "time (seconds)" : "time (puzzle steps)") + "</text>\n";
  }

  void legend() {
    std::vector<LegendItem> legend = eventLegend(present_);
    legend.push_back(
        {"#b8c4d0", inBytes_ ? "memory (GiB: each row's bars to the largest, its peak at the right)" : "memory"});
    legend.push_back({"#e03131", "peak memory"});
    double lx = kLeft, ly = plotBottom_ + 50;
    for (const LegendItem &item : legend) {
      s_ += "<rect x=\"" + num(lx) + "\" y=\"" + num(ly) + "\" width=\"12\" height=\"12\" fill=\"" + item.colour +
            "\"/><text x=\"" + num(lx + 16) + "\" y=\"" + num(ly + 10) + "\" font-size=\"11\">" + escape(item.label) +
            "</text>\n";
      lx += 34 + static_cast<double>(item.label.size()) * 6.4;
      if (lx > kLeft + kPlotWidth - 150) {
        lx = kLeft;
        ly += 16;
      }
    }
  }

  TextOut &s_;
  const World &world_;
  const Report &report_;
  const MeasuredRun *measured_;
  const cost::CostModel &cost_;
  const int64_t ranks_;
  const double rowH_, boxH_, memH_, plotBottom_, height_;
  const bool inBytes_;
  double span_ = 1e-9, maxMemory_ = 1e-9, peakTime_;
  int64_t peakRank_;
  std::vector<bool> present_; // the kinds of event the run has
};

void writeTimelineSvg(std::ostream &out, const World &world, const Report &report, const SourceManager &sources,
                      const std::string &schedule, const MeasuredRun *measured) {
  TextOut s(out);
  SvgTimeline(s, world, report, measured).draw(sources, schedule);
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
