"""``papergym check FILE.py:ATTR --to ID``: the conformance test a submitter runs before submitting.

It runs the submitted agent (for an environment id) or solver (for a task id) **in this process, not
sandboxed** -- it is the submitter's own code on their own machine -- through the same hosting code the
board's sandbox child uses (:class:`~papergym.leaderboard.board._sandbox_child.AgentHost`, the public
problem rebuilt from the channel's codec, the solver's problem as namespaces with its callables) and the
same evaluator (:func:`~papergym.leaderboard.board.evaluate.play`,
:func:`~papergym.leaderboard.board.evaluate.evaluate_solver`). Checks, in order:

1. ``static`` -- the file parses, ``ATTR`` is defined at its top level
   (:func:`~papergym.leaderboard.board.sandbox.check_entry_statically`) and it does not import papergym
   outside a ``try`` (the sandbox does not provide papergym);
2. ``import`` -- the file imports and ``ATTR`` resolves to a callable of the right kind: an agent
   factory / class ``ATTR(problem, *, seed, **hp)`` (or ``seeds=[...]``, batched) for an environment, a
   solver class / factory ``ATTR(*, seed, **hp)`` with ``solve`` for a task;
3. ``protocol`` -- built on the env / task with its defaults, one short episode (at most
   :data:`PROTOCOL_HORIZON` rounds) / one solve of the first public instance, on the first seed: every
   action accepted by the env's own check (``validate_action``: shape, NaN, bounds), the solution
   sendable through the sandbox's channel and accepted by the task's evaluator, no exception, a finite
   metric;
4. ``determinism`` -- the same seed twice gives identical actions and rewards (agents) or identical
   solutions (solvers); a different seed may differ;
5. ``run`` -- a short run with the board's configuration (:func:`~papergym.leaderboard.board.configs.board_config`)
   and the metric the board ranks, per seed: by default on the board's public validation split (the
   first :data:`VALIDATION_SEEDS` instances of each stratum, drawn from
   :data:`~papergym.leaderboard.board.evaluate.VALIDATION_KEY`: what ``papergym submit --split validation``
   plays), or on the public seeds given (``seeds``). ``quick`` (the default) caps an env's horizon at
   :data:`QUICK_HORIZON` and a task run at its first :data:`QUICK_STRATA` strata (the solve budget is the
   board's);
6. a closing note on what the board's evaluation adds.

A check that cannot run because an earlier one failed is reported as skipped.
"""

from __future__ import annotations

import ast
import contextlib
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "CHECKS",
    "NOTE",
    "PROTOCOL_HORIZON",
    "QUICK_HORIZON",
    "QUICK_STRATA",
    "VALIDATION_SEEDS",
    "CheckReport",
    "CheckResult",
    "run_checks",
]

CHECKS = ("static", "import", "protocol", "determinism", "run")
#: rounds of the protocol and determinism episodes (an env whose default horizon is shorter keeps it)
PROTOCOL_HORIZON = 100
#: with ``quick``, the horizon of the short run is capped at this many rounds
QUICK_HORIZON = 1000
#: with ``quick``, a task's short run solves the instances of its first this many strata only
QUICK_STRATA = 3
#: instances per stratum of the default short run (the first ones of the public validation split)
VALIDATION_SEEDS = 3
#: run statuses of a valid submission: ``diverged`` is the solver's failure on one instance (scored with the
#: task's failure value, as the board does), not a broken protocol, so ``check`` reports it without failing
SCORED_STATUSES = ("ok", "diverged")
NOTE = (
    "note: the board runs the file in its sandbox (no network, no papergym import, time / memory / CPU "
    "limits per call and per submission) on hidden test seeds and instances with the full horizon / "
    "budget; this check ran it in-process, unsandboxed, on public seeds only."
)


@dataclass
class CheckResult:
    """One check: ``status`` is ``"pass"``, ``"fail"`` or ``"skip"`` (an earlier check failed)."""

    name: str
    status: str
    detail: str

    def line(self) -> str:
        return f"{self.status.upper():<4} {self.name:<12} {self.detail}"


