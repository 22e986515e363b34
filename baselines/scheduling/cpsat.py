"""OR-Tools CP-SAT for the flexible job shop and the ``cpsat`` agents of ``FJSP-v0`` /
``FJSPImprove-v0``.

[code: DANIEL ``ortools_solver.py``; PyJobShop ``solvers/ortools/``] The model (:func:`solve_cpsat`):

1. **Horizon** ``H = Σ_o max_k p_ok`` (every operation on its slowest machine, one after the other: a
   feasible schedule always fits, so the model is never infeasible). Integer start ``s_o`` and end
   ``e_o`` in ``[0, H]``.
2. **Routing.** ``|M_o| = 1``: one mandatory interval ``(s_o, p_ok, e_o)`` on that machine. Otherwise, per
   eligible ``k``, a Boolean ``x_ok`` and an optional fixed-size interval ``(s_o, p_ok)`` present iff
   ``x_ok`` (``NewOptionalFixedSizeIntervalVar``); ``e_o = s_o + p_ok`` enforced only if ``x_ok``;
   ``AddExactlyOne(x_o·)``. The presence literals play the role of CP Optimizer's ``alternative``.
3. **Job precedence** ``s_{o+1} ≥ e_o``; **machines** ``AddNoOverlap`` over all (optional) intervals of
   each machine.
4. ``C_max = max`` of the last operations' ends (``AddMaxEquality``); minimise ``C_max``.
5. **Options.** ``redundant_cumulative=True`` adds one ``AddCumulative`` over every interval with demand 1
   and capacity ``M`` (implied by the no-overlaps; it can strengthen propagation; off by default).
   ``hint``: a :class:`~papergym.envs.scheduling.fjsp.graph.Solution`, or the name of a dispatching rule
   (``fifo``, ``mor``, ``spt``, ``mwkr``, ``lwkr``, ``random``) built by
   :func:`~papergym.envs.scheduling.fjsp.improve.dispatch_solution` with ``np.random.default_rng(0)``; the
   hint sets ``x_ok`` from the routing and ``s_o``/``e_o``/``C_max`` from the solution's semi-active
   schedule (the heads of :func:`~papergym.envs.scheduling.fjsp.graph.evaluate`), i.e. a complete,
   feasible hint. ``None`` = no hint.
6. **Parameters.** ``max_time_in_seconds = time_limit``, ``num_workers`` (``num_search_workers`` on
   OR-Tools versions without ``num_workers``), ``random_seed = seed``, ``log_search_progress = log``.
   Defaults: 2 s and 2 workers (the default comparison; ≥ 8 workers are recommended for long runs,
   the strong lower-bound workers need many). Results depend on the OR-Tools version, the workers and
   the limit: all three are recorded in :attr:`CPSATResult.settings`.

7. **A claimed optimum is checked** (``verify_optimal=True``, :func:`_check_optimal`): against the shipped
   references of the instance (a known shorter schedule or a proven bound above the claim refutes it),
   against the instance's own lower bound, and by a second, independent search (a fresh model with
   ``C_max <= claim - 1``, no hint, one worker, another seed, the same time limit) that must prove it
   infeasible. A refuted claim is reported as ``feasible`` (with the shorter schedule when the search found
   one, and the instance's own lower bound), a :class:`CPSATContradiction` warning and
   ``settings["optimality_check"]`` saying why; it is never reported as proved. (Seen once: a 2-worker
   run claimed 293 optimal on SD2 10x5 instance 3, whose optimum is 289.) A verified claim costs one more
   search, usually much shorter than the first.

**Determinism.** With ``num_workers=1`` and a fixed ``seed`` the search is deterministic *when it ends
before the time limit* (a wall-clock limit cuts a run at a machine-dependent point). Multi-worker runs are
**not** deterministic: the workers race and share solutions and bounds.

**Left compression.** After solving, the solver's machine orders (each machine's operations sorted by
CP-SAT start) define a :class:`Solution` (:func:`~papergym.envs.scheduling.fjsp.graph.solution_from_schedule`);
the reported ``start`` are that solution's heads (every operation as early as its job and machine
predecessors allow) and the reported ``makespan`` its ``C_max``, which is ``≤`` the solver's objective (the
solver's schedule may contain idle time it had no reason to remove; asserted). The schedule is checked
with :func:`~papergym.envs.scheduling.fjsp.graph.validate_schedule` before it is returned, so CP-SAT start
times, left-compressed, equal the heads (:mod:`~papergym.envs.scheduling.fjsp.graph`).
``lower_bound`` is CP-SAT's best objective bound
(rounded up; a proven lower bound on the optimum).

**Agents** (registered in :mod:`papergym.baselines.scheduling`):

* :class:`CPSATDispatchAgent` (``cpsat`` on ``FJSP-v0``): solves the run's instance at its first decision (the
  instance is rebuilt from the observation, :func:`instance_from_observation`), then
  replays the operations in CP-SAT start-time order on their CP-SAT machines. The env starts each operation
  at ``max(job_ready, machine_ready)`` and appends it to its machine, so the replayed schedule is the same
  solution's semi-active schedule: its makespan equals the left-compressed one (≤ CP-SAT's objective).
* :class:`CPSATReferenceAgent` (``cpsat`` on ``FJSPImprove-v0``, a reference line): solves at
  its first step and keeps the env's solution (each step restores the current archive slot, a no-op); it
  reports CP-SAT's makespan in ``diagnostics()["makespan"]``, which the env's scorer uses for it.

Both derive the CP-SAT ``random_seed`` from the agent seed (``int(default_rng(seed).integers(2**31))``, 0
without a seed). If CP-SAT returns no solution within the limit (large instances) they fall back to the
hint solution (``cpsat_fallback = 1`` in the diagnostics).

Needs the ``fjsp`` extra (``pip install 'papergym[fjsp]'``, OR-Tools).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from papergym.envs.scheduling.fjsp.common import instance_from_observation
from papergym.envs.scheduling.fjsp.graph import Solution, evaluate, solution_from_schedule, validate_schedule
from papergym.envs.scheduling.fjsp.instance import Instance
from papergym.envs.scheduling.fjsp.rules import JOB_RULES
from papergym.validate import positive_float, positive_int

__all__ = [
    "CPSATContradiction",
    "CPSATResult",
    "solve_cpsat",
    "CPSATDispatchAgent",
    "CPSATReferenceAgent",
    "ortools_version",
    "agent_cpsat_seed",
]

_STATUS = {"OPTIMAL": "optimal", "FEASIBLE": "feasible", "INFEASIBLE": "infeasible", "UNKNOWN": "unknown"}


def _cp_model():
    try:
        from ortools.sat.python import cp_model
    except ImportError:  # pragma: no cover - depends on the install
        raise ImportError("the CP-SAT baseline needs OR-Tools: pip install 'papergym[fjsp]'") from None
    return cp_model


def ortools_version() -> str:
    _cp_model()
    import ortools

    return str(ortools.__version__)


@dataclass
class CPSATResult:
    """The outcome of :func:`solve_cpsat`.

    ``status``: ``"optimal"`` (proved), ``"feasible"`` (a solution, not proved optimal), ``"infeasible"``,
    ``"unknown"`` (no solution within the limit). ``makespan``, ``machine``, ``start`` and ``solution`` are
    ``None`` without a solution; ``start`` is left-compressed (the heads of ``solution``). ``lower_bound``
    is CP-SAT's best objective bound (proven, rounded up). ``objective`` is the solver's own ``C_max``
    before left compression (``≥ makespan``); ``wall_time`` the seconds of the whole call (model, solve,
    compression); ``settings`` the OR-Tools version and the parameters that the result depends on."""

    status: str
    makespan: int | None
    lower_bound: int
    machine: np.ndarray | None
    start: np.ndarray | None
    solution: Solution | None
    wall_time: float
    settings: dict = field(default_factory=dict)
    objective: int | None = None

    @property
    def optimal(self) -> bool:
        return self.status == "optimal"


def _hint_solution(inst: Instance, hint: Solution | str | None) -> tuple[Solution | None, str | None]:
    if hint is None:
        return None, None
    if isinstance(hint, Solution):
        if hint.assign.shape != (inst.n_ops,) or hint.mfirst.shape != (inst.n_machines,):
            raise ValueError(
                f"hint: the solution has {hint.assign.shape[0]} operations and {hint.mfirst.shape[0]} "
                f"machines, the instance {inst.n_ops} and {inst.n_machines}"
            )
        return hint, "solution"
    if isinstance(hint, str):
        if hint not in JOB_RULES:
            raise ValueError(
                f"hint: unknown dispatching rule {hint!r}; valid: {', '.join(JOB_RULES)} (or a Solution, or None)"
            )
        from papergym.envs.scheduling.fjsp.improve import dispatch_solution

        return dispatch_solution(inst, hint, np.random.default_rng(0)), hint
    raise TypeError(f"hint must be a Solution, a rule name or None, got {type(hint).__name__}")


def _model(cp_model: Any, inst: Instance, redundant_cumulative: bool = False):
    """The CP-SAT model of the module docstring (items 1-5, without the hint): ``(model, s, e, x, cmax,
    elig)`` -- start and end variables, per operation the presence literals by machine (only where
    ``|M_o| > 1``), the makespan variable, and the eligible machines."""
    N, M = inst.n_ops, inst.n_machines
    proc = inst.proc
    elig = [np.flatnonzero(proc[o] > 0).tolist() for o in range(N)]
    H = int(proc.max(axis=1).sum())

    m = cp_model.CpModel()
    s = [m.NewIntVar(0, H, f"s{o}") for o in range(N)]
    e = [m.NewIntVar(0, H, f"e{o}") for o in range(N)]
    x: list[dict[int, Any]] = [{} for _ in range(N)]  # presence literals (only for |M_o| > 1)
    by_machine: list[list[Any]] = [[] for _ in range(M)]
    intervals: list[Any] = []
    for o in range(N):
        ks = elig[o]
        if len(ks) == 1:
            k = ks[0]
            iv = m.NewIntervalVar(s[o], int(proc[o, k]), e[o], f"i{o}")
            by_machine[k].append(iv)
            intervals.append(iv)
            continue
        lits = []
        for k in ks:
            lit = m.NewBoolVar(f"x{o}_{k}")
            p = int(proc[o, k])
            iv = m.NewOptionalFixedSizeIntervalVar(s[o], p, lit, f"i{o}_{k}")
            m.Add(e[o] == s[o] + p).OnlyEnforceIf(lit)
            x[o][k] = lit
            lits.append(lit)
            by_machine[k].append(iv)
            intervals.append(iv)
        m.AddExactlyOne(lits)
    for j in range(inst.n_jobs):
        for o in range(int(inst.job_start[j]), int(inst.job_start[j + 1]) - 1):
            m.Add(s[o + 1] >= e[o])
    for k in range(M):
        if len(by_machine[k]) > 1:
            m.AddNoOverlap(by_machine[k])
    if redundant_cumulative:
        m.AddCumulative(intervals, [1] * len(intervals), M)
    cmax = m.NewIntVar(0, H, "cmax")
    m.AddMaxEquality(cmax, [e[int(inst.job_start[j + 1]) - 1] for j in range(inst.n_jobs)])
    m.Minimize(cmax)
    return m, s, e, x, cmax, elig


def solve_cpsat(
    inst: Instance,
    *,
    time_limit: float = 2.0,
    num_workers: int = 2,
    seed: int = 0,
    hint: Solution | str | None = "mwkr",
    redundant_cumulative: bool = False,
    log: bool = False,
    verify_optimal: bool = True,
) -> CPSATResult:
    """Solve ``inst`` with the CP-SAT model of the module docstring and return the left-compressed
    result. With ``verify_optimal`` (default), a claimed optimum is checked independently
    (:func:`_check_optimal`): refuted, it is reported as ``feasible`` with a :class:`CPSATContradiction`
    warning and ``settings["optimality_check"]`` saying why."""
    cp_model = _cp_model()
    import ortools

    positive_float(time_limit, "time_limit")  # seconds
    positive_int(num_workers, "num_workers")
    positive_int(seed, "seed", 0, maximum=2**31 - 1)
    t0 = time.perf_counter()
    hint_sol, hint_name = _hint_solution(inst, hint)

    N = inst.n_ops
    m, s, e, x, cmax, elig = _model(cp_model, inst, redundant_cumulative)
    hint_cmax = None
    if hint_sol is not None:
        ev = evaluate(inst, hint_sol)
        hint_cmax = int(ev.cmax)
        for o in range(N):
            m.AddHint(s[o], int(ev.heads[o]))
            m.AddHint(e[o], int(ev.heads[o] + ev.p[o]))
            for k, lit in x[o].items():
                m.AddHint(lit, int(hint_sol.assign[o]) == k)
        m.AddHint(cmax, hint_cmax)

    solver = cp_model.CpSolver()
    prm = solver.parameters
    prm.max_time_in_seconds = float(time_limit)
    if hasattr(prm, "num_workers"):
        prm.num_workers = int(num_workers)
    else:  # pragma: no cover - OR-Tools < 9.3
        prm.num_search_workers = int(num_workers)
    prm.random_seed = int(seed)
    prm.log_search_progress = bool(log)
    code = solver.Solve(m)
    status = _STATUS.get(solver.StatusName(code))
    if status is None:
        raise RuntimeError(
            f"CP-SAT returned {solver.StatusName(code)} for {inst.name or 'the instance'}: "
            f"{m.Validate() or 'no model error reported'}"
        )
    if status == "infeasible":  # cannot happen: H admits the trivial sequential schedule
        raise RuntimeError(f"CP-SAT reports the FJSP model of {inst.name or 'the instance'} infeasible (a bug)")
    settings = {
        "ortools": str(ortools.__version__),
        "num_workers": int(num_workers),
        "time_limit": float(time_limit),
        "seed": int(seed),
        "hint": hint_name,
        "hint_makespan": hint_cmax,
        "redundant_cumulative": bool(redundant_cumulative),
        "solver_wall_time": float(solver.WallTime()),
    }
    bound = solver.BestObjectiveBound()
    lb = int(math.ceil(bound - 1e-9)) if math.isfinite(bound) else 0
    lb = max(lb, 0)
    if status == "unknown":
        return CPSATResult("unknown", None, lb, None, None, None, time.perf_counter() - t0, settings)

    machine, raw_start = _schedule(solver, inst, s, x, elig)
    objective = int(round(solver.ObjectiveValue()))
    sol, start, makespan = _compressed(inst, machine, raw_start)
    assert makespan <= objective, f"left compression increased the makespan ({makespan} > {objective})"
    assert makespan >= lb, f"makespan {makespan} below CP-SAT's proven bound {lb}"
    if status == "optimal" and verify_optimal:
        better, why = _check_optimal(
            cp_model,
            inst,
            makespan,
            time_limit=float(time_limit),
            seed=int(seed),
            redundant_cumulative=redundant_cumulative,
        )
        settings["optimality_check"] = why
        if better is not None or why.startswith("contradiction"):
            # CP-SAT's proof is refuted: never report it as proved; keep the best schedule known, and
            # only the instance's own bound (CP-SAT's bound came with the refuted proof)
            warnings.warn(f"CP-SAT on {inst.name or 'the instance'}: {why}", CPSATContradiction, stacklevel=2)
            status, lb = "feasible", int(inst.lower_bound())
            if better is not None:
                machine, sol, start, makespan = better
    return CPSATResult(status, makespan, lb, machine, start, sol, time.perf_counter() - t0, settings, objective)


class CPSATContradiction(UserWarning):
    """CP-SAT claimed an optimum that an independent check refutes (:func:`_check_optimal`); the result
    is reported as ``feasible``, never as proved."""


def _schedule(
    solver: Any, inst: Instance, s: list, x: list[dict[int, Any]], elig: list[list[int]]
) -> tuple[np.ndarray, np.ndarray]:
    """The solver's machine of every operation and its start time."""
    machine = np.empty(inst.n_ops, dtype=np.int64)
    raw_start = np.empty(inst.n_ops, dtype=np.int64)
    for o in range(inst.n_ops):
        raw_start[o] = solver.Value(s[o])
        if len(elig[o]) == 1:
            machine[o] = elig[o][0]
        else:
            chosen = [k for k, lit in x[o].items() if solver.BooleanValue(lit)]
            assert len(chosen) == 1, f"operation {o}: {len(chosen)} machines chosen"
            machine[o] = chosen[0]
    return machine, raw_start


