// A run's ranks on several threads (Options::threads). Each thread runs one lane — a block of
// consecutive ranks — as the one-thread run does all of them (World::runOnOneThread): each
// rank on its fiber until it waits or ends, a woken rank first. What ranks share is theirs
// under a lock: a collective's group (arrive, complete, take the result), a rank's inbox,
// the map of groups. A rank woken by a rank of another lane is handed to that lane's thread.
//
// The figures do not depend on which thread runs what, or when: a rank's events and their
// times follow from its program, its collectives (matched by call count, folded in group
// order) and its messages (first in, first out per pair of ranks). What does depend on it is
// the order of a run's diagnostics and which rank a limit stops: so the first thing that
// would be recorded — an error, a warning that is not silenced, a limit, a deadlock — makes
// the run diverge (World::diverge): every rank unwinds, and the caller runs the schedule
// again on one thread, which reports it as it always has. A run that diverges costs its
// time up to that point, at most the clean run's.
//
// Values stay with the thread of their rank: a message to another lane carries a copy
// (Rank::detached), a completed collective drops its members' inputs before it wakes them,
// and the sets several threads hold are counted atomically (IntSet::Counting).
#include "engine/World.h"

#include <algorithm>
#include <chrono>
#include <latch>
#include <pthread.h>
#include <sched.h>
#include <span>
#include <sys/resource.h>
#include <thread>

namespace schedc::sim {

namespace {

thread_local Lane *currentLane = nullptr; // the lane this thread runs

// Where a lane's new thread starts. The kernel may put a new thread on its maker's
// processor, where it waits for the maker's time slice while another processor idles and
// the maker's lane runs ahead (docs/performance.md, "Figures behind design choices in the code"). So a
// lane's thread is made bound to the processors the process may use less its maker's, and
// takes back all of them as soon as it runs (the kernel may move it as ever from then on).
struct Placement {
  cpu_set_t allowed;   // the process's processors
  cpu_set_t elsewhere; // those less the maker's
  bool away = false;   // whether there is an elsewhere (two processors or more, the maker's known)
};

Placement awayFromCaller() {
  Placement place;
  CPU_ZERO(&place.allowed);
  if (sched_getaffinity(0, sizeof place.allowed, &place.allowed) != 0)
    return place;
  int here = sched_getcpu();
  if (here < 0 || here >= CPU_SETSIZE || !CPU_ISSET(here, &place.allowed) || CPU_COUNT(&place.allowed) < 2)
    return place;
  place.elsewhere = place.allowed;
  CPU_CLR(here, &place.elsewhere);
  place.away = true;
  return place;
}

// A placement, nothing more: where the system refuses it, the thread starts where it would
// have.
void startElsewhere(std::thread &thread, const Placement &place) {
  if (place.away)
    pthread_setaffinity_np(thread.native_handle(), sizeof place.elsewhere, &place.elsewhere);
}

void takeEveryProcessor(const Placement &place) {
  if (place.away)
    sched_setaffinity(0, sizeof place.allowed, &place.allowed);
}

// A lane with nothing to run watches for ranks handed to it this long before it sleeps: a
// sleeping lane costs the lane that wakes it a system call (futex) and itself the time the
// system takes to run it again, and lanes mostly wait briefly for another lane to complete
// a collective (the choice of 200 us is measured in docs/performance.md, "Figures behind
// design choices"). With more lanes than processors a watching lane would keep a working
// one off its processor: they sleep at once.
constexpr std::chrono::microseconds kWatchBeforeSleeping{200};

// Until something is handed to `lane` or the run is over, at most kWatchBeforeSleeping.
void watch(const Lane &lane, const std::atomic<bool> &quiet) {
  auto until = std::chrono::steady_clock::now() + kWatchBeforeSleeping;
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      if (lane.anyWoken.load(std::memory_order_acquire) || quiet.load(std::memory_order_acquire))
        return;
      pauseProcessor();
    }
    if (std::chrono::steady_clock::now() >= until)
      return;
  }
}

} // namespace

unsigned processors() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

int64_t autoThreads(int64_t ranks) {
  // Threads take more address space (their stacks, their allocators' arenas): where it is
  // limited (`ulimit -v`), a run that would meet the limit on several meets it first on one,
  // where it stops cleanly at the rank that cannot start.
  rlimit space{};
  if (getrlimit(RLIMIT_AS, &space) == 0 && space.rlim_cur != RLIM_INFINITY)
    return 1;
  return std::min<int64_t>(processors(), ranks / Options::kRanksPerThread);
}

void World::diverge() {
  diverged_ = true;
  cancelled_ = true;
}

void World::wake(Rank &r) {
  Rank *one = &r;
  wake(std::span<Rank *const>(&one, 1));
}

