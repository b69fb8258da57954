// Search implementation: one queue in step-bound order, workers taking from it under one
// mutex (a check takes milliseconds; taking takes nanoseconds).
#include "plan/Search.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

namespace schedc::plan {

namespace {

// Whether `a` ranks before `b`: faster, then fewer bytes, then earlier enumerated.
bool ranksBefore(const Checked &a, const Checked &b, size_t aIndex, size_t bIndex) {
  if (a.outcome.seconds != b.outcome.seconds)
    return a.outcome.seconds < b.outcome.seconds;
  if (a.outcome.peakBytes != b.outcome.peakBytes)
    return a.outcome.peakBytes < b.outcome.peakBytes;
  return aIndex < bIndex;
}

} // namespace

SearchResult search(std::vector<Candidate> candidates, const SearchOptions &options, const CheckFn &check,
                    const ProgressFn &progress) {
  auto started = std::chrono::steady_clock::now();
  SearchResult result;
  result.counts.enumerated = candidates.size();
  // Enumeration order kept as the last tie-break: each candidate's index in `order`.
  std::vector<size_t> queue;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (i == 0 || candidates[i].bytesBound < result.leastBytes.bytesBound)
      result.leastBytes = candidates[i];
    if (!options.exhaustive && candidates[i].bytesBound > options.usableBytes)
      ++result.counts.overMemory;
    else
      queue.push_back(i);
  }
  std::stable_sort(queue.begin(), queue.end(),
                   [&](size_t a, size_t b) { return candidates[a].secondsBound < candidates[b].secondsBound; });

  std::mutex mutex;
  size_t next = 0;
  std::multiset<double> best; // the K fastest ranked steps
  std::vector<std::pair<size_t, Checked>> checked;
  auto threshold = [&] {
    return best.size() < options.top ? std::numeric_limits<double>::infinity() : *std::prev(best.end());
  };
  auto work = [&] {
    for (;;) {
      size_t index;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (next >= queue.size())
          return;
        index = queue[next];
        if (!options.exhaustive && candidates[index].secondsBound > threshold()) {
          result.counts.slower += queue.size() - next; // every one after it is bounded higher still
          next = queue.size();
          return;
        }
        ++next;
      }
      Checked c{candidates[index], check(candidates[index])};
      std::lock_guard<std::mutex> lock(mutex);
      ++result.counts.checked;
      const Outcome &o = c.outcome;
      if (o.verdict == sim::Verdict::Correct) {
        if (o.seconds < c.candidate.secondsBound * (1 - 1e-9) || o.peakBytes < c.candidate.bytesBound * (1 - 1e-9))
          ++result.counts.boundViolations;
        if (!o.fits)
          ++result.counts.overCapacity;
      } else {
        ++result.counts.notCorrect;
        if (o.verdict == sim::Verdict::Stopped && result.counts.stopped++ == 0)
          result.stoppedProblem = o.problem;
      }
      if (c.ranked()) {
        best.insert(o.seconds);
        if (best.size() > options.top)
          best.erase(std::prev(best.end()));
      }
      checked.emplace_back(index, std::move(c));
      if (progress)
        progress(result.counts.checked, queue.size() - next, best.empty() ? 0 : *best.begin());
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < std::max(1u, options.threads); ++t)
    workers.emplace_back(work);
  work();
  for (std::thread &t : workers)
    t.join();

  std::sort(checked.begin(), checked.end(), [](const auto &a, const auto &b) {
    if (a.second.ranked() != b.second.ranked())
      return a.second.ranked();
    return ranksBefore(a.second, b.second, a.first, b.first);
  });
  for (auto &[index, c] : checked)
    (c.ranked() ? result.ranked : result.unranked).push_back(std::move(c));
  result.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

} // namespace schedc::plan
