"""Solver benchmarks on tasks: :func:`bench` (docs/getting-started.md, "Solver benchmarks").

A *solve cell* is (task id and code hash, task kwargs, instance, solver name and code hash,
hyperparameters, solver seed, budget). Its key is a SHA-256 of the canonical JSON of those fields.
Cells are pure; each finished cell is written at once, atomically, as one checksummed JSON file
``<out>/<task>/<solver>/<key>.json`` (metrics, anytime curve, meta; a damaged file is warned about and
recomputed, see :mod:`papergym.leaderboard.runner.cache`); a failed cell (``error``,
``timeout``, ``oom``, ``diverged``) writes ``<key>.error.json`` and is never cached, so a rerun tries it again.
An interrupted benchmark, rerun, computes only the missing cells. Executors as :func:`compare`:
``serial``, ``joblib`` (default), ``dask``; BLAS threads pinned to 1 in every solve.

One solve: the task builds ``(problem, evaluator)`` from the instance; the solver gets the public
problem, the :class:`~papergym.envs.tasks.base.Budget` and a ``report(solution, iteration=, work=)``
callback; every reported solution is scored by the evaluator with the scoring time excluded from the
solver's clock (anytime curves: metrics vs wall seconds, iterations, work). The returned solution is
scored last. Wall time is authoritative: a solve longer than ``budget.max_seconds`` is a ``timeout``
(it is not killed: hard limits come with the sandboxed evaluation of submissions). A solver that raises
:class:`~papergym.envs.tasks.base.BudgetExceeded` is a ``timeout`` at once; a run whose metrics (after
``finalize``) carry ``diverged = 1`` (:data:`DIVERGED_METRIC`: the task's evaluator saw a non-finite or exploding
objective) is ``diverged``. Both are the solver's honest failure on that instance: their metrics are kept and
scored by the task (its failure value, e.g. the PAR-2 cap), they count as failed runs in the tables, and
``papergym bench`` reports them without failing (exit status 0; only ``error`` / ``oom`` exit 1);
:class:`~papergym.envs.tasks.base.NotApplicable` (a solver without a rule for that kind of instance) leaves
no row at all. Where the task defines
``finalize(metrics, seconds, status, budget)`` it completes the metrics (e.g. PAR-2 seconds). An
evaluator's optional ``prepare()`` (e.g. computing a cached reference) runs before the clock starts; a task
with ``measure_memory = True`` also gets ``peak_rss_mb`` and ``solve_rss_mb`` (:meth:`AnytimeCurve.peak_rss`;
Linux: the ``VmHWM`` high-water mark, reset at the start and around every scoring).

Hyperparameter sweeps: ``sweep={"nystrom-lssvm": {"m": [10, 20, 50]}}`` runs one configuration per
value (labelled ``nystrom-lssvm[m=10]``, ...), on top of ``hyperparameters``. A task may declare its own sweep
(``task.solver_sweep() -> {name: values}``, e.g. ``DecentralizedBilevel-v0(step_size_grid=True)`` sweeps the
base step ``gamma``): it applies to every solver that takes that hyperparameter and that the caller did not
fix or sweep.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import logging
import math
import os
import sys
import time
import traceback
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from papergym.canonical import canonical_json as _canonical_json
from papergym.canonical import to_json_value

__all__ = ["bench", "BenchResult", "SolveCell", "run_solve", "resolve_task_kwargs", "solver_configs"]

logger = logging.getLogger(__name__)

BENCH_FORMAT = 1  # bump when the content of a solve-cell file changes


def _canon(obj: Any) -> Any:
    """JSON data of kwargs / hyperparameters (:func:`papergym.canonical.to_json_value`, ``"inf"`` rule)."""
    return to_json_value(obj, nonfinite="repr")


def canonical_json(obj: Any) -> str:
    """Compact canonical JSON of cell data (:func:`papergym.canonical.canonical_json`, ``"inf"`` rule)."""
    return _canonical_json(obj, nonfinite="repr")


def _module_hash(obj: Any) -> str:
    mod = sys.modules.get(getattr(obj, "__module__", ""))
    h = hashlib.sha256()
    try:
        with open(inspect.getsourcefile(mod), "rb") as fh:  # type: ignore[arg-type]
            h.update(fh.read())
    except (TypeError, OSError):
        h.update(repr(obj).encode())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class SolveCell:
    task_id: str
    task_hash: str
    task_kwargs: Mapping[str, Any]
    instance: Mapping[str, Any]
    solver: str
    solver_hash: str
    hyperparameters: Mapping[str, Any]
    seed: int
    budget: Mapping[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "task_hash": self.task_hash,
            "task_kwargs": _canon(self.task_kwargs),
            "instance": _canon(self.instance),
            "solver": self.solver,
            "solver_hash": self.solver_hash,
            "hyperparameters": _canon(self.hyperparameters),
            "seed": int(self.seed),
            "budget": _canon(self.budget),
            "format": BENCH_FORMAT,
        }

    @property
    def key(self) -> str:
        return hashlib.sha256(canonical_json(self.as_dict()).encode()).hexdigest()[:32]


# ------------------------------------------------------------------------------------------ one solve
def clean_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    """The numeric entries of an evaluator's metrics, as floats (others dropped)."""
    out = {}
    for k, v in metrics.items():
        try:
            out[str(k)] = float(v)
        except (TypeError, ValueError):
            continue
    return out


