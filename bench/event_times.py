#!/usr/bin/env python3
"""event_times.py MEASURED.json PREDICTED.json — a real run's events beside the model's, by kind.

MEASURED is the trace a compiled schedule writes on a real backend with --trace (each
event's measured time; on the cuda backend each event waits for its device work first),
PREDICTED the trace of the same schedule and options on the sim backend with --hardware (the
hardware model's seconds). Prints, for each kind of event (forward, backward, loss, update,
allreduce, ...), how many there are and their summed durations in both, and predicted ÷
measured — where the model is off, event by event, rather than one step's total. The first
event of each kind is shown apart when it is slower than the rest's mean by half (a
first-use cost the steady state does not pay). A benchmark helper: it prints figures."""
import collections
import json
import sys


def events(path):
    """(name, duration in seconds) of every complete event of a Chrome trace, in order."""
    with open(path) as f:
        doc = json.load(f)
    scale = 1e-6  # the traces' "ts"/"dur" are microseconds of their time unit
    return [(e["name"], e["dur"] * scale) for e in doc["traceEvents"] if e.get("ph") == "X"]


def by_kind(evs):
    kinds = collections.OrderedDict()
    for name, dur in evs:
        kinds.setdefault(name.split()[0], []).append(dur)
    return kinds


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    measured, predicted = by_kind(events(sys.argv[1])), by_kind(events(sys.argv[2]))
    print(f"{'kind':<12} {'count':>5} {'predicted':>12} {'measured':>12} {'ratio':>6}")
    for kind, times in measured.items():
        model = predicted.get(kind, [])
        p, m = sum(model), sum(times)
        ratio = f"{p / m:.2f}" if m > 0 else "-"
        print(f"{kind:<12} {len(times):>5} {p * 1e3:>10.3f}ms {m * 1e3:>10.3f}ms {ratio:>6}"
              + ("" if len(model) == len(times) else f"  (the model has {len(model)})"))
        rest = times[1:]
        if rest and times[0] > 1.5 * sum(rest) / len(rest):
            print(f"{'':<12} first {times[0] * 1e3:.3f} ms, the others {sum(rest) / len(rest) * 1e3:.3f} ms each")


if __name__ == "__main__":
    main()