def _compressed(inst: Instance, machine: np.ndarray, raw_start: np.ndarray) -> tuple[Solution, np.ndarray, int]:
    """The solver's schedule, validated, then left-compressed: ``(solution, start, makespan)``."""
    validate_schedule(inst, machine, raw_start)  # the solver's own schedule must already be valid
    sol = solution_from_schedule(inst, machine, raw_start)
    ev = evaluate(inst, sol)
    start = ev.heads.copy()
    makespan = int(validate_schedule(inst, machine, start, makespan=int(ev.cmax)))
    return sol, start, makespan


def _check_optimal(
    cp_model: Any, inst: Instance, claimed: int, *, time_limit: float, seed: int, redundant_cumulative: bool = False
) -> tuple[tuple | None, str]:
    """Independent checks of a claimed optimum ``claimed`` (a valid schedule's makespan):

    1. the shipped references (``data/bks.json``, ``data/references.json``; an unflagged entry of the
       instance's name): a known schedule shorter than ``claimed``, or a proven bound above it, refutes it;
    2. the instance's own lower bound (:meth:`Instance.lower_bound`, independent of CP-SAT) above it;
    3. a second, independent CP-SAT search -- a fresh model with ``C_max <= claimed - 1``, no hint, one
       worker, another seed, the same time limit -- must find it infeasible; a schedule it finds refutes
       the claim (and is returned), a search cut by the limit leaves the claim unverified.

    Returns ``(better, why)``: ``better`` = ``(machine, solution, start, makespan)`` of a shorter schedule
    or ``None``; ``why`` starts with ``"contradiction"`` when the claim is refuted, ``"verified"`` or
    ``"unverified"`` otherwise."""
    from papergym.envs.scheduling.fjsp.sets import reference

    ref = reference(inst.name) if inst.name else None
    if ref is not None and not ref.flag:
        if ref.ub is not None and ref.ub < claimed:
            return None, (
                f"contradiction: the claimed optimum {claimed} exceeds the shipped reference's "
                f"makespan {ref.ub} ({ref.source})"
            )
        if ref.lb is not None and ref.lb > claimed:
            return None, (
                f"contradiction: the claimed optimum {claimed} is below the shipped reference's proven "
                f"bound {ref.lb} ({ref.source}), yet it is a valid schedule's makespan"
            )
    if inst.lower_bound() > claimed:
        return None, (
            f"contradiction: the claimed optimum {claimed} is below the instance's lower bound "
            f"{inst.lower_bound()}, yet it is a valid schedule's makespan"
        )
    m, s, _e, x, cmax, elig = _model(cp_model, inst, redundant_cumulative)
    m.Add(cmax <= claimed - 1)
    solver = cp_model.CpSolver()
    prm = solver.parameters
    prm.max_time_in_seconds = float(time_limit)
    if hasattr(prm, "num_workers"):
        prm.num_workers = 1
    else:  # pragma: no cover - OR-Tools < 9.3
        prm.num_search_workers = 1
    prm.random_seed = (int(seed) + 1) % 2**31
    status = _STATUS.get(solver.StatusName(solver.Solve(m)))
    if status == "infeasible":
        return None, f"verified: an independent search proved no schedule shorter than {claimed}"
    if status in ("feasible", "optimal"):
        machine, raw_start = _schedule(solver, inst, s, x, elig)
        sol, start, makespan = _compressed(inst, machine, raw_start)
        return (machine, sol, start, makespan), (
            f"contradiction: CP-SAT claimed {claimed} optimal, an independent search found a schedule of "
            f"makespan {makespan}"
        )
    return None, f"unverified: the independent search did not finish within {time_limit:g} s"