class AnytimeCurve:
    """The anytime curve of one solve, and the ``report`` callback a solver calls.

    ``curve(solution, iteration=None, work=None)`` scores the reported solution with the private
    ``evaluator`` at the solver's elapsed seconds; the time spent scoring is not the solver's and is
    excluded from the clock (:meth:`elapsed`). A solution the evaluator refuses is recorded as
    ``report_error = 1`` with its message, never fatal. ``start()`` (re)starts the clock.
    """

    def __init__(self, evaluator: Any, memory: bool = False):
        self.evaluator = evaluator
        self.points: list[dict[str, Any]] = []
        self.memory = memory
        self.start()

    def start(self) -> None:
        self._start = time.perf_counter()
        self.excluded = 0.0
        self.rss0 = _reset_peak_rss() if self.memory else None
        self._peak = 0.0

    def peak_rss(self) -> dict[str, float]:
        """``peak_rss_mb`` (the process' peak resident memory during the solve, scoring excluded) and
        ``solve_rss_mb`` (that peak minus the RSS when the clock started)."""
        peak = max(self._peak, _peak_rss_mb())
        return {"peak_rss_mb": peak, "solve_rss_mb": peak - self.rss0 if self.rss0 is not None else math.nan}

    def elapsed(self) -> float:
        return time.perf_counter() - self._start - self.excluded

    def __call__(self, solution: Any, iteration: Any = None, work: Any = None) -> None:
        t_now = time.perf_counter()
        if self.memory:
            self._peak = max(self._peak, _peak_rss_mb())
        point: dict[str, Any] = {"seconds": t_now - self._start - self.excluded, "iteration": iteration, "work": work}
        try:
            point.update(clean_metrics(self.evaluator.evaluate(solution)))
        except Exception as exc:  # noqa: BLE001 - a malformed intermediate solution: recorded, not fatal
            point.update({"message": str(exc)[:500], "report_error": 1.0})
        self.points.append(point)
        if self.memory:  # the scoring's memory is not the solver's
            _reset_peak_rss()
        self.excluded += time.perf_counter() - t_now


