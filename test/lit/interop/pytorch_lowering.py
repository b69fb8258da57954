"""PyTorch's pipelining runtime passes, re-expressed (no PyTorch code is used): the actions of
a pipeline order and their CSV text (_Action.__repr__), and how _PipelineScheduleRuntime
lowers an order before it runs it — _add_reduce_grad, _add_unshard_reshard, _merge_bw,
_add_send_recv — and _validate_schedule, read in torch/distributed/pipelining/schedules.py at
commit cff2ecc8b32af684662aefe6fe058e41810e26ce. pytorch_orders.py builds the orders these
lower; its docstring says what each invariant is.
"""
from collections import defaultdict, namedtuple

# One action: stage, kind ("F", "I", "W", "B", "SEND_F", ..., "OVERLAP_F_B"), micro-batch
# (None for UNSHARD/RESHARD/REDUCE_GRAD and the OVERLAP container), sub-actions or None.
Act = namedtuple("Act", "stage kind mb subs", defaults=(None, None))


def cell(a):
    """The CSV text of one action, as _Action.__repr__ writes it; None is an empty cell."""
    if a is None:
        return ""
    if a.subs is not None:
        return "(" + ";".join(cell(s) for s in a.subs) + ")" + a.kind
    return f"{a.stage}{a.kind}" + ("" if a.mb is None else str(a.mb))


class Rejected(Exception):
    """PyTorch refuses this (schedule, ranks, micro-batches): the message says where."""


class Bug(Exception):
    """An invariant of this script does not hold."""


# ------------------------------------------------------------ PyTorch's lowering passes

def leaves(a):
    return a.subs if a.subs is not None else (a,)


def add_reduce_grad(row, n):
    """_add_reduce_grad: drop idle slots; after the action that brings a stage's count of
    W and B (sub-actions included) to M, append sREDUCE_GRAD."""
    out, cnt = [], defaultdict(int)
    for a in row:
        if a is None:
            continue
        out.append(a)
        for leaf in leaves(a) if a.kind == "OVERLAP_F_B" else (a,):
            if leaf.kind in ("W", "B"):
                cnt[leaf.stage] += 1
                if cnt[leaf.stage] == n:
                    out.append(Act(leaf.stage, "REDUCE_GRAD"))
    return out


def add_unshard_reshard(row, max_active=3):
    """_add_unshard_reshard: before each action, the next `max_active` distinct stages
    from it on (an OVERLAP adds both of its stages before the count is checked, so it can
    overshoot) are wanted: RESHARD active stages not wanted, in the iteration order of the
    active set (a Python set, as in PyTorch), then UNSHARD wanted ones not active, in
    order; at the row's end RESHARD what is left, again in set order. Drops idle slots."""
    def wanted(i):
        seen, ret = set(), []
        for a in row[i:]:
            if a is None:
                continue
            if a.kind == "OVERLAP_F_B" and a.subs is not None:
                for s in a.subs:
                    if s.stage not in seen:
                        seen.add(s.stage); ret.append(s.stage)
                if len(ret) >= max_active:
                    break
            elif a.stage not in seen:
                seen.add(a.stage); ret.append(a.stage)
                if len(ret) == max_active:
                    break
        return ret

    active, out = set(), []
    for i, a in enumerate(row):
        if a is None:
            continue
        want = wanted(i)
        fetch = [s for s in want if s not in active]
        evict = [s for s in active if s not in want]
        for s in evict:
            active.remove(s); out.append(Act(s, "RESHARD"))
        for s in fetch:
            active.add(s); out.append(Act(s, "UNSHARD"))
        out.append(a)
    for s in list(active):
        active.remove(s); out.append(Act(s, "RESHARD"))
    return out


def merge_bw(row):
    """_merge_bw: drop idle slots; an I directly followed (idle slots aside) by the W of
    the same stage and micro-batch becomes one B."""
    acts, out = [a for a in row if a is not None] + [None], []
    while len(acts) > 1:
        a, b = acts[0], acts[1]
        merge = a.kind == "I" and b is not None and b[:3] == (a.stage, "W", a.mb)
        out.append(Act(a.stage, "B", a.mb) if merge else a)
        del acts[:2 if merge else 1]
    return out


