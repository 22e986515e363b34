"""Solutions, validation and makespan evaluation on the disjunctive graph
(``docs/papers/fjsp-mistar.md``).

A **solution** is a routing (one machine per operation) plus a total order per machine, stored as
linked lists: ``assign[o]`` (machine of ``o``), ``mpred[o]`` / ``msucc[o]`` (machine predecessor /
successor, ``-1`` = none) and ``mfirst[k]`` (first operation on machine ``k``, ``-1`` = idle machine).
Job arcs are implicit (``o-1 → o`` inside a job). With ``p_o = proc[o, assign[o]]``:

* **heads** ``r_o = max(r_JP + p_JP, r_MP + p_MP)`` in a Kahn topological order (0 if no predecessor);
* **tails** ``q_o = max(q_JS + p_JS, q_MS + p_MS)`` in reverse order;
* ``C_max = max_o r_o + p_o``; ``o`` is **critical** iff ``r_o + p_o + q_o = C_max``.

If Kahn's algorithm cannot order every operation the graph has a cycle and the solution is infeasible
(:class:`CycleError`). The semi-active schedule of an acyclic solution starts every operation at its head.

**Moves** (``nopt2-lite``, after Mastrolilli & Gambardella's N_opt2, J. Scheduling 3:3–20, 2000):
take a critical operation ``v``, remove it (graph ``G⁻``: ``v``
deleted, its old machine neighbours joined, ``JP(v) → JS(v)`` joined; heads ``r⁻`` and tails ``q⁻``
recomputed) and re-insert it between consecutive ``u → w`` of an eligible machine ``k`` (``u``/``w`` may be
absent). The insertion is **legal** (creates no cycle) if ``u ≠ JS(v)``, ``w ≠ JP(v)``, and

* no path ``JS(v) ⇝ u``, certified by ``r⁻_u < r⁻_JS + p_JS`` or ``q⁻_u + p_u > q⁻_JS``;
* no path ``w ⇝ JP(v)``, certified by ``r⁻_w + p_w > r⁻_JP`` or ``q⁻_w < q⁻_JP + p_JP``

(a condition on an absent node holds; with positive times a path ``x ⇝ y`` forces ``r_y ≥ r_x + p_x`` and
``q_x ≥ q_y + p_y``, so each certificate excludes the path). The identity move is excluded.

**Exact O(1) makespan of a legal move.** With ``r′ = max(r⁻_JP + p_JP, r⁻_u + p_u)`` and
``q′ = max(q⁻_JS + p_JS, q⁻_w + p_w)``, the longest path through ``v`` after the move is
``est = r′ + p_vk + q′``, and the new makespan is exactly ``max(est, C_max(G⁻))``.
Proof: the new graph without ``v`` is ``G⁻`` minus the arcs ``u → w`` and ``JP → JS``; each is replaced by a
strictly longer path through ``v``, and legality means no path of ``G⁻`` uses both. So every path of ``G⁻``
maps to a path of the new graph at least as long (``C_max ≥ C⁻``), and the paths avoiding ``v`` are at most
``C⁻`` long. If some longest path of ``G⁻`` avoids both arcs the paths avoiding ``v`` reach ``C⁻``; if every
one uses an arc, that arc lies on a longest path of ``G⁻`` and ``est ≥ C⁻ + p_vk > C⁻``. Either way
``C_max = max(est, C⁻)``. Heads of ``u`` and ``JP`` (tails of ``w`` and ``JS``) are the same in ``G⁻`` and
in the new graph because the legality conditions exclude the paths that would change them.
One ``O(N)`` evaluation of ``G⁻`` per critical operation therefore prices all of its candidate
insertions exactly (:func:`neighbourhood`), which is what "incremental" evaluation means here; the tests
check it against full recomputation on random moves.

The hot loops are numba-compiled (``cache=True``); the public API takes and returns numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from papergym.envs.scheduling.fjsp.instance import Instance

__all__ = [
    "CycleError",
    "ScheduleError",
    "Solution",
    "Evaluation",
    "Moves",
    "evaluate",
    "neighbourhood",
    "evaluate_moves_full",
    "apply_move",
    "solution_from_schedule",
    "validate_schedule",
    "job_links",
]


class CycleError(ValueError):
    """The disjunctive graph of a solution has a cycle (the solution is infeasible)."""


class ScheduleError(ValueError):
    """A schedule (start times + machines) breaks a rule: precedence, overlap, eligibility or times."""


def job_links(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    """``(jp, js)``: job predecessor / successor of every operation (``-1`` = none)."""
    N = inst.n_ops
    o = np.arange(N, dtype=np.int64)
    jp = np.where(inst.op_pos > 0, o - 1, -1).astype(np.int64)
    js = np.where(inst.op_pos < inst.job_ops[inst.op_job] - 1, o + 1, -1).astype(np.int64)
    return jp, js


# ------------------------------------------------------------------------------------------- kernels
@nb.njit(cache=True)
def _longest_paths(jp, js, mp, ms, p, heads, tails, order):  # pragma: no cover - compiled
    """Kahn order, heads and tails. Returns the number of ordered nodes (< N means a cycle)."""
    N = p.shape[0]
    indeg = np.zeros(N, dtype=np.int64)
    for o in range(N):
        indeg[o] = (jp[o] >= 0) + (mp[o] >= 0)
        heads[o] = 0
        tails[o] = 0
    n = 0
    for o in range(N):
        if indeg[o] == 0:
            order[n] = o
            n += 1
    h = 0
    while h < n:
        o = order[h]
        h += 1
        f = heads[o] + p[o]
        s = js[o]
        if s >= 0:
            if f > heads[s]:
                heads[s] = f
            indeg[s] -= 1
            if indeg[s] == 0:
                order[n] = s
                n += 1
        s = ms[o]
        if s >= 0:
            if f > heads[s]:
                heads[s] = f
            indeg[s] -= 1
            if indeg[s] == 0:
                order[n] = s
                n += 1
    if n < N:
        return n
    for i in range(N - 1, -1, -1):
        o = order[i]
        t = 0
        s = js[o]
        if s >= 0:
            t = tails[s] + p[s]
        s = ms[o]
        if s >= 0:
            c = tails[s] + p[s]
            if c > t:
                t = c
        tails[o] = t
    return n


@nb.njit(cache=True)
def _cmax(heads, p):  # pragma: no cover - compiled
    c = 0
    for o in range(p.shape[0]):
        f = heads[o] + p[o]
        if f > c:
            c = f
    return c


@nb.njit(cache=True)
def _neighbourhood(
    proc, jp, js, assign, mp, ms, mfirst, p, heads, tails, cmax, only_critical, out_v, out_x, out_c, out_est
):  # pragma: no cover - compiled
    """Every legal nopt2-lite move of the (critical) operations with its exact makespan.

    Writes (v, x, cmax_new, est) rows, ``x < N``: insert before ``x``; ``x >= N``: append to machine
    ``x - N``. Returns the number of rows."""
    N, M = proc.shape
    gmp = np.empty(N, dtype=np.int64)
    gms = np.empty(N, dtype=np.int64)
    gjp = np.empty(N, dtype=np.int64)
    gjs = np.empty(N, dtype=np.int64)
    gp = np.empty(N, dtype=np.int64)
    rh = np.empty(N, dtype=np.int64)
    qt = np.empty(N, dtype=np.int64)
    order = np.empty(N, dtype=np.int64)
    cnt = 0
    for v in range(N):
        if only_critical and heads[v] + p[v] + tails[v] != cmax:
            continue
        # G-: remove v, join its machine neighbours and its job neighbours
        for o in range(N):
            gmp[o] = mp[o]
            gms[o] = ms[o]
            gjp[o] = jp[o]
            gjs[o] = js[o]
            gp[o] = p[o]
        a, b = mp[v], ms[v]
        if a >= 0:
            gms[a] = b
        if b >= 0:
            gmp[b] = a
        JP, JS = jp[v], js[v]
        if JP >= 0:
            gjs[JP] = JS
        if JS >= 0:
            gjp[JS] = JP
        gmp[v] = -1
        gms[v] = -1
        gjp[v] = -1
        gjs[v] = -1
        gp[v] = 0
        _longest_paths(gjp, gjs, gmp, gms, gp, rh, qt, order)
        cm = _cmax(rh, gp)
        rjp = 0
        if JP >= 0:
            rjp = rh[JP] + gp[JP]
        qjs = 0
        if JS >= 0:
            qjs = qt[JS] + gp[JS]
        for k in range(M):
            pv = proc[v, k]
            if pv <= 0:
                continue
            # walk machine k's sequence without v: positions (u, w)
            u = -1
            w = mfirst[k]
            if w == v:
                w = ms[v]
            while True:
                ok = True
                if JS >= 0 and u >= 0:
                    if u == JS or not (rh[u] < rh[JS] + gp[JS] or qt[u] + gp[u] > qt[JS]):
                        ok = False
                if ok and JP >= 0 and w >= 0:
                    if w == JP or not (rh[w] + gp[w] > rh[JP] or qt[w] < qt[JP] + gp[JP]):
                        ok = False
                if ok and k == assign[v] and u == a and w == b:
                    ok = False  # identity move
                if ok:
                    r1 = rjp
                    if u >= 0 and rh[u] + gp[u] > r1:
                        r1 = rh[u] + gp[u]
                    q1 = qjs
                    if w >= 0 and qt[w] + gp[w] > q1:
                        q1 = qt[w] + gp[w]
                    est = r1 + pv + q1
                    out_v[cnt] = v
                    out_x[cnt] = w if w >= 0 else N + k
                    out_c[cnt] = est if est > cm else cm
                    out_est[cnt] = est
                    cnt += 1
                if w < 0:
                    break
                u = w
                w = gms[w]
    return cnt


@nb.njit(cache=True)
def _move_inplace(assign, mp, ms, mfirst, v, x):  # pragma: no cover - compiled
    """Remove ``v`` from its machine order and insert it before ``x`` (``x < N``) or at the end of machine
    ``x - N``, in place on the linked lists (the one implementation of a move)."""
    N = assign.shape[0]
    a, b = mp[v], ms[v]
    if a >= 0:
        ms[a] = b
    else:
        mfirst[assign[v]] = b
    if b >= 0:
        mp[b] = a
    if x < N:
        k = assign[x]
        w = x
        u = mp[w]
    else:
        k = x - N
        w = -1
        u = mfirst[k]
        if u >= 0:
            while ms[u] >= 0:
                u = ms[u]
    assign[v] = k
    mp[v] = u
    ms[v] = w
    if u >= 0:
        ms[u] = v
    else:
        mfirst[k] = v
    if w >= 0:
        mp[w] = v


@nb.njit(cache=True)
def _full_eval_moves(proc, jp, js, assign, mp, ms, mfirst, vs, xs, out):  # pragma: no cover - compiled
    """Makespan after each move (v, x) by full recomputation (-1 for a cyclic result)."""
    N, M = proc.shape
    a2 = np.empty(N, dtype=np.int64)
    mp2 = np.empty(N, dtype=np.int64)
    ms2 = np.empty(N, dtype=np.int64)
    f2 = np.empty(M, dtype=np.int64)
    p2 = np.empty(N, dtype=np.int64)
    heads = np.empty(N, dtype=np.int64)
    tails = np.empty(N, dtype=np.int64)
    order = np.empty(N, dtype=np.int64)
    for i in range(vs.shape[0]):
        for o in range(N):
            a2[o] = assign[o]
            mp2[o] = mp[o]
            ms2[o] = ms[o]
        for k in range(M):
            f2[k] = mfirst[k]
        _move_inplace(a2, mp2, ms2, f2, vs[i], xs[i])
        for o in range(N):
            p2[o] = proc[o, a2[o]]
        n = _longest_paths(jp, js, mp2, ms2, p2, heads, tails, order)
        out[i] = _cmax(heads, p2) if n == N else -1


# ------------------------------------------------------------------------------------------- API
@dataclass
class Solution:
    """Routing + machine sequences (linked lists). Arrays are owned; use :meth:`copy` before mutating
    a shared one."""

    assign: np.ndarray  # (N,) machine of each operation
    mpred: np.ndarray  # (N,) machine predecessor or -1
    msucc: np.ndarray  # (N,) machine successor or -1
    mfirst: np.ndarray  # (M,) first operation of each machine or -1

    @classmethod
    def from_sequences(cls, inst: Instance, sequences) -> Solution:
        """Build from one operation list per machine (the routing is implied). Checks that every
        operation appears exactly once and only on an eligible machine."""
        N, M = inst.n_ops, inst.n_machines
        if len(sequences) != M:
            raise ScheduleError(f"expected {M} machine sequences, got {len(sequences)}")
        assign = np.full(N, -1, dtype=np.int64)
        mpred = np.full(N, -1, dtype=np.int64)
        msucc = np.full(N, -1, dtype=np.int64)
        mfirst = np.full(M, -1, dtype=np.int64)
        for k, seq in enumerate(sequences):
            prev = -1
            for o in seq:
                o = int(o)
                if not 0 <= o < N:
                    raise ScheduleError(f"machine {k}: operation {o} outside 0..{N - 1}")
                if assign[o] >= 0:
                    raise ScheduleError(f"operation {o} appears twice (machines {int(assign[o])} and {k})")
                if inst.proc[o, k] <= 0:
                    raise ScheduleError(f"operation {o} is not eligible on machine {k}")
                assign[o] = k
                if prev < 0:
                    mfirst[k] = o
                else:
                    msucc[prev] = o
                    mpred[o] = prev
                prev = o
        missing = np.flatnonzero(assign < 0)
        if missing.size:
            raise ScheduleError(f"operations {missing[:10].tolist()} are on no machine")
        return cls(assign, mpred, msucc, mfirst)

    def sequences(self) -> list[list[int]]:
        out = []
        for k in range(self.mfirst.shape[0]):
            seq, o = [], int(self.mfirst[k])
            while o >= 0:
                seq.append(o)
                o = int(self.msucc[o])
            out.append(seq)
        return out

    def copy(self) -> Solution:
        return Solution(self.assign.copy(), self.mpred.copy(), self.msucc.copy(), self.mfirst.copy())

    def key(self) -> bytes:
        """Hashable identity (routing + orders)."""
        return self.assign.tobytes() + self.mpred.tobytes()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Solution) and self.key() == other.key()

    def proc_times(self, inst: Instance) -> np.ndarray:
        return inst.proc[np.arange(inst.n_ops), self.assign]


@dataclass
class Evaluation:
    """Heads, tails, makespan and critical flags of an acyclic solution."""

    heads: np.ndarray
    tails: np.ndarray
    p: np.ndarray
    cmax: int
    order: np.ndarray

    @property
    def critical(self) -> np.ndarray:
        return self.heads + self.p + self.tails == self.cmax

    @property
    def start(self) -> np.ndarray:
        """Semi-active start times (= heads)."""
        return self.heads

    def critical_path(self, inst: Instance, sol: Solution) -> list[int]:
        """One critical path from a source to a sink, in order."""
        crit = self.critical
        jp, js = job_links(inst)
        o = next(int(x) for x in self.order if crit[x] and self.heads[x] == 0)
        path = [o]
        while True:
            nxt = -1
            for s in (int(js[o]), int(sol.msucc[o])):
                if s >= 0 and crit[s] and self.heads[s] == self.heads[o] + self.p[o]:
                    nxt = s
                    break
            if nxt < 0:
                return path
            path.append(nxt)
            o = nxt


def evaluate(inst: Instance, sol: Solution, *, links: tuple[np.ndarray, np.ndarray] | None = None) -> Evaluation:
    """Heads, tails and makespan by longest paths on the disjunctive DAG; :class:`CycleError` on a cycle."""
    jp, js = links if links is not None else job_links(inst)
    N = inst.n_ops
    p = sol.proc_times(inst)
    heads = np.empty(N, dtype=np.int64)
    tails = np.empty(N, dtype=np.int64)
    order = np.empty(N, dtype=np.int64)
    n = _longest_paths(jp, js, sol.mpred, sol.msucc, p, heads, tails, order)
    if n < N:
        raise CycleError(f"the disjunctive graph has a cycle ({N - n} operations cannot be ordered)")
    return Evaluation(heads, tails, p, int(_cmax(heads, p)), order)


@dataclass
class Moves:
    """Legal moves with their exact makespans: ``v`` (operation moved), ``x`` (target: insert before
    operation ``x`` if ``x < N``, else append to machine ``x - N``), ``cmax`` (exact), ``est`` (longest path
    through ``v``)."""

    v: np.ndarray
    x: np.ndarray
    cmax: np.ndarray
    est: np.ndarray

    def __len__(self) -> int:
        return int(self.v.shape[0])


def neighbourhood(
    inst: Instance,
    sol: Solution,
    ev: Evaluation | None = None,
    *,
    only_critical: bool = True,
    links: tuple[np.ndarray, np.ndarray] | None = None,
) -> Moves:
    """All legal ``nopt2-lite`` moves of ``sol`` with their exact makespans (module docstring)."""
    jp, js = links if links is not None else job_links(inst)
    if ev is None:
        ev = evaluate(inst, sol, links=(jp, js))
    N, M = inst.proc.shape
    lens = np.bincount(sol.assign, minlength=M)
    elig = inst.proc > 0
    per_v = (elig * (lens[None, :] + 1)).sum(axis=1)
    cand = ev.critical if only_critical else np.ones(N, dtype=bool)
    cap = int(per_v[cand].sum()) + 1
    out_v = np.empty(cap, dtype=np.int64)
    out_x = np.empty(cap, dtype=np.int64)
    out_c = np.empty(cap, dtype=np.int64)
    out_e = np.empty(cap, dtype=np.int64)
    n = _neighbourhood(
        inst.proc,
        jp,
        js,
        sol.assign,
        sol.mpred,
        sol.msucc,
        sol.mfirst,
        ev.p,
        ev.heads,
        ev.tails,
        ev.cmax,
        only_critical,
        out_v,
        out_x,
        out_c,
        out_e,
    )
    return Moves(out_v[:n], out_x[:n], out_c[:n], out_e[:n])


def apply_move(inst: Instance, sol: Solution, v: int, x: int) -> Solution:
    """A new solution with ``v`` removed and inserted before operation ``x`` (on ``x``'s machine) or, for
    ``x >= N``, appended to machine ``x - N``. Checks eligibility and shape, not acyclicity (use
    :func:`evaluate` or the legality test of :func:`neighbourhood`)."""
    N, M = inst.proc.shape
    v, x = int(v), int(x)
    if not 0 <= v < N:
        raise ValueError(f"operation {v} outside 0..{N - 1}")
    if not 0 <= x < N + M:
        raise ValueError(f"target {x} outside 0..{N + M - 1}")
    if x == v:
        raise ValueError(f"cannot insert operation {v} before itself")
    k = int(sol.assign[x]) if x < N else x - N
    if inst.proc[v, k] <= 0:
        raise ValueError(f"operation {v} is not eligible on machine {k}")
    s = sol.copy()
    _move_inplace(s.assign, s.mpred, s.msucc, s.mfirst, v, x)
    return s


def evaluate_moves_full(
    inst: Instance, sol: Solution, v: np.ndarray, x: np.ndarray, *, links: tuple[np.ndarray, np.ndarray] | None = None
) -> np.ndarray:
    """Makespan after each move ``(v[i], x[i])`` by **full recomputation** (apply the move, Kahn order, heads),
    ``-1`` where the result has a cycle. Compiled; the reference the O(1) evaluation of
    :func:`neighbourhood` is checked and benchmarked against, and usable for any batch of moves."""
    jp, js = links if links is not None else job_links(inst)
    v = np.ascontiguousarray(v, dtype=np.int64)
    x = np.ascontiguousarray(x, dtype=np.int64)
    N, M = inst.proc.shape
    if v.shape != x.shape or ((v < 0) | (v >= N)).any() or ((x < 0) | (x >= N + M)).any() or (v == x).any():
        raise ValueError("moves must be pairs (v, x) with 0 <= v < N, 0 <= x < N + M and x != v")
    tgt = np.where(x < N, sol.assign[np.minimum(x, N - 1)], x - N)
    if (inst.proc[v, tgt] <= 0).any():
        raise ValueError("a move puts an operation on a machine that cannot process it")
    out = np.empty(v.shape[0], dtype=np.int64)
    _full_eval_moves(inst.proc, jp, js, sol.assign, sol.mpred, sol.msucc, sol.mfirst, v, x, out)
    return out


def solution_from_schedule(inst: Instance, machine: np.ndarray, start: np.ndarray) -> Solution:
    """The solution whose machine orders sort each machine's operations by start time (ties by id)."""
    machine = np.asarray(machine, dtype=np.int64)
    start = np.asarray(start)
    seqs = []
    for k in range(inst.n_machines):
        ops = np.flatnonzero(machine == k)
        seqs.append(ops[np.lexsort((ops, start[ops]))].tolist())
    return Solution.from_sequences(inst, seqs)


def validate_schedule(inst: Instance, machine, start, *, makespan: float | None = None) -> int:
    """Check a schedule and return its makespan; :class:`ScheduleError` names the first rule broken.

    Rules: one eligible machine per operation; integer non-negative starts; job precedence
    (``start[o+1] >= start[o] + p_o`` inside a job); no overlap on a machine; if ``makespan`` is given it
    must equal ``max(start + p)``."""
    N, M = inst.proc.shape
    machine = np.asarray(machine)
    start = np.asarray(start)
    if machine.shape != (N,) or start.shape != (N,):
        raise ScheduleError(f"machine and start must have shape ({N},), got {machine.shape} and {start.shape}")
    if not np.all(np.isfinite(start.astype(float))) or (start < 0).any():
        raise ScheduleError("start times must be finite and non-negative")
    if ((machine < 0) | (machine >= M)).any():
        o = int(np.argmax((machine < 0) | (machine >= M)))
        raise ScheduleError(f"operation {o}: machine {int(machine[o])} outside 0..{M - 1}")
    machine = machine.astype(np.int64)
    p = inst.proc[np.arange(N), machine]
    if (p <= 0).any():
        o = int(np.argmax(p <= 0))
        raise ScheduleError(f"operation {o} is not eligible on machine {int(machine[o])}")
    end = start + p
    jp, _ = job_links(inst)
    has = jp >= 0
    bad = has & (start < np.where(has, end[jp], 0))
    if bad.any():
        o = int(np.argmax(bad))
        raise ScheduleError(
            f"precedence: operation {o} (job {int(inst.op_job[o])}) starts at {start[o]} before "
            f"its job predecessor {o - 1} ends at {end[o - 1]}"
        )
    for k in range(M):
        ops = np.flatnonzero(machine == k)
        if ops.size < 2:
            continue
        ops = ops[np.argsort(start[ops], kind="stable")]
        ov = start[ops[1:]] < end[ops[:-1]]
        if ov.any():
            i = int(np.argmax(ov))
            raise ScheduleError(
                f"overlap on machine {k}: operations {int(ops[i])} [{start[ops[i]]}, {end[ops[i]]}) "
                f"and {int(ops[i + 1])} [{start[ops[i + 1]]}, {end[ops[i + 1]]})"
            )
    cm = int(end.max())
    if makespan is not None and makespan != cm:
        raise ScheduleError(f"declared makespan {makespan} differs from the schedule's {cm}")
    return cm