def _reset_peak_rss() -> float | None:
    """Reset the process' resident-memory high-water mark (Linux: ``5`` to ``/proc/self/clear_refs``); returns
    the current RSS in MB, or None where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return _proc_status_mb("VmRSS")
    except OSError:
        return None


def _proc_status_mb(field: str) -> float | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return float(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def _peak_rss_mb() -> float:
    """Peak RSS in MB since the last :func:`_reset_peak_rss` (Linux ``VmHWM``), else the process' lifetime
    peak (``ru_maxrss``, an upper bound)."""
    peak = _proc_status_mb("VmHWM")
    if peak is not None:
        return peak
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024.0 * 1024.0) if sys.platform == "darwin" else r / 1024.0


#: the metric a task's evaluator (or ``finalize``) sets to 1.0 for a run that diverged (non-finite or exploding
#: objective, or one that left the task's accuracy gate); 0.0 otherwise
DIVERGED_METRIC = "diverged"


def is_diverged(metrics: Mapping[str, Any]) -> bool:
    """Whether ``metrics`` report a diverged run (:data:`DIVERGED_METRIC` >= 0.5; a NaN or missing value is not)."""
    v = metrics.get(DIVERGED_METRIC) if isinstance(metrics, Mapping) else None
    try:
        return v is not None and float(v) >= 0.5
    except (TypeError, ValueError):
        return False


def run_solve(
    task_id: str,
    task_kwargs: Mapping[str, Any],
    instance: Mapping[str, Any],
    solver: str,
    hyperparameters: Mapping[str, Any],
    seed: int,
    budget: Mapping[str, Any],
    registration: Any = None,
) -> dict[str, Any]:
    """Run one solve cell. Pure; never raises for a failing solver (the status says what happened).

    ``registration``: the solver's :class:`~papergym.agents.base.SolverInfo` when it was registered outside
    papergym's packages (a script, or ``papergym bench --solvers FILE.py:ATTR``); a worker process that does not
    know the name registers it from there (the executors pickle it with cloudpickle)."""
    from threadpoolctl import threadpool_limits

    from papergym.agents.base import make_solver
    from papergym.envs.tasks.base import Budget, BudgetExceeded, InstanceRef, NotApplicable, make_task

    with threadpool_limits(limits=1):
        task = make_task(task_id, **task_kwargs)
        ref = InstanceRef.from_dict(instance)
        bud = Budget(**budget)
        problem, evaluator = task.make(ref)
        if hasattr(evaluator, "prepare"):  # e.g. a cached reference, outside the solver's clock and memory
            evaluator.prepare()
        memory = bool(getattr(task, "measure_memory", False))
        report = AnytimeCurve(evaluator, memory=memory)
        status, err, tb = "ok", "", ""
        metrics: dict[str, float] = {}
        meta: dict[str, Any] = {}
        try:
            if registration is not None:
                _ensure_solver_registered(registration, task_id)
            slv = make_solver(solver, task_id, seed=seed, **hyperparameters)
            given = problem
            if hasattr(
                evaluator, "reference_problem"
            ):  # privileged view (e.g. the true subspace): reference lines only
                from papergym.agents.base import get_solver_info

                if get_solver_info(solver, task_id).role == "reference":
                    given = evaluator.reference_problem()
            report.start()
            solution = slv.solve(given, bud, report)
            seconds = report.elapsed()
            mem = report.peak_rss() if memory else {}
            if isinstance(solution, Mapping) and isinstance(solution.get("meta"), Mapping):
                meta = dict(solution["meta"])
            metrics = clean_metrics(evaluator.evaluate(solution))
            metrics.update(mem)
            if bud.max_seconds is not None and seconds > bud.max_seconds:
                status, err = "timeout", f"took {seconds:.1f} s > budget {bud.max_seconds} s"
        except BudgetExceeded as exc:
            seconds = report.elapsed()
            status, err = "timeout", f"BudgetExceeded: {exc}"
        except NotApplicable as exc:  # the solver has no rule for this kind of instance: not a result, not a failure
            seconds = report.elapsed()
            status, err = "n/a", f"NotApplicable: {exc}"
        except MemoryError as exc:
            seconds = report.elapsed()
            status, err, tb = "oom", f"MemoryError: {exc}", traceback.format_exc()
        except Exception as exc:  # noqa: BLE001 - a failing solver is a recorded run status
            seconds = report.elapsed()
            status, err, tb = "error", f"{type(exc).__name__}: {exc}", traceback.format_exc()
        if hasattr(task, "finalize"):
            metrics = clean_metrics(task.finalize(dict(metrics), seconds, status, bud))
        if status == "ok" and is_diverged(metrics):
            status, err = "diverged", "the task's evaluator reported a diverged run (metric diverged = 1)"
        return {
            "status": status,
            "error": err,
            "traceback": tb,
            "seconds": seconds,
            "metrics": metrics,
            "meta": _canon_meta(meta),
            "curve": report.points,
        }


def _ensure_solver_registered(info: Any, task_id: str) -> None:
    """Register ``info`` (a :class:`~papergym.agents.base.SolverInfo`) in this process unless its name is known."""
    from papergym.agents.base import UnknownSolverError, get_solver_info, register_solver

    try:
        get_solver_info(info.name, task_id)
        return
    except UnknownSolverError:
        pass
    register_solver(
        info.name,
        info.factory,
        info.tasks,
        info.role,
        description=info.description,
        defaults=dict(info.defaults),
        requires=info.requires,
    )


def _shipped_solver(info: Any) -> Any:
    """``info`` if workers cannot rebuild it by importing papergym's solver packages, else ``None``."""
    module = getattr(info.factory, "__module__", "") or ""
    return None if module.startswith("papergym.") else info


def _canon_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in meta.items():
        try:
            out[str(k)] = _canon(v)
            json.dumps(out[str(k)], allow_nan=True)
        except (TypeError, ValueError):
            out[str(k)] = repr(v)
    return out


def _run_solve_job(cells: Sequence[tuple]) -> list[dict[str, Any]]:
    return [{"index": i, **run_solve(*args)} for i, args in cells]