def add_send_recv(rows, rank_of, num_stages):
    """_add_send_recv. Sweep the ranks in order, repeatedly; a rank takes its next action
    if every leaf of it (both halves of an OVERLAP) is ready on that rank: a forward of a
    stage > 0 needs its RECV_F or the previous stage's forward of that micro-batch already
    in the rank's list, an I/B of a stage < S-1 its RECV_B or the next stage's I/B; all
    else is ready. A taken action is appended, then for each leaf with a peer on another
    rank (F: stage+1, I/B: stage-1) its SEND right after it and the peer's RECV at the end
    of the peer rank's list at that moment. Same-rank neighbours get no messages (the
    runtime hands tensors over in place). A sweep that takes nothing: malformed."""
    todo, pos = {r: list(rows[r]) for r in rows}, {r: 0 for r in rows}
    out, done = {r: [] for r in rows}, {r: set() for r in rows}

    def peer(a):                              # the stage a's output goes to, if remote
        s = {"F": a.stage + 1, "I": a.stage - 1, "B": a.stage - 1}.get(a.kind, -1)
        return s if 0 <= s < num_stages and rank_of(s) != rank_of(a.stage) else None

    def ready(a, have):
        if a.kind == "F" and a.stage != 0:
            return (Act(a.stage, "RECV_F", a.mb) in have
                    or Act(a.stage - 1, "F", a.mb) in have)
        if a.kind in ("I", "B") and a.stage != num_stages - 1:
            return (Act(a.stage, "RECV_B", a.mb) in have
                    or Act(a.stage + 1, "I", a.mb) in have
                    or Act(a.stage + 1, "B", a.mb) in have)
        return True

    live = sorted(r for r in rows if todo[r])
    while live:
        progress = False
        for r in live:
            a = todo[r][pos[r]]
            if a is not None:
                if not all(ready(x, done[r]) for x in leaves(a)):
                    continue
                out[r].append(a)
                for x in leaves(a):
                    done[r].add(x)
                    s = peer(x)
                    if s is not None:
                        fwd = x.kind == "F"
                        send = Act(x.stage, "SEND_F" if fwd else "SEND_B", x.mb)
                        recv = Act(s, "RECV_F" if fwd else "RECV_B", x.mb)
                        out[r].append(send); done[r].add(send)
                        out[rank_of(s)].append(recv); done[rank_of(s)].add(recv)
            pos[r] += 1
            progress = True
        if not progress:
            raise Rejected("_add_send_recv: AssertionError: Malformed compute schedule, "
                           "can't schedule sends/recvs")
        live = [r for r in live if pos[r] < len(todo[r])]
    return out


def validate_schedule(order, p, num_stages, n):
    """_validate_schedule: per stage, a B or I only after the forward of its micro-batch,
    a W only after its I, one rank per stage; then M distinct forwards, #I == #W and
    #B + (#I + #W) / 2 == M. Returns the stage -> rank map it infers, or rejects."""
    seen = {s: {k: set() for k in "FBIW"} for s in range(num_stages)}
    where = {}
    words = {"B": "Full Backward", "I": "Backward Input", "W": "Backward Weight"}
    for r in order:
        for step, a in enumerate(order[r]):
            if a is None:
                continue
            for x in leaves(a):
                if x.stage not in seen:
                    raise Rejected(f"_validate_schedule: KeyError: {x.stage} ({cell(x)})")
                need = {"B": "F", "I": "F", "W": "I"}.get(x.kind)
                if need and x.mb not in seen[x.stage][need]:
                    raise Rejected(
                        f"_validate_schedule: AssertionError: Rank {r}, step {step}: "
                        f"Running {words[x.kind]} for stage {x.stage}, microbatch {x.mb} "
                        f"without first running {'Forward' if need == 'F' else 'Backward Input'}")
                if x.kind in seen[x.stage]:
                    seen[x.stage][x.kind].add(x.mb)
                if where.setdefault(x.stage, r) != r:
                    raise Rejected(f"_validate_schedule: AssertionError: Rank {r}, step "
                                   f"{step}: Stage {x.stage} is assigned to both rank {r} "
                                   f"and rank {where[x.stage]}")
    for s, k in seen.items():
        f, b, i, w = (len(k[c]) for c in "FBIW")
        if f != n:
            raise Rejected(f"_validate_schedule: AssertionError: Got {f} F microbatches "
                           f"for stage {s}, expected {n}")
        if i != w or b + (i + w) // 2 != n:
            raise Rejected(f"_validate_schedule: AssertionError: Invalid backward "
                           f"microbatches for stage {s}: B={b}, I={i}, W={w}, expected {n}")
    return where


# ------------------------------------------------------------------------ the driver

