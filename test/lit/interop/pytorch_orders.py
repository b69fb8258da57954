#!/usr/bin/env python3
"""Write the pipeline schedules PyTorch's own schedule classes build, as CSV files.

    pytorch_orders.py SCHEDULE RANKS MICROBATCHES [--comms [--merge-bw]]
                      [--stages-per-rank V] [--lf]
    pytorch_orders.py --all DIR [--lf]

SCHEDULE: a name `torch.distributed.pipelining.get_schedule_class` accepts (any case):
GPipe, 1F1B, LoopedBFS, Interleaved1F1B, InterleavedZeroBubble, ZBVZeroBubble, DualPipeV.
Stdout gets the CSV as `_dump_csv` writes it: a row per rank, `str(_Action)` per cell, an
idle step (None) as an empty cell, by `csv.writer` with its "\r\n" line ends (--lf: "\n",
as in PyTorch's test artifacts and examples/pytorch/). Without --comms: the class's
`pipeline_order` (`_dump_csv(format="compute_only")`). --comms: `pipeline_order_with_comms`
as `_PipelineScheduleRuntime._prepare_schedule_with_comms` builds it (per row
`_add_unshard_reshard` with max_active_stages=3, then `_add_reduce_grad`; then
`_add_send_recv`; defer_pp_recv off), i.e. `_dump_csv(format="compute_comms")`; GPipe and
1F1B have none (exit 2). --merge-bw: the lowering of test_schedule.py::test_csv instead
(`_merge_bw` per row, then `_add_send_recv`). --stages-per-rank: for LoopedBFS,
Interleaved1F1B, InterleavedZeroBubble (default 2; the others fix it: 1, or 2 for V).
--all DIR: every accepted combination for ranks 2..8, micro-batches ranks-1..4*ranks, as
DIR/<schedule>_<R>r_<M>mb.csv (+ _comms.csv for the runtime classes); prints the count.
A combination PyTorch rejects (constructor check, `_validate_schedule`, `_add_send_recv`)
exits 2 with PyTorch's reason on stderr.

The rules are PyTorch's, read in torch/distributed/pipelining/schedules.py at commit
cff2ecc8b32af684662aefe6fe058e41810e26ce and re-expressed here (no PyTorch code is used):
ScheduleGPipe/Schedule1F1B._get_pipeline_order, Schedule1F1B.__init__, the __init__ and
_calculate_single_rank_operations of ScheduleLoopedBFS, ScheduleInterleaved1F1B,
ScheduleInterleavedZeroBubble (+ _add_bubbles_to_actions), ScheduleZBVZeroBubble and
ScheduleDualPipeV, _get_warmup_ops, _get_1f1b_rank_ops, _add_reduce_grad,
_add_unshard_reshard, _merge_bw, _add_send_recv, _validate_schedule, _Action.__repr__,
PipelineScheduleMulti._dump_csv and _PipelineScheduleRuntime._dump_csv.

Invariants. Checked on every run (a failure is a bug here: exit 3): each row names only
its rank's stages (looped: stage s on rank s % R; V-shaped: stages r and 2R-1-r on rank r;
single-stage: stage r on rank r); with --comms, the non-message actions of a row are the
lowered row's actions in order, every F/I/B whose neighbour stage is on another rank finds
its RECV earlier in its row, every SEND has its RECV in the peer's row, and a stage's
UNSHARD and RESHARD alternate. PyTorch's own check, `_validate_schedule`, decides (exit 2)
for the runtime classes: per stage M forwards, a B/I after its forward, a W after its I,
#I == #W and #B + #I == M, one rank per stage.
Kept as PyTorch has it: Schedule1F1B's order for the last rank starts its forwards at
micro-batch 1 and ends with forward M (its counter starts at 0 when the rank has no
warm-up forward), so that order fails `_validate_schedule`; PyTorch never validates a
single-stage order (it only draws it), and this script warns on stderr.
"""
import argparse
import csv
import os
import sys
from collections import defaultdict

sys.dont_write_bytecode = True  # (no __pycache__ in the source tree)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_lowering import (Act, Bug, Rejected, add_reduce_grad, add_send_recv,  # noqa: E402
                              add_unshard_reshard, cell, leaves, merge_bw, validate_schedule)


# ---------------------------------------------------------------- the classes' orders