# ------------------------------------------------------------------------------------------- results
@dataclass
class BenchResult:
    """What :func:`bench` returns.

    ``runs``: one row per solve (instance, its params, solver config label, solver, role, seed,
    status, seconds, ``message`` (the error of a failed solve), every metric). ``curves``: anytime points (label,
    instance, seed, seconds, iteration, work, metrics). ``summary``: one row per solver configuration: geometric mean of
    the primary metric over instances (with a 95 % bootstrap CI of the log-mean; exact zeros floored at
    1e-300), medians of the other metrics, counts. Reference-role solvers are listed last and never ranked.
    """

    task_id: str
    task_kwargs: dict[str, Any]
    primary: str
    metrics: dict[str, str]
    runs: pd.DataFrame
    curves: pd.DataFrame
    summary: pd.DataFrame
    errors: list[dict[str, Any]] = field(default_factory=list)
    table_metrics: tuple[str, ...] = ()  # the task's choice of printed metrics (default: all)

    def display_status(self) -> pd.Series:
        """The status shown in tables, one per run: the stored ``status`` (whether the solve ended: ``ok``,
        ``timeout``, ``error``, ``oom``), except that a run which ended ``ok`` but failed the task's accuracy
        gate (a ``passed_gate`` metric below 1, e.g. ``NystromODE-v0``) reads ``gate-failed``. The stored
        ``runs.status`` keeps its meaning (the leaderboard's scoring reads it next to ``passed_gate``)."""
        if self.runs.empty:
            return pd.Series(dtype=object)
        status = self.runs["status"].astype(object).copy()
        if "passed_gate" in self.runs.columns:
            gate = pd.to_numeric(self.runs["passed_gate"], errors="coerce")
            status[(status == "ok") & ~(gate >= 1.0)] = "gate-failed"
        return status

    def format_table(self, per_instance: bool = True) -> str:
        """Per-instance rows (instance, solver, status and the task's metrics) then the summary. The status
        column is :meth:`display_status` (``gate-failed`` for an ``ok`` run that failed the accuracy gate);
        where the task has an accuracy gate the summary counts the runs that passed it (``gate ok``)."""
        lines: list[str] = []
        shown = [self.primary] + [m for m in (self.table_metrics or self.metrics) if m != self.primary]
        if per_instance and not self.runs.empty:
            head = ["instance", "solver", "status", "seconds"] + shown
            rows = []
            shown_status = self.display_status()
            for i, r in self.runs.iterrows():
                rows.append(
                    [r["instance"], r["label"], shown_status[i], _fmt_sig(r["seconds"])]
                    + [_fmt_sig(r.get(m, np.nan)) for m in shown]
                )
            lines += _table(head, rows)
            lines.append("")
        if not self.summary.empty:
            gated = "passed_gate" in self.runs.columns
            head = (
                ["solver", "role", f"geo-mean {self.primary}", "95% CI", "ok", "failed"]
                + (["gate ok"] if gated else [])
                + [f"median {m}" for m in shown if m != self.primary]
            )
            rows = []
            for _, r in self.summary.iterrows():
                gate = []
                if gated:
                    g = self.runs[self.runs["label"] == r["label"]]
                    passed = int(
                        ((g["status"] == "ok") & (pd.to_numeric(g["passed_gate"], errors="coerce") >= 1.0)).sum()
                    )
                    gate = [f"{passed}/{len(g)}"]
                rows.append(
                    [
                        r["label"],
                        r["role"],
                        _fmt_sig(r["geo_mean"]),
                        f"[{_fmt_sig(r['ci_low'])}, {_fmt_sig(r['ci_high'])}]",
                        str(int(r["n_ok"])),
                        str(int(r["n_failed"])),
                    ]
                    + gate
                    + [_fmt_sig(r.get(f"median_{m}", np.nan)) for m in shown if m != self.primary]
                )
            lines += _table(head, rows)
        return "\n".join(lines)

    def plot(self, path: str | os.PathLike | None = None):
        """The primary metric per instance and solver (log scale), one marker per solver configuration;
        plus anytime curves where solvers reported them. PNG + SVG with ``path``. Returns the figure."""
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        ok = self.runs[self.runs.status == "ok"] if not self.runs.empty else self.runs
        fig, ax = plt.subplots(
            figsize=(max(7.5, 0.35 * max(1, self.runs["instance"].nunique() if len(self.runs) else 1)), 4.8)
        )
        if len(self.runs):
            inst = list(dict.fromkeys(self.runs["instance"]))
            x = {n: i for i, n in enumerate(inst)}
            for k, (label, g) in enumerate(self.runs.groupby("label", sort=False)):
                vals = g.groupby("instance")[self.primary].median() if self.primary in g else pd.Series(dtype=float)
                xs = [x[n] for n in vals.index]
                ax.plot(xs, vals.to_numpy(dtype=float), ls="none", marker="os^Dv<>P*X"[k % 10], label=label, alpha=0.85)
            ax.set_xticks(range(len(inst)))
            ax.set_xticklabels(inst, rotation=70, fontsize=7)
            shown = np.asarray(ok[self.primary] if self.primary in ok else [], dtype=float)  # noqa: SIM401 - a DataFrame
            shown = shown[np.isfinite(shown)]
            if shown.size and shown.min() > 0:  # log scale only with something positive to draw (not all failed)
                ax.set_yscale("log")
        from papergym.leaderboard.runner.plots import legend_outside, metric_label

        ax.set_ylabel(metric_label(self.primary, "median over seeds", self.metrics.get(self.primary, "min")))
        ax.set_xlabel("instance")
        ax.set_title(self.task_id, fontsize=10)
        ax.grid(alpha=0.3)
        legend_outside(ax, title="solver")
        fig.tight_layout()
        if path is not None:
            _save_fig(fig, path)
        return fig

    def save(self, folder: str | os.PathLike) -> Path:
        """Write ``summary.csv``, ``runs.parquet``, ``curves.parquet``, ``table.txt``, ``config.json``,
        ``scores.png/.svg`` and the task's own figures (``task.figures(runs, folder)`` where defined; tasks whose
        ``figures`` takes ``curves`` also get the anytime points)."""
        import matplotlib.pyplot as plt

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.summary.to_csv(folder / "summary.csv", index=False)
        runs = self.runs.copy()
        for col in ("params", "hyperparameters", "meta"):
            if col in runs:
                runs[col] = runs[col].map(lambda v: _canonical_json(v, nonfinite="repr", compact=False))
        runs.to_parquet(folder / "runs.parquet", index=False)
        curves = self.curves.copy()
        if "message" in curves:
            curves["message"] = curves["message"].astype(str)
        curves.to_parquet(folder / "curves.parquet", index=False)
        (folder / "table.txt").write_text(self.format_table() + "\n" + self.extra_report() + "\n")
        (folder / "config.json").write_text(
            json.dumps({"task_id": self.task_id, "task_kwargs": _canon(self.task_kwargs)}, indent=1)
        )
        if not self.runs.empty:
            plt.close(self.plot(folder / "scores"))
            task = self._task()
            if task is not None and hasattr(task, "figures"):
                import inspect

                kw = {"curves": self.curves} if "curves" in inspect.signature(task.figures).parameters else {}
                for fig in task.figures(self.runs, folder, **kw) or []:
                    plt.close(fig)
        return folder

    def _task(self):
        from papergym.envs.tasks.base import make_task

        try:
            return make_task(self.task_id, **self.task_kwargs)
        except Exception:  # noqa: BLE001  # pragma: no cover - the task built fine for the run
            return None

    def extra_report(self) -> str:
        """The task's own statistics of the runs (``task.report(runs)`` where defined; tasks whose ``report``
        takes ``curves`` also get the anytime points), else ``""``."""
        task = self._task()
        if task is None or not hasattr(task, "report") or self.runs.empty:
            return ""
        kw = {"curves": self.curves} if "curves" in inspect.signature(task.report).parameters else {}
        return str(task.report(self.runs, **kw))