void World::wake(std::span<Rank *const> ranks) {
  // Those of other lanes are handed over a lane at a time: one lock and one notice each.
  thread_local std::vector<std::vector<Rank *>> others;
  others.resize(lanes_.size());
  bool handOver = false;
  for (Rank *r : ranks) {
    if (r->queued_.exchange(true, std::memory_order_acq_rel))
      continue; // queued already (or running, and queued again)
    if (r->lane_ == currentLane) {
      currentLane->runnable.push_front(r);
    } else {
      others[r->lane_->index].push_back(r);
      handOver = true;
    }
  }
  if (!handOver)
    return;
  for (size_t i = 0; i < others.size(); ++i) {
    if (others[i].empty())
      continue;
    Lane &lane = *lanes_[i];
    {
      std::lock_guard<std::mutex> lock(lane.lock);
      lane.woken.insert(lane.woken.end(), others[i].begin(), others[i].end());
      lane.anyWoken.store(true, std::memory_order_release);
      if (lane.idle) { // busy before this lane can go idle: the count never shows all idle early
        lane.idle = false;
        busyLanes_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    lane.wakeUp.notify_one();
    others[i].clear();
  }
}

// Every lane is idle with nothing handed to it, so no rank runs or can be woken: every rank
// has finished, or the rest wait for each other (a deadlock) or in a cancelled run. Those
// are woken to unwind; once none is left, the lanes stop. The caller's lane counts as busy
// meanwhile, so no other lane settles at the same time.
void World::settleLanes() {
  std::vector<Rank *> unfinished;
  for (auto &r : ranks_)
    if (!r->finished_)
      unfinished.push_back(r.get());
  if (unfinished.empty()) {
    quiet_ = true;
    for (auto &lane : lanes_) {
      std::lock_guard<std::mutex> lock(lane->lock);
      lane->wakeUp.notify_all();
    }
    return;
  }
  if (!cancelled_)
    diverge(); // a deadlock: the one-thread run reports it
  wake(unfinished);
}

// Takes the ranks other lanes handed over, ahead of the rest (as on one thread). When there
// is nothing to run, the lane goes idle and waits; false once the run is over.
bool World::refill(Lane &lane) {
  std::unique_lock<std::mutex> lock(lane.lock);
  bool watched = false;
  for (;;) {
    for (Rank *r : lane.woken)
      lane.runnable.push_front(r);
    lane.woken.clear();
    lane.anyWoken.store(false, std::memory_order_relaxed);
    if (!lane.runnable.empty())
      return true;
    if (quiet_)
      return false;
    if (lane.idle) {
      if (!watched && watchIdle_) { // counted idle meanwhile: where every lane is, the last settles the run
        watched = true;
        lock.unlock();
        watch(lane, quiet_);
        lock.lock();
        continue;
      }
      lane.wakeUp.wait(lock);
      continue;
    }
    lane.idle = true;
    if (busyLanes_.fetch_sub(1, std::memory_order_acq_rel) != 1)
      continue;
    // The last lane to go idle: busy again while it settles the run.
    lane.idle = false;
    busyLanes_.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    settleLanes();
    lock.lock();
  }
}

void World::runLane(Lane &lane) {
  currentLane = &lane;
  for (;;) {
    if ((lane.runnable.empty() || lane.anyWoken.load(std::memory_order_acquire)) && !refill(lane))
      break;
    Rank *r = lane.runnable.front();
    lane.runnable.pop_front();
    r->queued_.store(false, std::memory_order_release); // a wake from now on queues it again
    runTurn(*r);                                        // (a stack refused: stopAtLimit diverges)
  }
  if (!cancelled_) // every rank has finished: the lanes tally their ranks side by side
    tallyEnd(lane);
  currentLane = nullptr;
}

void World::runInParallel() {
  parallel_ = true;
  watchIdle_ = lanes_.size() <= processors();
  busyLanes_ = static_cast<int>(lanes_.size());
  for (auto &lane : lanes_)
    for (Rank *r : lane->runnable)
      r->queued_.store(true, std::memory_order_relaxed);
  // Every thread is made before any runs: where the system refuses one, the run diverges
  // before it starts, and the ranks of lanes without a thread count as done, never begun.
  // A thread takes back every processor only after the latch: by then its maker has bound it.
  std::latch start(1);
  std::vector<std::thread> threads;
  const Placement place = awayFromCaller();
  size_t started = 1;
  try {
    for (; started < lanes_.size(); ++started) {
      Lane &lane = *lanes_[started];
      threads.emplace_back([this, &lane, &start, &place] {
        start.wait();
        takeEveryProcessor(place);
        runLane(lane);
      });
      startElsewhere(threads.back(), place);
    }
  } catch (const std::system_error &) {
    diverge();
    for (size_t i = started; i < lanes_.size(); ++i) {
      for (Rank *r : lanes_[i]->runnable)
        r->finished_ = true;
      lanes_[i]->runnable.clear();
      lanes_[i]->idle = true;
      busyLanes_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  start.count_down();
  runLane(*lanes_[0]);
  for (std::thread &t : threads)
    t.join();
  parallel_ = false;
  for (auto &lane : lanes_)
    mail_.routes().insert(lane->routes.begin(), lane->routes.end());
}

} // namespace schedc::sim