# ------------------------------------------------------------------------------------------------ agents
def agent_cpsat_seed(seed: Any) -> int:
    """CP-SAT ``random_seed`` of an agent seed (int, ``SeedSequence`` or None -> 0)."""
    return 0 if seed is None else int(np.random.default_rng(seed).integers(2**31))


class _CPSATAgentBase:
    def __init__(
        self,
        problem: Any,
        *,
        seed: Any = None,
        time_limit: float = 2.0,
        num_workers: int = 2,
        hint: Solution | str | None = "mwkr",
        redundant_cumulative: bool = False,
    ):
        self.N, self.M = int(problem.params["n_ops"]), int(problem.params["n_machines"])
        self._settings = dict(
            seed=seed,
            time_limit=time_limit,
            num_workers=num_workers,
            hint=hint,
            redundant_cumulative=redundant_cumulative,
        )
        self.inst: Instance | None = None  # the run's instance: from the first observation (solved then)

    def _solve(self, observation: dict) -> None:
        """Solve the run's instance (rebuilt from its observation) once, at the first act."""
        if self.inst is not None:
            return
        seed, time_limit, num_workers, hint, redundant_cumulative = (
            self._settings[k] for k in ("seed", "time_limit", "num_workers", "hint", "redundant_cumulative")
        )
        self.inst = instance_from_observation(observation)
        self.result = solve_cpsat(
            self.inst,
            time_limit=time_limit,
            num_workers=num_workers,
            seed=agent_cpsat_seed(seed),
            hint=hint,
            redundant_cumulative=redundant_cumulative,
        )
        self.fallback = self.result.solution is None
        if self.fallback:  # no CP-SAT solution within the limit: replay / report the hint's solution
            sol, _ = _hint_solution(self.inst, hint if hint is not None else "mwkr")
            ev = evaluate(self.inst, sol)
            self.solution, self.start, self.makespan = sol, ev.heads.copy(), int(ev.cmax)
        else:
            self.solution, self.start, self.makespan = self.result.solution, self.result.start, self.result.makespan

    def update(self, action: Any, reward: float, observation: Any) -> None:
        pass

    def _cpsat_diagnostics(self) -> dict[str, Any]:
        if self.inst is None:
            return {}
        r = self.result
        return {
            "cpsat_makespan": float("nan") if r.makespan is None else int(r.makespan),
            "cpsat_lower_bound": int(r.lower_bound),
            "cpsat_optimal": int(r.optimal),
            "cpsat_seconds": float(r.wall_time),
            "cpsat_fallback": int(self.fallback),
        }