def gpipe(p, n):
    # ScheduleGPipe._get_pipeline_order: rank r idles r steps, forwards 0..M-1, idles
    # 3*(R-1-r), backwards 0..M-1; `_add_reduce_grad` then drops every None and puts
    # rREDUCE_GRAD after the M-th backward. No micro-batch check (PyTorch PR #171462
    # moved `n_microbatches >= num_stages` from PipelineScheduleSingle to 1F1B only).
    order = {}
    for r in range(p):
        row = [None] * r + [Act(r, "F", m) for m in range(n)]
        row += [None] * (3 * (p - 1 - r)) + [Act(r, "B", m) for m in range(n)]
        order[r] = add_reduce_grad(row, n)
    return order


def one_f_one_b(p, n):
    # Schedule1F1B.__init__ raises after building the order when M < stages.
    if n < p:
        raise Rejected(f"Schedule1F1B.__init__: ValueError: Number of microbatches ({n}) "
                       f"must be greater than or equal to the number of stages ({p}).")
    order = {}
    for r in range(p):
        row = [None] * r
        warm = p - 1 - r
        fmb = 0
        for i in range(warm):                 # warm-up forwards 0..warm-1
            row.append(Act(r, "F", i))
            fmb = i                           # stays 0 when warm == 0 (last rank)
        row += [None] * max(0, 2 * (p - 1 - r))
        bmb = 0
        for _ in range(n - warm):             # steady state: F then B
            fmb += 1                          # last rank: its first forward is 1, not 0
            row += [Act(r, "F", fmb), Act(r, "B", bmb)]
            bmb += 1
        while bmb < n:                        # cool-down: an idle step before each B
            row += [None, Act(r, "B", bmb)]
            bmb += 1
        order[r] = add_reduce_grad(row, n)
    return order


def looped_bfs(p, n, v):
    # ScheduleLoopedBFS: all forwards stage by stage (rank's stages ascending), idle
    # 2*(R-1-r), then all backwards stage by stage descending, micro-batches descending.
    order = {}
    for r in range(p):
        stages = list(range(r, p * v, p))
        row = [None] * r
        for s in stages:
            row += [Act(s, "F", m) for m in range(n)]
        row += [None] * (2 * (p - 1 - r))
        for s in reversed(stages):
            row += [Act(s, "B", m) for m in reversed(range(n))]
        order[r] = row
    return order