def _save_fig(fig, path) -> None:
    stem = Path(path)
    stem = stem.with_suffix("") if stem.suffix in (".png", ".svg") else stem
    stem.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(stem.with_suffix(".png"), dpi=150, bbox_inches="tight")
    fig.savefig(stem.with_suffix(".svg"), bbox_inches="tight")


def _fmt_sig(v: Any) -> str:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return str(v)
    if not np.isfinite(v):
        return "-" if np.isnan(v) else ("inf" if v > 0 else "-inf")
    a = abs(v)
    if a == 0:
        return "0"
    if 1e-3 <= a < 1e5:
        return f"{v:.4g}"
    return f"{v:.3e}"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(str(r[i])) for r in rows)) if rows else len(h) for i, h in enumerate(head)]

    def fmt(cells):
        return "  ".join(str(c).ljust(w) if i < 3 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return [fmt(head), "-" * len(fmt(head))] + [fmt(r) for r in rows]


# ---------------------------------------------------------------------------------------------- bench
def resolve_task_kwargs(task_id: str, task_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Task kwargs with the constructor's defaults filled in, validated by building the task."""
    from papergym.envs.tasks.base import make_task, task_factory

    kwargs = dict(task_kwargs or {})
    fac = task_factory(task_id)
    resolved: dict[str, Any] = {}
    for name, p in inspect.signature(fac).parameters.items():
        if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        if name in kwargs:
            resolved[name] = kwargs[name]
        elif p.default is not inspect.Parameter.empty:
            resolved[name] = p.default
    resolved.update(kwargs)
    make_task(task_id, **resolved)  # raises naming the offending kwarg
    return _canon(resolved)


def solver_configs(
    solvers: Sequence[str],
    hyperparameters: Mapping[str, Mapping[str, Any]],
    sweep: Mapping[str, Mapping[str, Sequence[Any]]],
) -> list[tuple[str, str, dict[str, Any]]]:
    """The ``(label, solver, hyperparameters)`` runs of a bench: one per solver, or one per point of its sweep grid
    (label ``solver[name=value,...]``)."""
    out = []
    for s in solvers:
        base = dict(hyperparameters.get(s, {}))
        grid = dict(sweep.get(s, {}))
        if not grid:
            out.append((s, s, base))
            continue
        names = list(grid)
        for values in itertools.product(*(list(grid[n]) for n in names)):
            hp = {**base, **dict(zip(names, values))}
            label = s + "[" + ",".join(f"{n}={v}" for n, v in zip(names, values)) + "]"
            out.append((label, s, hp))
    return out


def validate_solver_hyperparameters(task_id: str, configs: Sequence[tuple[str, str, dict[str, Any]]]) -> None:
    """Every configuration's hyperparameters are accepted by its solver (names checked against the
    factory's signature, values by building the solver once); a clear error otherwise."""
    from papergym.agents.base import get_solver_info, make_solver

    for label, s, hp in configs:
        info = get_solver_info(s, task_id)
        params = inspect.signature(info.factory).parameters
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            accepted = sorted(n for n, p in params.items() if p.kind is p.KEYWORD_ONLY and n != "seed")
            bad = sorted(set(hp) - set(accepted))
            if bad:
                raise ValueError(
                    f"unknown hyperparameter(s) {bad} for solver {s!r}; accepted: {', '.join(accepted) or '(none)'}"
                )
        _canon(hp)
        try:
            make_solver(s, task_id, seed=0, **hp)
        except ImportError:
            raise
        except (ValueError, TypeError) as exc:
            raise ValueError(f"solver {label!r}: {exc}") from None


def bench(
    task_id: str,
    solvers: Iterable[str] | None = None,
    instances: Iterable[Any] | None = None,
    seeds: Iterable[int] = (0,),
    budget: Any = None,
    backend: str = "joblib",
    out: str | os.PathLike | None = None,
    cache: bool = True,
    *,
    task_kwargs: Mapping[str, Any] | None = None,
    hyperparameters: Mapping[str, Mapping[str, Any]] | None = None,
    sweep: Mapping[str, Mapping[str, Sequence[Any]]] | None = None,
    split: str = "dev",
    n_jobs: int | None = None,
    scheduler: Any = None,
    progress: bool | None = None,
    progress_every: float = 30.0,
) -> BenchResult:
    """Run every solver (configuration) on every instance of ``task_id`` for every solver seed.

    Parameters
    ----------
    task_id:
        A registered task id (``"NystromODE-v0"``).
    solvers:
        Registered solver names (default: every solver registered for the task whose optional
        packages are installed).
    instances:
        Instance names (``"L1/n=100/s0"``, or a problem prefix such as ``"L1"``) or
        :class:`~papergym.envs.tasks.base.InstanceRef` s (default: the whole split).
    seeds:
        Solver seeds (randomness inside solvers; instances carry their own seeds).
    budget:
        A :class:`~papergym.envs.tasks.base.Budget`, a mapping of its fields, or ``None`` (the
        task's ``default_budget``).
    backend, n_jobs, scheduler, out, cache, progress, progress_every:
        As :func:`~papergym.leaderboard.compare` (a bar on a terminal, a logged line every ``progress_every``
        seconds elsewhere).
    task_kwargs:
        Task constructor kwargs (e.g. ``{"sizes": [1000, 10000]}``).
    hyperparameters, sweep:
        ``{solver: {name: value}}`` for every run of the solver; ``{solver: {name: [values]}}`` for one
        configuration per value.
    split:
        ``"dev"`` (public) or ``"test"`` (needs the evaluator's secret).
    """
    from papergym.agents.base import get_solver_info, list_solvers
    from papergym.envs.tasks.base import Budget, InstanceRef, check_task_id, instances_by_name, make_task, task_factory
    from papergym.leaderboard.runner import cache as cellcache
    from papergym.leaderboard.runner.cache import default_cache_dir
    from papergym.leaderboard.runner.executors import BACKENDS, default_n_jobs, run_jobs

    base = check_task_id(task_id)
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid backends: {', '.join(BACKENDS)}")
    if split not in ("dev", "test"):
        raise ValueError(f"split must be 'dev' or 'test', got {split!r}")
    if isinstance(solvers, str):
        raise TypeError("solvers must be a list of names, not a string")
    kwargs = resolve_task_kwargs(base, task_kwargs)
    task = make_task(base, **kwargs)
    if solvers is None:
        solver_list = []
        for info in list_solvers(base):
            try:
                for pkg in info.requires:
                    __import__(pkg)
            except ImportError:
                continue
            solver_list.append(info.name)
    else:
        solver_list = list(dict.fromkeys(solvers))
    if not solver_list:
        raise ValueError(f"no solvers to run on {base}")
    infos = {s: get_solver_info(s, base) for s in solver_list}  # raises with the valid names
    hps = {k: dict(v) for k, v in (hyperparameters or {}).items()}
    sw = {k: dict(v) for k, v in (sweep or {}).items()}
    for name in list(hps) + list(sw):
        if name not in solver_list:
            raise ValueError(f"hyperparameters given for solver {name!r}, which is not run ({', '.join(solver_list)})")
    for name, values in (task.solver_sweep() if hasattr(task, "solver_sweep") else {}).items():
        # a task-declared sweep (e.g. DecentralizedBilevel-v0's step-size grid over `gamma`): every solver that
        # takes the hyperparameter runs once per value, unless the caller fixed or swept it
        for s in solver_list:
            if name in infos[s].hyperparameters and name not in sw.get(s, {}) and name not in hps.get(s, {}):
                sw.setdefault(s, {})[name] = list(values)
    configs = solver_configs(solver_list, hps, sw)
    validate_solver_hyperparameters(base, configs)
    if budget is None:
        bud = task.default_budget
    elif isinstance(budget, Budget):
        bud = budget
    elif isinstance(budget, Mapping):
        bud = Budget(**budget)
    else:
        raise TypeError(f"budget must be a Budget, a mapping of its fields or None, got {type(budget).__name__}")
    if instances is None:
        refs = task.instances(split)
    else:
        inst = list(instances)
        refs = [r for r in inst if isinstance(r, InstanceRef)]
        names = [r for r in inst if not isinstance(r, InstanceRef)]
        refs += [r for r in instances_by_name(task, [str(n) for n in names], split) if r not in refs]
    if not refs:
        raise ValueError(f"no instances of {base} selected")
    seed_list = list(dict.fromkeys(int(s) for s in seeds))
    if not seed_list or any(s < 0 for s in seed_list):
        raise ValueError(f"seeds must be a non-empty list of non-negative integers, got {seed_list}")
    out_dir = Path(out) if out is not None else default_cache_dir()
    task_hash = _module_hash(task_factory(base))

    cells: dict[tuple[str, str, int], SolveCell] = {}
    for label, s, hp in configs:
        for ref in refs:
            for sd in seed_list:
                cells[(label, ref.name, sd)] = SolveCell(
                    base, task_hash, kwargs, ref.as_dict(), s, infos[s].code_hash, hp, sd, bud.as_dict()
                )

    results: dict[tuple[str, str, int], dict[str, Any]] = {}
    missing: list[tuple[str, str, int]] = []
    for k, cell in cells.items():
        path = out_dir / base / cell.solver / f"{cell.key}.json"
        rec = cellcache.read_json(path) if cache else None  # verified; a damaged entry is warned and recomputed
        if rec is not None and rec.get("key") == cell.key and rec.get("status") == "ok":
            results[k] = rec
        else:
            missing.append(k)

    errors: list[dict[str, Any]] = []
    if missing:
        from papergym.leaderboard.runner.progress import RunProgress

        n_workers = 1 if backend == "serial" else (n_jobs or default_n_jobs())
        order = list(missing)
        shipped = {s: _shipped_solver(info) for s, info in infos.items()}
        # one solve per job (solves are long and uneven), except for many tiny ones
        per_job = max(1, len(order) // (8 * max(1, n_workers)))
        jobs = []
        for i in range(0, len(order), per_job):
            chunk = order[i : i + per_job]
            jobs.append(
                (
                    [
                        (
                            j,
                            (
                                base,
                                kwargs,
                                cells[k].instance,
                                cells[k].solver,
                                dict(cells[k].hyperparameters),
                                k[2],
                                bud.as_dict(),
                            )
                            + ((shipped[cells[k].solver],) if shipped[cells[k].solver] else ()),
                        )
                        for j, k in zip(range(i, i + len(chunk)), chunk)
                    ],
                )
            )
        logger.info(
            "bench %s: %d of %d solves to compute (%d cached), %d job(s) on %s",
            base,
            len(order),
            len(cells),
            len(cells) - len(order),
            len(jobs),
            backend,
        )
        bar = RunProgress(len(order), f"bench {base}", unit="solves", enabled=progress, every=progress_every)
        try:
            for res_list in run_jobs(_run_solve_job, jobs, backend=backend, n_jobs=n_jobs, scheduler=scheduler):
                for res in res_list:
                    k = order[res.pop("index")]
                    cell = cells[k]
                    rec = {"cell": cell.as_dict(), "key": cell.key, **res}
                    path = out_dir / base / cell.solver / f"{cell.key}.json"
                    if res["status"] == "ok":
                        cellcache.write_json(path, _nan_safe(rec))  # checksummed, atomic
                        err_path = path.with_suffix(".error.json")
                        if err_path.exists():
                            err_path.unlink()
                    elif res["status"] != "n/a":
                        cellcache.atomic_write_bytes(
                            path.with_suffix(".error.json"), json.dumps(_nan_safe(rec), indent=1).encode()
                        )
                        errors.append(
                            {
                                "solver": k[0],
                                "instance": k[1],
                                "seed": k[2],
                                "status": res["status"],
                                "error": res["error"],
                                "traceback": res["traceback"],
                            }
                        )
                    results[k] = rec
                    bar.update(1, failed=int(res["status"] not in ("ok", "n/a")))
        finally:
            bar.close()
    return _collect(task, kwargs, configs, refs, seed_list, cells, results, errors, infos)


def _nan_safe(obj: Any) -> Any:
    """JSON with NaN/inf as strings (``json.loads`` gives them back through :func:`_from_json_num`)."""
    if isinstance(obj, Mapping):
        return {k: _nan_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_nan_safe(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return repr(obj)
    return obj


def _num(v: Any) -> float:
    if isinstance(v, str) and v in ("nan", "inf", "-inf"):
        return float(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def _collect(task, kwargs, configs, refs, seed_list, cells, results, errors, infos) -> BenchResult:
    rows, curve_rows = [], []
    metric_names = list(task.metrics)
    for label, s, hp in configs:
        for ref in refs:
            for sd in seed_list:
                rec = results.get((label, ref.name, sd), {})
                status = rec.get("status", "missing")
                if status == "n/a":  # a solver that does not apply to this instance (NotApplicable): no row
                    continue
                row = {
                    "instance": ref.name,
                    **{f"param_{k}": v for k, v in ref.params.items()},
                    "instance_seed": ref.seed,
                    "label": label,
                    "solver": s,
                    "role": infos[s].role,
                    "seed": sd,
                    "status": status,
                    "seconds": _num(rec.get("seconds", np.nan)),
                    "message": rec.get("error", ""),
                    "hyperparameters": hp,
                    "meta": rec.get("meta", {}),
                    "key": cells[(label, ref.name, sd)].key,
                }
                met = rec.get("metrics", {})
                for m in metric_names:
                    row[m] = _num(met.get(m, np.nan))
                rows.append(row)
                for pt in rec.get("curve", []):
                    curve_rows.append(
                        {
                            "label": label,
                            "instance": ref.name,
                            "seed": sd,
                            **{k: (_num(v) if k != "message" else v) for k, v in pt.items()},
                        }
                    )
    runs = pd.DataFrame(rows)
    curves = pd.DataFrame(curve_rows) if curve_rows else pd.DataFrame(columns=["label", "instance", "seed", "seconds"])
    summary = _summarise(runs, configs, infos, task.primary, task.metrics)
    return BenchResult(
        task_id=task.id,
        task_kwargs=dict(kwargs),
        primary=task.primary,
        metrics=dict(task.metrics),
        runs=runs,
        curves=curves,
        summary=summary,
        errors=errors,
        table_metrics=tuple(getattr(task, "table_metrics", ()) or ()),
    )


def _summarise(runs: pd.DataFrame, configs, infos, primary: str, metrics: Mapping[str, str]) -> pd.DataFrame:
    from papergym.leaderboard.runner.stats import bootstrap_ci

    out = []
    for label, s, _ in configs:
        r = runs[runs.label == label]
        ok = r[r.status == "ok"]
        # the primary metric includes failures where the task scores them (PAR-2); geometric mean over instances
        vals = r[primary].to_numpy(dtype=float) if primary in r else np.array([])
        vals = vals[np.isfinite(vals) & (vals >= 0)]
        vals = np.maximum(vals, 1e-300)  # an exact 0 (e.g. an error metric) floored so the log exists
        if len(vals):
            est, lo, hi = bootstrap_ci(np.log(vals))
            geo, glo, ghi = math.exp(est), math.exp(lo), math.exp(hi)
        else:
            geo = glo = ghi = float("nan")
        row = {
            "label": label,
            "solver": s,
            "role": infos[s].role,
            "geo_mean": geo,
            "ci_low": glo,
            "ci_high": ghi,
            "n_ok": len(ok),
            "n_failed": len(r) - len(ok),
        }
        for m in metrics:
            if m != primary and m in ok:
                x = ok[m].to_numpy(dtype=float)
                row[f"median_{m}"] = float(np.median(x[~np.isnan(x)])) if np.any(~np.isnan(x)) else float("nan")
        out.append(row)
    df = pd.DataFrame(out)
    if df.empty:
        return df
    sign = -1.0 if metrics.get(primary, "min") == "max" else 1.0
    df["_ref"] = df.role == "reference"
    df["_key"] = sign * df.geo_mean
    return df.sort_values(["_ref", "_key"], na_position="last").drop(columns=["_ref", "_key"]).reset_index(drop=True)