class CPSATDispatchAgent(_CPSATAgentBase):
    """``cpsat`` on ``FJSP-v0``: CP-SAT at the first decision (on the instance of the observation), then the operations
    in CP-SAT start-time order on their CP-SAT machines (final makespan = CP-SAT's left-compressed makespan)."""

    def __init__(
        self,
        problem: Any,
        *,
        seed: Any = None,
        time_limit: float = 2.0,
        num_workers: int = 2,
        hint: Solution | str | None = "mwkr",
        redundant_cumulative: bool = False,
    ):
        super().__init__(
            problem,
            seed=seed,
            time_limit=time_limit,
            num_workers=num_workers,
            hint=hint,
            redundant_cumulative=redundant_cumulative,
        )
        self.order: np.ndarray | None = None
        self._i = 0

    def act(self, observation: dict) -> int:
        if self.order is None:
            self._solve(observation)
            ops = np.arange(self.inst.n_ops)
            # a job predecessor always starts strictly earlier (positive times), so this order is legal
            self.order = ops[np.lexsort((ops, self.start))]
        scheduled = observation["scheduled"]
        while self._i < self.order.size and scheduled[self.order[self._i]]:
            self._i += 1
        if self._i >= self.order.size:
            raise ValueError("cpsat: every operation is already scheduled")
        o = int(self.order[self._i])
        j = int(self.inst.op_job[o])
        if int(observation["next_op"][j]) != o:
            raise ValueError(
                f"cpsat: the observation's next operation of job {j} is "
                f"{int(observation['next_op'][j])}, the replay expects {o} (was the env reset "
                f"on another instance?)"
            )
        return j * self.M + int(self.solution.assign[o])

    def diagnostics(self) -> dict[str, Any]:
        return self._cpsat_diagnostics()


class CPSATReferenceAgent(_CPSATAgentBase):
    """``cpsat`` on ``FJSPImprove-v0``: a reference line; CP-SAT's makespan in ``diagnostics()["makespan"]``,
    the env's solution kept unchanged (each step restores the current archive slot)."""

    def __init__(
        self,
        problem: Any,
        *,
        seed: Any = None,
        oracle: Any = None,
        time_limit: float = 2.0,
        num_workers: int = 2,
        hint: Solution | str | None = "mwkr",
        redundant_cumulative: bool = False,
    ):
        super().__init__(
            problem,
            seed=seed,
            time_limit=time_limit,
            num_workers=num_workers,
            hint=hint,
            redundant_cumulative=redundant_cumulative,
        )
        self._restore0 = self.N * (self.N + self.M)

    def act(self, observation: dict) -> int:
        self._solve(observation)
        return self._restore0 + int(observation["current_slot"][0])

    def diagnostics(self) -> dict[str, Any]:
        if self.inst is None:
            return {}
        return {"makespan": int(self.makespan), **self._cpsat_diagnostics()}