@dataclass
class CheckReport:
    """The outcome of :func:`run_checks`: the checks in order, the short run's rows (``stratum``,
    ``seed``, ``status``, ``metric``, ``value``, ``error``) and how it was run."""

    entry: str
    benchmark_id: str
    kind: str  # "agent" | "solver"
    checks: list[CheckResult] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    metric: str = ""
    direction: str = ""
    quick: bool = True

    @property
    def passed(self) -> bool:
        return len(self.checks) == len(CHECKS) and all(c.status == "pass" for c in self.checks)

    def as_dict(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "benchmark": self.benchmark_id,
            "kind": self.kind,
            "in_process": True,
            "quick": self.quick,
            "metric": self.metric,
            "direction": self.direction,
            "passed": self.passed,
            "checks": [{"name": c.name, "status": c.status, "detail": c.detail} for c in self.checks],
            "runs": [dict(r) for r in self.runs],
            "note": NOTE,
        }

    def format(self) -> str:
        out = [f"papergym check {self.entry} --to {self.benchmark_id} ({self.kind}; run in-process, not sandboxed)"]
        for c in self.checks:
            out.append(c.line())
            if c.name == "run" and self.runs:
                width = max(len(str(r["stratum"])) for r in self.runs)
                for r in self.runs:
                    value = "-" if r["value"] is None else f"{r['value']:.6g}"
                    tail = "" if r["status"] == "ok" else f"  [{r['status']}: {r['error']}]"
                    out.append(
                        f"       {r['stratum']!s:<{width}}  seed {r['seed']!s:<11} {self.metric} = {value}{tail}"
                    )
        n_pass = sum(c.status == "pass" for c in self.checks)
        failed = [c.name for c in self.checks if c.status == "fail"]
        out.append(
            f"{n_pass} of {len(CHECKS)} checks passed"
            + (f"; failed: {', '.join(failed)}" if failed else "; ready to submit")
        )
        out.append(NOTE)
        return "\n".join(out)


# ------------------------------------------------------------------------------------------- helpers
def _short(text: Any, limit: int = 400) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[:limit] + " [...]"