def _rounds(p, n, what):
    # Both interleaved classes: rounds = max(1, M // R); M must be a multiple of it.
    rounds = max(1, n // p)
    if n % rounds:
        raise Rejected(f"{what}.__init__: ValueError: "
                       + ("Interleaved 1F1B" if what == "ScheduleInterleaved1F1B"
                          else "Zero bubble")
                       + " requires the number of microbatches to be a multiple of the "
                       f"number of rounds ({rounds}), but got {n}.")
    return n // rounds                        # micro-batches per round


def _rank_ops(p, n, v, r, per_round, factor, zero_bubble):
    # _get_warmup_ops and _get_1f1b_rank_ops for one rank of an interleaved schedule.
    warmup = min((v - 1) * per_round + factor * (p - 1 - r), n * v)
    fwd_bwd = v * n - warmup                  # steps with one F and one B (or I)
    cooldown = v * n - fwd_bwd                # = warmup: the remaining backwards
    fwd_stage = lambda op: ((op // per_round) % v) * p + r
    bwd_stage = lambda op: (v - 1 - ((op - warmup) // per_round) % v) * p + r
    post = (v * p + 2 * (p - 1 - r)) - (warmup + r)
    if zero_bubble:
        post = p - r - 1
    back = "I" if zero_bubble else "B"
    count = {k: defaultdict(int) for k in "FBW"}
    row = [None] * r
    bwd_ops = []                              # step numbers of the backwards so far
    weights = 0                               # W's emitted (they follow bwd_ops in order)

    def emit(kind, s):
        row.append(Act(s, kind if kind != "B" else back, count[kind][s]))
        count[kind][s] += 1

    def emit_w():
        nonlocal weights
        emit("W", bwd_stage(bwd_ops[weights]))
        weights += 1

    for op in range(warmup + fwd_bwd + cooldown):
        if op < warmup:
            emit("F", fwd_stage(op))
            if op == warmup - 1:
                row.extend([None] * post)     # negative: nothing
            continue
        if op < warmup + fwd_bwd:
            emit("F", fwd_stage(op))
        elif not zero_bubble:
            row.append(None)                  # cool-down keeps the 1F1B rhythm
        emit("B", bwd_stage(op))
        bwd_ops.append(op)
        if zero_bubble and op - warmup >= r:  # num_1f1b_microbatches = rank
            emit_w()
    while zero_bubble and weights < len(bwd_ops):
        emit_w()
    return row


def interleaved_1f1b(p, n, v):
    per_round = _rounds(p, n, "ScheduleInterleaved1F1B")
    return {r: _rank_ops(p, n, v, r, per_round, 2, False) for r in range(p)}


def interleaved_zb(p, n, v):
    per_round = _rounds(p, n, "ScheduleInterleavedZeroBubble")
    rows = {r: _rank_ops(p, n, v, r, per_round, 1, True) for r in range(p)}
    # _add_bubbles_to_actions: step all rows in lock step; a forward whose previous
    # stage's forward of the same micro-batch has not been taken in an earlier step gets
    # an idle slot instead (its check for B never applies: this schedule emits I's).
    seen, out, ptr = set(), {r: [] for r in range(p)}, [0] * p
    for _guard in range(10 ** 6):
        stop, taken = True, set()
        for r in range(p):
            if ptr[r] >= len(rows[r]):
                continue
            stop = False
            a = rows[r][ptr[r]]
            if a is None:
                ptr[r] += 1
                out[r].append(None)
            elif a.kind == "F" and a.stage != 0 and (a.stage - 1, "F", a.mb) not in seen:
                out[r].append(None)
            else:
                out[r].append(a)
                taken.add((a.stage, a.kind, a.mb))
                ptr[r] += 1
        seen |= taken
        if stop:
            return out
    raise Rejected("ScheduleInterleavedZeroBubble._add_bubbles_to_actions never ends")


def zbv(p, n):
    # ScheduleZBVZeroBubble: rank r holds stage r (chunk 0) and 2R-1-r (chunk 1); it plans
    # max(2R-1, M) micro-batches and turns those >= M into idle slots afterwards.
    big, order = max(2 * p - 1, n), {}
    for r in range(p):
        c0, c1 = r, 2 * p - 1 - r
        row = [None] * r
        f0 = f1 = b0 = b1 = 0
        for _ in range(2 * (p - r) - 1):
            row.append(Act(c0, "F", f0)); f0 += 1
        for _ in range(r):
            row += [Act(c1, "F", f1), Act(c0, "F", f0)]; f1 += 1; f0 += 1
        for _ in range(p - r):
            row += [Act(c1, "F", f1), Act(c1, "I", b1), Act(c1, "W", b1)]; f1 += 1; b1 += 1
        while f1 < f0 or f0 < big:            # stable phase
            if f0 < big:
                row.append(Act(c0, "F", f0)); f0 += 1
            row += [Act(c0, "I", b0), Act(c0, "W", b0)]; b0 += 1
            row += [Act(c1, "F", f1), Act(c1, "I", b1), Act(c1, "W", b1)]; f1 += 1; b1 += 1
        w0, w1 = b0, b1                       # cool-down
        for _ in range(r):
            row += [Act(c0, "I", b0), Act(c1, "I", b1)]; b0 += 1; b1 += 1
        for _ in range(p - r):
            row += [Act(c0, "I", b0), Act(c0, "W", w0)]; b0 += 1; w0 += 1
        row += [Act(c1, "W", w) for w in range(w1, b1)]
        row += [Act(c0, "W", w) for w in range(w0, b0)]
        order[r] = [a if a is not None and a.mb < n else None for a in row]
    return order


def dualpipev(p, n):
    if n < 2 * p:
        raise Rejected("ScheduleDualPipeV.__init__: ValueError: DualPipeV requires at least "
                       f"as many microbatches as stages, but got {n} microbatches and "
                       f"{2 * p} stages.")
    order = {}
    for r in range(p):
        s0, s1 = r, 2 * p - 1 - r             # generate_rank_to_stage_mapping(style="v")
        row, nxt, wq = [], defaultdict(int), []   # nxt[(stage, kind)]: next micro-batch

        def add(s, kind):
            # B and I share the "I" counter; a B also advances "W"; an I queues its W.
            key = (s, "I" if kind == "B" else kind)
            m = nxt[key]
            row.append(Act(s, kind, m))
            nxt[key] += 1
            if kind == "B":
                nxt[(s, "W")] += 1
            elif kind == "I":
                wq.append((s, m))

        def overlap(fs, bs):                  # (fsF m; bsB m')OVERLAP_F_B
            f, b = Act(fs, "F", nxt[(fs, "F")]), Act(bs, "B", nxt[(bs, "I")])
            row.append(Act(-1, "OVERLAP_F_B", None, (f, b)))
            nxt[(fs, "F")] += 1
            nxt[(bs, "I")] += 1
            nxt[(bs, "W")] += 1

        def weight():                         # the oldest queued W, if any
            if wq:
                s, m = wq.pop(0)
                row.append(Act(s, "W", m))
                nxt[(s, "W")] += 1

        for _ in range((p - r - 1) * 2):      # 1: F0
            add(s0, "F")
        for _ in range(r + 1):                # 2: F0 F1
            add(s0, "F"); add(s1, "F")
        for _ in range(p - r - 1):            # 3: I1 W1 F1
            add(s1, "I"); weight(); add(s1, "F")
        for i in range(n - 2 * p + r + 1):    # 4: F0B1 F1B0 overlapped
            if i == 0 and r == p - 1:
                add(s0, "F"); add(s1, "B")
            else:
                overlap(s0, s1)
            overlap(s1, s0)
        for _ in range(p - r - 1):            # 5: B1, F1B0
            add(s1, "B"); overlap(s1, s0)
        zb = False
        for i in range(r + 1):                # 6: B1 B0, the second half as I
            if i == (r + 1) // 2 and r % 2 == 1:
                zb = True
            add(s1, "I" if zb else "B")
            if i == (r + 1) // 2 and r % 2 == 0:
                zb = True
            add(s0, "I" if zb else "B")
        for _ in range(p - r - 1):            # 7: W0 B0
            weight(); add(s0, "I" if zb else "B")
        for _ in range(r + 1):                # 8: W0
            weight()
        order[r] = row
    return order


SCHEDULES = {  # name: (builder, runtime class?, placement, default stages per rank)
    "GPipe": (lambda p, n, v: gpipe(p, n), False, "single", 1),
    "1F1B": (lambda p, n, v: one_f_one_b(p, n), False, "single", 1),
    "LoopedBFS": (looped_bfs, True, "looped", 2),
    "Interleaved1F1B": (interleaved_1f1b, True, "looped", 2),
    "InterleavedZeroBubble": (interleaved_zb, True, "looped", 2),
    "ZBVZeroBubble": (lambda p, n, v: zbv(p, n), True, "v", 2),
    "DualPipeV": (lambda p, n, v: dualpipev(p, n), True, "v", 2),
}


def placement(kind, p):
    if kind == "v":
        return lambda s: s if s < p else 2 * p - 1 - s
    return lambda s: s % p                    # looped (single: stage r on rank r)


def build(name, p, n, v=None, comms=False, merge=False, warn=True):
    """(pipeline_order, pipeline_order_with_comms or None); raises Rejected."""
    make, runtime, place, default_v = SCHEDULES[name]
    v = default_v if v is None else v
    if place != "looped" and v != default_v:
        raise Rejected("ZBV requires exactly 2 stages per rank, but got "
                       f"{v}. (ScheduleZBVZeroBubble / ScheduleDualPipeV.__init__)"
                       if place == "v" else
                       "PipelineScheduleSingle takes exactly one stage per rank")
    if v < 1 or p < 1 or n < 1:
        raise Rejected("ranks, micro-batches and stages per rank must be at least 1")
    order, num_stages = make(p, n, v), p * v
    check_placement(order, placement(place, p))
    if not runtime:
        if comms:
            raise Rejected(f"Schedule{name} is a PipelineScheduleSingle: it has no "
                           "pipeline_order_with_comms (its _step_microbatches posts its own "
                           "P2P ops), and _PipelineScheduleRuntime._load_csv would refuse "
                           "its order (REDUCE_GRAD is not a compute action)")
        try:
            validate_schedule(order, p, num_stages, n)
        except Rejected as e:
            if warn:
                print(f"warning: Schedule{name}'s pipeline_order fails {e} (PyTorch "
                      "does not validate single-stage orders)", file=sys.stderr)
        return order, None
    # _PipelineScheduleRuntime._prepare_schedule_with_comms
    where = validate_schedule(order, p, num_stages, n)
    rank_of = where.__getitem__
    if merge:
        rows = {r: merge_bw(order[r]) for r in order}
    else:
        rows = {r: add_reduce_grad(add_unshard_reshard(order[r]), n) for r in order}
    lowered = add_send_recv(rows, rank_of, num_stages)
    check_lowering(rows, lowered, rank_of, num_stages)
    return order, lowered


def check_placement(order, rank_of):
    for r, row in order.items():
        for a in row:
            for x in leaves(a) if a is not None else ():
                if rank_of(x.stage) != r:
                    raise Bug(f"rank {r} computes {cell(x)} of rank {rank_of(x.stage)}")


def check_lowering(rows, lowered, rank_of, num_stages):
    """The invariants of --comms listed in the top comment."""
    for r in rows:
        if [a for a in lowered[r] if a.kind[:4] not in ("SEND", "RECV")] != rows[r]:
            raise Bug(f"rank {r}: lowering changed the compute actions")
        have, state = set(), {}
        for a in lowered[r]:
            if a.kind in ("UNSHARD", "RESHARD"):
                if state.get(a.stage, "RESHARD") == a.kind:
                    raise Bug(f"rank {r}: {cell(a)} twice in a row")
                state[a.stage] = a.kind
            for x in leaves(a):
                up = {"F": -1, "I": 1, "B": 1}.get(x.kind)   # where its input comes from
                if up and 0 <= x.stage + up < num_stages and rank_of(x.stage + up) != r:
                    need = Act(x.stage, "RECV_F" if up < 0 else "RECV_B", x.mb)
                    if need not in have:
                        raise Bug(f"rank {r}: {cell(x)} before {cell(need)}")
            have.add(a)
            if a.kind.startswith("SEND"):
                s = a.stage + 1 if a.kind == "SEND_F" else a.stage - 1
                if Act(s, "RECV" + a.kind[4:], a.mb) not in lowered[rank_of(s)]:
                    raise Bug(f"{cell(a)} on rank {r} has no receive")


def write(rows, f, lf):
    w = csv.writer(f, lineterminator="\n" if lf else "\r\n")
    for r in rows:                            # insertion order: rank 0, 1, ...
        w.writerow([cell(a) for a in rows[r]])


def write_all(directory, lf):
    os.makedirs(directory, exist_ok=True)
    count = 0
    for name, (_, runtime, _, _) in SCHEDULES.items():
        for p in range(2, 9):
            for n in range(p - 1, 4 * p + 1):
                try:
                    order, lowered = build(name, p, n, comms=runtime, warn=False)
                except Rejected:
                    continue
                base = os.path.join(directory, f"{name.lower()}_{p}r_{n}mb")
                for path, rows in ((base + ".csv", order), (base + "_comms.csv", lowered)):
                    if rows is not None:
                        with open(path, "w", newline="") as f:
                            write(rows, f, lf)
                        count += 1
    print(f"{count} files written to {directory}")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for arg in ("schedule", "ranks", "microbatches"):
        ap.add_argument(arg, nargs="?", type=str if arg == "schedule" else int)
    for flag in ("--comms", "--merge-bw", "--lf"):
        ap.add_argument(flag, action="store_true")
    ap.add_argument("--stages-per-rank", type=int)
    ap.add_argument("--all", metavar="DIR")
    args = ap.parse_args(argv)
    try:
        if args.all:
            if args.schedule is not None:
                ap.error("--all takes no schedule")
            write_all(args.all, args.lf)
            return 0
        if args.microbatches is None:
            ap.error("SCHEDULE RANKS MICROBATCHES or --all DIR")
        names = {k.lower(): k for k in SCHEDULES}
        if args.schedule.lower() not in names:
            ap.error(f"unknown schedule {args.schedule!r}; one of {', '.join(SCHEDULES)}")
        if args.merge_bw and not args.comms:
            ap.error("--merge-bw goes with --comms")
        try:
            order, lowered = build(names[args.schedule.lower()], args.ranks,
                                   args.microbatches, args.stages_per_rank,
                                   args.comms, args.merge_bw)
        except Rejected as e:
            print(f"rejected: {e}", file=sys.stderr)
            return 2
        sys.stdout.reconfigure(newline="")
        try:
            write(lowered if args.comms else order, sys.stdout, args.lf)
            sys.stdout.flush()
        except BrokenPipeError:               # e.g. piped into `head`
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Bug as e:
        print(f"internal error (an invariant does not hold): {e}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