def _unguarded_papergym_imports(tree: ast.AST) -> list[int]:
    """Lines of ``import papergym...`` not inside a ``try`` (a guarded import is a local convenience)."""
    lines: list[int] = []

    def walk(node: ast.AST, guarded: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and not guarded:
                names = [a.name for a in child.names] if isinstance(child, ast.Import) else [child.module or ""]
                if any(n == "papergym" or n.startswith("papergym.") for n in names):
                    lines.append(child.lineno)
            walk(child, guarded or isinstance(child, ast.Try))

    walk(tree, False)
    return lines


def _describe(obj: Any) -> str:
    """What was found at ``ATTR``, for error messages."""
    import inspect

    if isinstance(obj, type):
        methods = [m for m in ("act", "update", "solve") if callable(getattr(obj, m, None))]
        return f"class {obj.__name__}" + (
            f" (with {', '.join(m + '()' for m in methods)})" if methods else " (with none of act(), update(), solve())"
        )
    if callable(obj):
        try:
            sig = str(inspect.signature(obj))
        except (TypeError, ValueError):
            sig = "(...)"
        return f"function {getattr(obj, '__name__', type(obj).__name__)}{sig}"
    return f"{type(obj).__name__} {_short(repr(obj), 60)}"


def _is_agent(obj: Any) -> bool:
    from papergym.agents.base import Agent

    return isinstance(obj, Agent)  # act() and update(): the per-run and the batched protocol alike


def _is_solver(obj: Any) -> bool:
    from papergym.agents.base import Solver

    return isinstance(obj, Solver)


def _kind_error(factory: Any, attr: str, kind: str, benchmark_id: str) -> str | None:
    """Why ``factory`` is not an agent factory (``kind="agent"``) / solver factory (``"solver"``) as the
    board calls it, naming what was found; ``None`` when it is one."""
    import inspect

    from papergym.leaderboard.board import _sandbox_child as child

    found = _describe(factory)
    if not callable(factory):
        return f"{attr} is a {found}, not callable: expected " + (
            "an agent factory or class" if kind == "agent" else "a solver class or factory"
        )
    if kind == "agent":
        if isinstance(factory, type) and not _is_agent(factory):
            what = "a solver class" if _is_solver(factory) else "not an agent class"
            return (
                f"{attr} is {found}: {what}; {benchmark_id} is an environment and needs an agent "
                "(act(observation), update(action, reward, observation))"
            )
        call = "seeds=[0]" if child.accepts(factory, "seeds") else "seed=0"
        try:
            inspect.signature(factory).bind(object(), **({"seeds": [0]} if call == "seeds=[0]" else {"seed": 0}))
        except TypeError as exc:
            return (
                f"{attr} is {found}, which cannot be called as {attr}(problem, {call}) ({exc}): "
                f"{benchmark_id} is an environment; the board calls an agent factory as "
                f"{attr}(problem, seed=..., **hp) (or seeds=[...] for a batched agent)"
            )
        except ValueError:  # no signature (a builtin): the protocol check decides
            pass
        return None
    if isinstance(factory, type) and not _is_solver(factory):
        what = "an agent class" if _is_agent(factory) else "not a solver class"
        return (
            f"{attr} is {found}: {what}; {benchmark_id} is a solver task and needs a solver "
            "(solve(problem, budget, report))"
        )
    kw = {"seed": 0} if child.accepts(factory, "seed") else {}
    try:
        inspect.signature(factory).bind(**kw)
    except TypeError as exc:
        return (
            f"{attr} is {found}, which cannot be called as {attr}({'seed=0' if kw else ''}) ({exc}): "
            f"{benchmark_id} is a solver task; the board builds a solver as {attr}(seed=..., **hp)"
        )
    except ValueError:
        pass
    return None


def _same(a: Any, b: Any) -> bool:
    """Whether two solutions (or action / reward traces) are identical: mappings and sequences element by
    element, arrays exactly (NaN equal to NaN), anything else by ``==``."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "detach") and hasattr(a, "numpy"):  # torch tensors
        a = a.detach().cpu().numpy()
    if hasattr(b, "detach") and hasattr(b, "numpy"):
        b = b.detach().cpu().numpy()
    if isinstance(a, (np.ndarray, np.generic, float, int)) and isinstance(b, (np.ndarray, np.generic, float, int)):
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape:
            return False
        if x.dtype.kind in "fc" or y.dtype.kind in "fc":
            return bool(np.array_equal(x, y, equal_nan=True))
        return bool(np.array_equal(x, y))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an object without a usable ==: compare what it shows
        return repr(a) == repr(b)


def _finite(v: Any) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


# --------------------------------------------------------------------------------------- agent side
class _RecordingAgentSession:
    """:class:`~papergym.leaderboard.board.sandbox.InProcessAgentSession` that checks what the factory
    built and records the rewards it is given and the actions it returns."""

    def __init__(self, factory: Callable[..., Any], attr: str):
        from papergym.leaderboard.board.sandbox import InProcessAgentSession

        self.inner = InProcessAgentSession(factory)
        self.attr = attr
        self.actions: list[np.ndarray] = []
        self.rewards: list[np.ndarray] = []

    def start(self, problem: Mapping[str, Any], seeds: Sequence[Any], hyperparameters: Mapping[str, Any]) -> None:
        from papergym.leaderboard.board.sandbox import SandboxError

        self.inner.start(problem, seeds, hyperparameters)
        host = self.inner.host
        built = [host.agent] if host.batched else host.agents
        call = f"{self.attr}(problem, seeds=[...])" if host.batched else f"{self.attr}(problem, seed=...)"
        for obj in built:
            if not _is_agent(obj):
                raise SandboxError(
                    "error",
                    f"{call} returned {_describe(obj)}, not an agent: it needs "
                    "act(observation) and update(action, reward, observation)",
                )

    def step(self, observations: Any, rewards: np.ndarray | None, active: np.ndarray):
        if rewards is not None:
            self.rewards.append(np.array(rewards, dtype=float, copy=True))
        actions, failed = self.inner.step(observations, rewards, active)
        self.actions.append(np.array(actions, copy=True))
        return actions, failed

    def close(self) -> Any:
        return self.inner.close()


def _env_horizon(env_id: str, env_kwargs: Mapping[str, Any], seed: int) -> int:
    """The horizon of ``env_id`` built with ``env_kwargs`` (reset on ``seed``)."""
    import gymnasium as gym

    import papergym.envs as penvs

    spec = gym.spec(penvs.check_env_id(env_id))
    env = gym.envs.registration.load_env_creator(spec.entry_point)(**dict(env_kwargs))
    try:
        env.reset(seed=int(seed))
        return int(env.problem.horizon)
    finally:
        env.close()


def _play_capped(
    env_id: str,
    env_kwargs: Mapping[str, Any],
    cap: int,
    env_seeds: Sequence[int],
    session: Any,
    agent_seeds: Sequence[int],
    hp: Mapping[str, Any],
) -> tuple[list[dict[str, Any]], int, int]:
    """:func:`~papergym.leaderboard.board.evaluate.play` with the horizon capped at ``cap`` rounds (an env
    whose horizon is fixed by its instance keeps it): ``(runs, horizon played, horizon of the board)``."""
    from papergym.leaderboard.board.evaluate import play

    kwargs = dict(env_kwargs)
    full = int(kwargs["horizon"]) if kwargs.get("horizon") is not None else _env_horizon(env_id, kwargs, env_seeds[0])
    played = full
    if full > cap:
        try:
            _env_horizon(env_id, {**kwargs, "horizon": cap}, env_seeds[0])
            kwargs["horizon"], played = cap, cap
        except ValueError:  # the env fixes its horizon (one decision per operation): play it in full
            pass
    runs = play(env_id, kwargs, list(env_seeds), session, list(agent_seeds), dict(hp))
    return runs, played, full


def _agent_protocol(
    env_id: str, factory: Any, attr: str, seed: int, hp: Mapping[str, Any]
) -> tuple[CheckResult, _RecordingAgentSession | None]:
    session = _RecordingAgentSession(factory, attr)
    runs, T, _ = _play_capped(env_id, {}, PROTOCOL_HORIZON, [seed], session, [seed], hp)
    r = runs[0]
    if r["status"] != "ok":
        what = "an action the env refused" if r["status"] == "invalid_action" else r["status"]
        return CheckResult(
            "protocol", "fail", f"{what} in the {T}-round episode on seed {seed}: {_short(r['error'])}"
        ), None
    value = r["metrics"].get("regret")
    if not _finite(value):
        return CheckResult(
            "protocol", "fail", f"the episode on seed {seed} ended with a non-finite regret ({value})"
        ), None
    return CheckResult(
        "protocol",
        "pass",
        f"{T}-round episode of {env_id} (default instance) on seed {seed}: "
        f"{len(session.actions)} actions accepted by the env, no exception, "
        f"regret {float(value):.6g}",
    ), session


def _agent_determinism(
    env_id: str, factory: Any, attr: str, seed: int, hp: Mapping[str, Any], first: _RecordingAgentSession
) -> CheckResult:
    again = _RecordingAgentSession(factory, attr)
    runs, _, _ = _play_capped(env_id, {}, PROTOCOL_HORIZON, [seed], again, [seed], hp)
    if runs[0]["status"] != "ok":
        return CheckResult(
            "determinism",
            "fail",
            f"the second episode on seed {seed} ended {runs[0]['status']}: {_short(runs[0]['error'])}",
        )
    n = min(len(first.actions), len(again.actions))
    for t in range(n):
        if not _same(first.actions[t], again.actions[t]):
            return CheckResult(
                "determinism",
                "fail",
                f"seed {seed} twice: the actions differ at round {t + 1} "
                f"({_short(first.actions[t][0], 80)} vs "
                f"{_short(again.actions[t][0], 80)}); draw randomness only "
                "from numpy.random.default_rng(seed), never from the global "
                "np.random / random state or the clock",
            )
    if len(first.actions) != len(again.actions) or not _same(first.rewards, again.rewards):
        return CheckResult(
            "determinism",
            "fail",
            f"seed {seed} twice: the episodes differ ({len(first.actions)} vs {len(again.actions)} actions)",
        )
    return CheckResult(
        "determinism", "pass", f"seed {seed} twice: identical {n} actions and rewards (a different seed may differ)"
    )


def _agent_run(
    env_id: str,
    cfg: Any,
    factory: Any,
    attr: str,
    seeds: Sequence[int] | None,
    quick: bool,
    hp: Mapping[str, Any],
    report: CheckReport,
    progress: Callable[[str], None] | None,
) -> CheckResult:
    from papergym.leaderboard.board.configs import stratum_seeds
    from papergym.leaderboard.board.evaluate import VALIDATION_KEY

    k = min(VALIDATION_SEEDS, int(cfg.seeds))
    horizons: set[tuple[int, int]] = set()
    for stratum, kwargs in cfg.strata.items():
        env_kwargs = dict(kwargs)
        if cfg.horizon is not None:
            env_kwargs["horizon"] = cfg.horizon
        if seeds is not None:
            env_seeds, agent_seeds, labels = list(seeds), list(seeds), [str(s) for s in seeds]
        else:
            env_seeds = stratum_seeds(env_id, stratum, "env", k, VALIDATION_KEY)
            agent_seeds = stratum_seeds(env_id, stratum, "agent", k, VALIDATION_KEY)
            labels = [f"validation/{i}" for i in range(k)]
        if progress:
            progress(f"{env_id} / {stratum}: {len(env_seeds)} runs")
        session = _RecordingAgentSession(factory, attr)
        runs, T, full = _play_capped(
            env_id, env_kwargs, QUICK_HORIZON if quick else sys.maxsize, env_seeds, session, agent_seeds, hp
        )
        horizons.add((T, full))
        for label, r in zip(labels, runs):
            value = r["metrics"].get(cfg.metric) if r["status"] == "ok" else None
            report.runs.append(
                {
                    "stratum": stratum,
                    "seed": label,
                    "status": r["status"],
                    "metric": cfg.metric,
                    "value": float(value) if _finite(value) else None,
                    "error": _short(r["error"]) if r["error"] else None,
                }
            )
    where = (
        f"public seeds {', '.join(map(str, seeds))}"
        if seeds is not None
        else f"the board's public validation split (first {k} instances of each stratum)"
    )
    shortened = sorted({f"{full} -> {T}" for T, full in horizons if T < full})
    how = (
        f"quick: horizon {', '.join(shortened)}"
        if shortened
        else f"horizon {', '.join(str(T) for T in sorted({T for T, _ in horizons}))} (the board's)"
    )
    return _run_result(
        report,
        f"{len(cfg.strata)} strata x {len(report.runs) // max(1, len(cfg.strata))} "
        f"runs on {where}; {how}; ranked metric {cfg.metric} ({cfg.direction})",
    )


# -------------------------------------------------------------------------------------- solver side
def _solver_session_class() -> type:
    from papergym.leaderboard.board.public import roundtrip
    from papergym.leaderboard.board.sandbox import InProcessSolverSession, SandboxError

    def sendable(value: Any, what: str) -> Any:
        try:
            return roundtrip({"v": value})["v"]
        except TypeError as exc:
            raise SandboxError(
                "error",
                f"the {what} cannot be sent out of the sandbox: {exc} (use numbers, "
                "strings, lists, dicts and numpy arrays)",
            ) from None

    class RecordingSolverSession(InProcessSolverSession):
        """In-process solver session whose reported and returned solutions go through the sandbox channel's
        codec (what a sandboxed solution must survive), the returned ones recorded."""

        def __init__(self, factory: Callable[..., Any]):
            super().__init__(factory)
            self.solutions: list[Any] = []

        def solve(
            self,
            problem: Any,
            callables: Any,
            budget: Any,
            hyperparameters: Any,
            seed: Any,
            *,
            report: Callable[..., None],
            timeout: float,
        ) -> tuple[Any, float]:
            def rep(solution: Any, iteration: Any = None, work: Any = None) -> None:
                report(sendable(solution, "reported solution"), iteration, work)

            solution, seconds = super().solve(
                problem, callables, budget, hyperparameters, seed, report=rep, timeout=timeout
            )
            solution = sendable(solution, "solution")
            self.solutions.append(solution)
            return solution, seconds

    return RecordingSolverSession


def _first_instance(task: Any, seed: int) -> Any:
    refs = list(task.instances("dev"))
    for ref in refs:
        if int(ref.seed) == int(seed):
            return ref
    return refs[0]


def _solve_once(task: Any, ref: Any, factory: Any, seed: int, hp: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    from papergym.leaderboard.board.evaluate import evaluate_solver

    sessions: list[Any] = []
    cls = _solver_session_class()

    def make() -> Any:
        sessions.append(cls(factory))
        return sessions[-1]

    run = evaluate_solver(task, [ref], make, dict(hp), [seed])[0]
    sols = [s for sess in sessions for s in sess.solutions]
    return run, (sols[-1] if sols else None)


def _solver_protocol(
    task_id: str, factory: Any, attr: str, seed: int, hp: Mapping[str, Any]
) -> tuple[CheckResult, Any]:
    from papergym.envs.tasks.base import make_task
    from papergym.leaderboard.board import _sandbox_child as child

    try:
        built = child.make_solver(factory, seed, dict(hp))
    except Exception as exc:  # noqa: BLE001 - the submitter's constructor: name what it raised
        return CheckResult(
            "protocol", "fail", f"building {attr}(seed={seed}) raised {type(exc).__name__}: {_short(exc)}"
        ), None
    if not _is_solver(built):
        return CheckResult(
            "protocol",
            "fail",
            f"{attr}(seed={seed}) returned {_describe(built)}, not a solver: it needs solve(problem, budget, report)",
        ), None
    task = make_task(task_id)
    ref = _first_instance(task, seed)
    run, solution = _solve_once(task, ref, factory, seed, hp)
    primary = task.primary
    if run["status"] not in SCORED_STATUSES:
        return CheckResult(
            "protocol", "fail", f"solving {ref.name} (seed {seed}) ended {run['status']}: {_short(run['error'])}"
        ), None
    value = run["metrics"].get(primary)
    if not _finite(value):
        return CheckResult(
            "protocol", "fail", f"{ref.name}: the task's metric {primary} of the solution is not finite ({value})"
        ), None
    secs = run.get("seconds")
    note = (
        " (the run diverged: the board scores it with the failure value, like a timeout)"
        if run["status"] == "diverged"
        else ""
    )
    return CheckResult(
        "protocol",
        "pass",
        f"solved {ref.name} of {task_id} (default task) with seed {seed}"
        + (f" in {secs:.3g} s" if _finite(secs) else "")
        + f": the solution passes the channel and the task's evaluator, "
        f"{primary} = {float(value):.6g}{note}",
    ), (task, ref, solution)


def _solver_determinism(factory: Any, seed: int, hp: Mapping[str, Any], first: Any) -> CheckResult:
    task, ref, solution = first
    run, again = _solve_once(task, ref, factory, seed, hp)
    if run["status"] not in SCORED_STATUSES:
        return CheckResult(
            "determinism",
            "fail",
            f"the second solve of {ref.name} (seed {seed}) ended {run['status']}: {_short(run['error'])}",
        )
    if not _same(solution, again):
        return CheckResult(
            "determinism",
            "fail",
            f"{ref.name} with seed {seed} twice: the solutions differ; draw "
            "randomness only from numpy.random.default_rng(seed) (never "
            "the global np.random / random state) and do not stop on "
            "wall-clock time",
        )
    return CheckResult(
        "determinism", "pass", f"{ref.name} with seed {seed} twice: identical solutions (a different seed may differ)"
    )


def _solver_run(
    task_id: str,
    cfg: Any,
    factory: Any,
    seeds: Sequence[int] | None,
    quick: bool,
    hp: Mapping[str, Any],
    report: CheckReport,
    progress: Callable[[str], None] | None,
) -> CheckResult:
    from papergym.envs.tasks.base import make_task
    from papergym.leaderboard.board.evaluate import (
        VALIDATION_KEY,
        evaluate_solver,
        task_plan,
    )

    task = make_task(task_id, **dict(cfg.task_kwargs))
    report.metric = cfg.metric or task.primary
    report.direction = cfg.direction or task.metrics.get(report.metric, "")
    if seeds is not None:
        plan = [
            (ref, ref.name.rsplit("/", 1)[0], str(ref.seed), int(ref.seed))
            for ref in task.instances("dev")
            if int(ref.seed) in set(seeds)
        ]
        if not plan:
            valid = sorted({int(r.seed) for r in task.instances("dev")})
            return CheckResult(
                "run",
                "fail",
                f"no public instance of {task_id} has seed "
                f"{', '.join(map(str, seeds))}; its public seeds: "
                f"{', '.join(map(str, valid))}",
            )
        where = f"public seeds {', '.join(map(str, seeds))}"
    else:
        plan = [
            (ref, st, f"validation/{i}", seed)
            for ref, st, i, seed in task_plan(task, task_id, VALIDATION_KEY)
            if i < VALIDATION_SEEDS
        ]
        where = f"the board's public validation split (first {VALIDATION_SEEDS} instances of each stratum)"
    strata = list(dict.fromkeys(p[1] for p in plan))
    how = "budget: the board's"
    if quick and len(strata) > QUICK_STRATA:
        plan = [p for p in plan if p[1] in strata[:QUICK_STRATA]]
        how = f"quick: the first {QUICK_STRATA} of {len(strata)} strata; " + how
    if progress:
        progress(f"{task_id}: {len(plan)} instances")
    cls = _solver_session_class()
    runs = evaluate_solver(task, [p[0] for p in plan], lambda: cls(factory), dict(hp), [p[3] for p in plan])
    for (_ref, st, label, _), r in zip(plan, runs):
        value = r["metrics"].get(report.metric)
        report.runs.append(
            {
                "stratum": st,
                "seed": label,
                "status": r["status"],
                "metric": report.metric,
                "value": float(value) if _finite(value) else None,
                "error": _short(r["error"]) if r["error"] else None,
            }
        )
    summary = f"{len(plan)} instances on {where}; {how}; ranked metric {report.metric} ({report.direction})"
    success = getattr(cfg, "profile_success", "")
    if success and all(success in r["metrics"] for r in runs):  # information for the submitter, not a failure
        n_ok = sum(float(r["metrics"][success]) >= 1 for r in runs)
        summary += f"; {n_ok} of {len(runs)} solves count as solved ({success})"
    return _run_result(report, summary)


def _run_result(report: CheckReport, summary: str) -> CheckResult:
    bad = [r for r in report.runs if r["status"] not in SCORED_STATUSES]
    if bad:
        r = bad[0]
        return CheckResult(
            "run",
            "fail",
            f"{len(bad)} of {len(report.runs)} runs failed (first: {r['stratum']} seed "
            f"{r['seed']}: {r['status']}: {r['error']}); {summary}",
        )
    diverged = [r for r in report.runs if r["status"] == "diverged"]
    if diverged:  # the solver's honest failure on an instance, not a broken submission: reported, not failed
        r = diverged[0]
        summary += (
            f"; {len(diverged)} of {len(report.runs)} runs diverged (first: {r['stratum']} seed {r['seed']}), "
            "scored with the failure value as the board would"
        )
    return CheckResult("run", "pass", summary)


# ---------------------------------------------------------------------------------------------- main
def _resolve(benchmark_id: str) -> str:
    """``"agent"`` or ``"solver"`` for a benchmark with a board; ``ValueError`` naming the valid ids."""
    from papergym.envs.tasks.base import list_tasks
    from papergym.leaderboard.board.configs import NO_BOARD, board_ids

    if benchmark_id in NO_BOARD:
        raise ValueError(f"--to: {benchmark_id} has no leaderboard: {NO_BOARD[benchmark_id]}")
    ids = board_ids()
    if benchmark_id not in ids:
        raise ValueError(f"--to: unknown environment or task {benchmark_id!r}; valid: {', '.join(ids)}")
    return "solver" if benchmark_id in list_tasks() else "agent"


def run_checks(
    entry: str,
    benchmark_id: str,
    *,
    seeds: Sequence[int] | None = None,
    quick: bool = True,
    hyperparameters: Mapping[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> CheckReport:
    """Run the checks of the module docstring on ``entry`` (``"FILE.py:ATTR"``) for ``benchmark_id``.

    The submitted code runs in this process, unsandboxed (its prints go to stderr). ``seeds``: the
    public seeds of the protocol / determinism checks (the first) and of the short run (default: seed 0,
    and the board's validation split). A malformed entry, a missing file, an unknown id or a benchmark
    without a board is a ``ValueError`` (or ``FileNotFoundError``) before anything runs; everything the
    submitted code does is a failed check in the returned :class:`CheckReport`."""
    from papergym.leaderboard.board import _sandbox_child as child
    from papergym.leaderboard.board.configs import board_config
    from papergym.leaderboard.board.sandbox import check_entry_statically, load_entry

    kind = _resolve(benchmark_id)
    path, attr = load_entry(entry)
    if seeds is not None:
        seeds = [int(s) for s in seeds]
        if not seeds or any(s < 0 for s in seeds):
            raise ValueError(f"seeds must be a non-empty list of non-negative integers, got {seeds!r}")
    hp = dict(hyperparameters or {})
    cfg = board_config(benchmark_id)
    report = CheckReport(
        entry=entry,
        benchmark_id=benchmark_id,
        kind=kind,
        quick=quick,
        metric=getattr(cfg, "metric", "") or "",
        direction=getattr(cfg, "direction", "") or "",
    )

    def skip_rest() -> CheckReport:
        for name in CHECKS[len(report.checks) :]:
            report.checks.append(CheckResult(name, "skip", "not run: an earlier check failed"))
        return report

    # 1. static
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError as exc:
        report.checks.append(CheckResult("static", "fail", f"{path.name} does not parse: line {exc.lineno}: {exc.msg}"))
        return skip_rest()
    try:
        check_entry_statically(path, attr)
    except ValueError as exc:
        report.checks.append(CheckResult("static", "fail", str(exc)))
        return skip_rest()
    lines = _unguarded_papergym_imports(tree)
    if lines:
        report.checks.append(
            CheckResult(
                "static",
                "fail",
                f"{path.name} imports papergym (line "
                f"{', '.join(map(str, lines))}), which the board's "
                "sandbox does not provide: a submission must be "
                "self-contained (numpy, scipy, torch, ...)",
            )
        )
        return skip_rest()
    report.checks.append(
        CheckResult("static", "pass", f"{path.name} parses; {attr.split('.')[0]} is defined at its top level")
    )
    seed = seeds[0] if seeds is not None else 0
    with contextlib.redirect_stdout(sys.stderr):  # the submission's prints, as in the sandbox
        # 2. import
        try:
            factory = child._Child(None, str(path), attr).load()
        except child.HostedError as exc:
            tb = exc.traceback.strip().splitlines()
            where = f" ({tb[-2].strip()})" if len(tb) >= 2 else ""
            report.checks.append(
                CheckResult(
                    "import",
                    "fail",
                    f"importing {path.name} and resolving {attr}: {exc.type}: {_short(exc.message)}{where}",
                )
            )
            return skip_rest()
        why = _kind_error(factory, attr, kind, benchmark_id)
        if why is not None:
            report.checks.append(CheckResult("import", "fail", why))
            return skip_rest()
        report.checks.append(
            CheckResult(
                "import",
                "pass",
                f"{attr} is {_describe(factory)}: "
                + (
                    "a batched agent factory"
                    if kind == "agent" and child.accepts(factory, "seeds")
                    else f"an {kind} factory"
                    if kind == "agent"
                    else "a solver factory"
                ),
            )
        )
        # 3. protocol, 4. determinism, 5. run
        if kind == "agent":
            result, first = _agent_protocol(benchmark_id, factory, attr, seed, hp)
            report.checks.append(result)
            if first is None:
                return skip_rest()
            report.checks.append(_agent_determinism(benchmark_id, factory, attr, seed, hp, first))
            report.checks.append(_agent_run(benchmark_id, cfg, factory, attr, seeds, quick, hp, report, progress))
        else:
            result, first = _solver_protocol(benchmark_id, factory, attr, seed, hp)
            report.checks.append(result)
            if first is None:
                return skip_rest()
            report.checks.append(_solver_determinism(factory, seed, hp, first))
            report.checks.append(_solver_run(benchmark_id, cfg, factory, seeds, quick, hp, report, progress))
    return report
