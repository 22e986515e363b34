"""Regret comparisons of agents on an environment, over seeds: :func:`compare`.

Cells
-----
A *cell* is one run: (env id, env code hash, resolved env kwargs, agent name, agent code hash,
hyperparameters, seed). Its key is a SHA-256 of the canonical JSON of those fields (sorted keys,
numpy scalars as Python numbers), so it does not depend on the order in which kwargs were given.
Cells are pure: the same cell gives the same result, bit for bit, on every backend and in every
batch. Each finished cell is written at once, atomically (temporary file + ``os.replace``), as one
parquet file ``<out>/<env>/<agent>/<key>.parquet`` that carries its own SHA-256 (a damaged file is
warned about and recomputed, see :mod:`papergym.leaderboard.runner.cache`); a failed cell writes
``<key>.error.json`` with its status and traceback and is never cached: a rerun tries it again. An interrupted
comparison, rerun, computes only the missing cells.

Execution
---------
Cells that share everything but the seed form *jobs*. A job runs its seeds together through the
env's native vector entry point and the agent's batched implementation when both exist
(``mode="batched"``), otherwise one Gymnasium env and one per-run agent per seed
(``mode="per-run"``). Both give the same numbers; the batched path is many times faster. The batched
path plays :func:`papergym.leaderboard.runner.episode.run_vector_episode`, the loop the leaderboard's
evaluation plays too, so local results and board scores of an agent on the same seeds agree. The
regret of the action played at round ``t`` is ``oracle.regret(action, t)``, from means, computed
before the env steps. Cumulative regret is stored at checkpoints: 100 log-spaced and 100
linearly spaced rounds, ``T // 2`` and ``T``.

Curves and run metrics
----------------------
Every run stores its cumulative regret ``R_t``; where the env's oracle class sets
``TRACK_SIMPLE_REGRET = True`` (noise-free / pure-exploration settings, e.g.
``NoiseFreeGPBandit-v0``) it also stores the simple regret of the best point played so far,
``r_t = min_{s <= t} regret(x_s, s)`` (= ``f* - max_{s<=t} f(x_s)`` for a static objective). Per run:
``final_regret = R_T``, ``regret_half = R_{T//2}``, ``flatness = (R_T - R_{T//2}) / R_T`` (0 for a
regret that has stopped growing, about 0.29 for ``sqrt(T)``, 0.5 for linear regret), the final simple
regret, and every scalar numeric entry of the agent's ``diagnostics()`` (``restarts``, ``sum_sigma``,
...) as a column. Where the oracle's ``tracks_static_regret`` is true (a switching adversary, e.g.
``MSetSemiBandit-v0``'s ``oblivious-switching``: the per-round regret is dynamic, against the best
action of each round, while the papers' pseudo-regret is against the best *fixed* action in
hindsight), the cumulative static regret ``sum_t oracle.static_regret_increment(a_t, t)`` is stored
too, and the env's run scores use it. Where the oracle class defines ``score_run`` (and optionally
``instance_metrics``), each run is scored (e.g. ``L~`` and normalised regret, regret / ln n).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import math
import os
import time
import traceback
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd

from papergym.agents.base import get_agent_info, list_agents, make_agent, make_batched_agent
from papergym.canonical import canonical_json as _canonical_json
from papergym.canonical import to_json_value
from papergym.leaderboard.runner import cache as cellcache
from papergym.leaderboard.runner.cache import default_cache_dir
from papergym.leaderboard.runner.episode import N_LIN_POINTS, N_LOG_POINTS, checkpoints  # noqa: F401
from papergym.leaderboard.runner.executors import BACKENDS, default_n_jobs, run_jobs
from papergym.leaderboard.runner.progress import DEFAULT_EVERY, RunProgress
from papergym.leaderboard.runner.stats import bootstrap_ci
from papergym.validate import positive_int

__all__ = ["compare", "CompareResult", "Cell", "cell_key", "default_cache_dir", "run_cells", "checkpoints", "env_class"]

logger = logging.getLogger(__name__)

RESULT_FORMAT = 2  # bump when the content of a cell file changes


# ------------------------------------------------------------------------------------------ helpers
def _canon(obj: Any) -> Any:
    """JSON data of kwargs / hyperparameters (:func:`papergym.canonical.to_json_value`); non-finite
    floats become ``"inf"`` / ``"-inf"`` / ``"nan"``, the rule of the cell keys."""
    return to_json_value(obj, nonfinite="repr")


def canonical_json(obj: Any) -> str:
    """Compact canonical JSON of cell data (:func:`papergym.canonical.canonical_json`, ``"inf"`` rule)."""
    return _canonical_json(obj, nonfinite="repr")


def _file_hash(obj: Any) -> str:
    """Hash of the source of ``obj``'s module and of the papergym modules it depends on."""
    from papergym.agents.base import module_file_bytes

    return hashlib.sha256(module_file_bytes(obj)).hexdigest()[:16]


def _env_spec(env_id: str) -> gym.envs.registration.EnvSpec:
    import papergym.envs as penvs

    base = penvs.check_env_id(env_id)
    return gym.spec(base)


def env_class(env_id: str):
    """The class (or factory) registered with Gymnasium for ``env_id`` (its entry point, loaded)."""
    spec = _env_spec(env_id)
    return gym.envs.registration.load_env_creator(spec.entry_point)


def resolve_env_kwargs(env_id: str, env_kwargs: Mapping[str, Any] | None, horizon: int | None) -> dict[str, Any]:
    """Env kwargs with the constructor's defaults filled in and ``horizon`` set, validated by
    building the env once (its errors name the offending field)."""
    kwargs = dict(env_kwargs or {})
    if horizon is not None:
        kwargs["horizon"] = positive_int(horizon, "horizon")
    cls = env_class(env_id)
    sig = inspect.signature(cls)
    resolved: dict[str, Any] = {}
    for name, p in sig.parameters.items():
        if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) or name == "render_mode":
            continue
        if name in kwargs:
            resolved[name] = kwargs[name]
        elif p.default is not inspect.Parameter.empty:
            resolved[name] = p.default
    resolved.update(kwargs)
    env = cls(**resolved)  # validation: raises ValueError naming the field
    try:
        resolved["horizon"] = int(env.problem.horizon)
        # defaults the env resolves itself (e.g. a lengthscale that depends on d): the values used
        resolved.update(getattr(env, "resolved_kwargs", None) or {})
    finally:
        env.close()
    _canon(resolved)  # JSON check
    return resolved


def validate_hyperparameters(
    env_id: str, hyperparameters: Mapping[str, Mapping[str, Any]], env_kwargs: Mapping[str, Any] | None = None
) -> None:
    """Check that every hyperparameter name is accepted by its agent's factories (a clear error
    listing the accepted names otherwise) and that every value is JSON. With ``env_kwargs`` (resolved),
    also build each agent once on the problem, so a bad value (``alpha=-1``) is refused before any run
    starts, with the agent's own message."""
    for agent, hp in hyperparameters.items():
        info = get_agent_info(agent, env_id)
        for fac in (info.factory, info.batched_factory):
            if fac is None:
                continue
            params = inspect.signature(fac).parameters
            if any(p.kind is p.VAR_KEYWORD for p in params.values()):
                continue
            accepted = sorted(
                n
                for n, p in params.items()
                if p.kind is p.KEYWORD_ONLY and n not in ("seed", "seeds", "oracle", "oracles")
            )
            bad = sorted(set(hp) - set(accepted))
            if bad:
                raise ValueError(
                    f"unknown hyperparameter(s) {bad} for agent {agent!r}; accepted: {', '.join(accepted) or '(none)'}"
                )
        _canon(hp)
    todo = {a: hp for a, hp in hyperparameters.items() if hp}
    if env_kwargs is None or not todo:
        return
    env = env_class(env_id)(**env_kwargs)
    try:
        env.reset(seed=0)
        for agent, hp in todo.items():
            oracle = env.oracle if get_agent_info(agent, env_id).role == "oracle" else None
            try:
                make_agent(agent, env.problem, seed=0, oracle=oracle, **hp)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"agent {agent!r}: {exc}") from None
    finally:
        env.close()


# --------------------------------------------------------------------------------------------- cells
@dataclass(frozen=True)
class Cell:
    env_id: str
    env_hash: str
    env_kwargs: Mapping[str, Any]
    agent: str
    agent_hash: str
    hyperparameters: Mapping[str, Any]
    seed: int

    @property
    def key(self) -> str:
        return cell_key(self)

    def as_dict(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "env_hash": self.env_hash,
            "env_kwargs": _canon(self.env_kwargs),
            "agent": self.agent,
            "agent_hash": self.agent_hash,
            "hyperparameters": _canon(self.hyperparameters),
            "seed": int(self.seed),
            "format": RESULT_FORMAT,
        }


def cell_key(cell: Cell) -> str:
    """Canonical, order-independent SHA-256 key of a cell (first 32 hex digits)."""
    return hashlib.sha256(canonical_json(cell.as_dict()).encode()).hexdigest()[:32]


def _cell_path(out: Path, cell: Cell) -> Path:
    return out / cell.env_id / cell.agent / f"{cell.key}.parquet"


_atomic_write_bytes = cellcache.atomic_write_bytes  # the one implementation, in runner/cache.py


def _write_cell(out: Path, cell: Cell, res: dict[str, Any]) -> None:
    import pyarrow as pa

    path = _cell_path(out, cell)
    err_path = path.with_suffix(".error.json")
    if res["status"] != "ok":
        record = {"cell": cell.as_dict(), "key": cell.key, **{k: res[k] for k in ("status", "error", "traceback")}}
        _atomic_write_bytes(err_path, json.dumps(record, indent=1).encode())
        return
    meta = {
        "cell": cell.as_dict(),
        "key": cell.key,
        "status": "ok",
        "mode": res["mode"],
        "seconds": res["seconds"],
        "steps": res["steps"],
        "batch_size": res["batch_size"],
        "diagnostics": _canon(res["diagnostics"]),
        "env_metrics": _canon(res.get("env_metrics") or {}),
    }
    cols = {"t": pa.array(res["t"], pa.int64()), "cum_regret": pa.array(res["cum_regret"], pa.float64())}
    for name in EXTRA_CURVES:
        if res.get(name) is not None:
            cols[name] = pa.array(res[name], pa.float64())
    cellcache.write_table(path, pa.table(cols), meta)  # checksummed, atomic
    if err_path.exists():
        err_path.unlink()


def _read_cell(path: Path) -> tuple[dict[str, Any], pd.DataFrame] | None:
    """The verified cached cell at ``path``; ``None`` when missing, corrupt (warned) or unverifiable."""
    got = cellcache.read_table(path)
    if got is None:
        return None
    meta, table = got
    return meta, table.to_pandas()


# ---------------------------------------------------------------------------------------------- jobs
def run_cells(
    env_id: str,
    env_kwargs: Mapping[str, Any],
    agent: str,
    hyperparameters: Mapping[str, Any],
    seeds: Sequence[int],
    mode: str = "auto",
    registration: Any = None,
) -> list[dict[str, Any]]:
    """Run one job: ``agent`` on ``env_id`` for every seed. Pure; never raises for a failing agent.

    ``registration``: the agent's :class:`~papergym.agents.base.AgentInfo` when it was registered outside
    papergym's packages (a user's script or notebook); a worker process that does not know the name
    registers it from there (the executors pickle it with cloudpickle, so classes defined in ``__main__``
    travel by value).

    Returns one result dict per seed with ``status`` ``"ok"`` (``t``, ``cum_regret``,
    ``diagnostics``, ``seconds``...) or ``"error"`` (``error``, ``traceback``).
    """
    from threadpoolctl import threadpool_limits

    import papergym.envs  # noqa: F401  (registers the envs in worker processes)

    seeds = [int(s) for s in seeds]
    with threadpool_limits(limits=1):
        try:
            if registration is not None:
                _ensure_registered(registration, env_id)
            if mode not in ("auto", "batched", "per-run"):
                raise ValueError(f"mode must be 'auto', 'batched' or 'per-run', got {mode!r}")
            out = None
            if mode in ("auto", "batched"):
                out = _run_batched(env_id, env_kwargs, agent, hyperparameters, seeds)
                if out is None and mode == "batched":
                    raise ValueError(f"agent {agent!r} or env {env_id!r} has no batched implementation")
            if out is None:
                out = [_run_one(env_id, env_kwargs, agent, hyperparameters, s) for s in seeds]
            for res in out:
                res["agent"] = agent
            return out
        except Exception as exc:  # noqa: BLE001 - recorded per cell, never cached
            from papergym.envs.spec import InvalidActionError

            tb = traceback.format_exc()
            status = (
                "invalid_action"
                if isinstance(exc, InvalidActionError)
                else "oom"
                if isinstance(exc, MemoryError)
                else "error"
            )
            return [
                {"agent": agent, "seed": s, "status": status, "error": f"{type(exc).__name__}: {exc}", "traceback": tb}
                for s in seeds
            ]


def _per_run_diag(diag: Mapping[str, Any] | None, i: int | None) -> dict[str, Any]:
    if not diag:
        return {}
    out = {}
    for k, v in diag.items():
        out[k] = v if i is None else v[i]
    return _canon(out)


def _run_batched(env_id, env_kwargs, agent, hp, seeds):
    from papergym.envs.spec import agent_seed
    from papergym.leaderboard.runner.episode import PolicyDriver, run_vector_episode

    spec = _env_spec(env_id)
    if spec.vector_entry_point is None:
        return None
    info = get_agent_info(agent, env_id)
    if info.batched_factory is None:
        return None
    n = len(seeds)
    venv_cls = gym.envs.registration.load_env_creator(spec.vector_entry_point)
    venv = venv_cls(num_envs=n, **env_kwargs)
    t0 = time.perf_counter()
    obs, _ = venv.reset(seed=list(seeds))
    problem = venv.problem
    oracles = venv.oracles if info.role == "oracle" else None
    pol = make_batched_agent(agent, problem, seeds=[agent_seed(s) for s in seeds], oracles=oracles, **hp)
    T = int(problem.horizon)
    # envs whose figure is a per-step makespan (PLOT_KIND = "makespan"): each run's makespan at the checkpoints
    sub_envs = getattr(venv, "envs", None)
    probes = (
        {"makespan": lambda: [float(e.makespan) for e in sub_envs]}
        if _plot_kind(getattr(venv_cls, "SINGLE", venv_cls)) == "makespan" and sub_envs is not None
        else None
    )
    # the loop the leaderboard plays too (papergym.leaderboard.runner.episode); an invalid action raises
    ep = run_vector_episode(venv, obs, PolicyDriver(pol), horizon=T, probes=probes)
    seconds = time.perf_counter() - t0
    diag = pol.diagnostics() if hasattr(pol, "diagnostics") else {}
    venv.close()
    mshist = ep.probes.get("makespan")
    return [
        {
            "seed": s,
            "status": "ok",
            "mode": "batched",
            "t": ep.t,
            "cum_regret": ep.cum_regret[:, i].copy(),
            "simple_regret": ep.simple_regret[:, i].copy() if ep.simple_regret is not None else None,
            "static_regret": ep.static_regret[:, i].copy() if ep.static_regret is not None else None,
            "makespan": mshist[:, i].copy() if mshist is not None else None,
            "diagnostics": _per_run_diag(diag, i),
            "seconds": seconds / n,
            "steps": T,
            "batch_size": n,
        }
        for i, s in enumerate(seeds)
    ]


def _run_one(env_id, env_kwargs, agent, hp, seed):
    from papergym.envs.spec import agent_seed
    from papergym.envs.wrappers import RegretRecorder

    env = RegretRecorder(gym.make(_env_spec(env_id).id, **env_kwargs))
    t0 = time.perf_counter()
    obs, _ = env.reset(seed=seed)
    base = env.unwrapped
    problem = base.problem
    info = get_agent_info(agent, env_id)
    pol = make_agent(agent, problem, seed=agent_seed(seed), oracle=base.oracle if info.role == "oracle" else None, **hp)
    T = int(problem.horizon)
    track_st = _tracks_static_regret(base.oracle)
    static = np.zeros(T) if track_st else None
    # envs whose figure is a per-step makespan (PLOT_KIND = "makespan"): the env's makespan after every step
    makespans = np.full(T, np.nan) if _plot_kind(type(base)) == "makespan" else None
    played = 0
    for _ in range(T):
        a = pol.act(obs)
        obs, rew, term, trunc, _ = env.step(a)
        if track_st:  # the round just played is base.t (the env is oblivious: means do not depend on it)
            static[base.t - 1] = base.oracle.static_regret_increment(a, base.t)
        if makespans is not None:
            makespans[played] = float(base.makespan)
        played += 1
        pol.update(a, rew, obs)
        if term or trunc:
            break
    seconds = time.perf_counter() - t0
    ck = checkpoints(T)
    # running sum in float64, in round order: the same additions as the batched path; an episode that
    # terminates before T (FJSP-v0 on an instance smaller than the set's largest) adds no regret after its end
    regrets = np.asarray(env.regrets, dtype=float)
    if regrets.size < T:
        regrets = np.concatenate([regrets, np.zeros(T - regrets.size)])
        if track_st:
            static[base.t :] = 0.0
    curve = np.cumsum(regrets)
    simple = np.minimum.accumulate(regrets)[ck - 1] if _tracks_simple_regret(base.oracle) else None
    iterate_gap = regrets[ck - 1] if _tracks_last_regret(base.oracle) else None
    if makespans is not None and played < T:  # an episode that ended early keeps its final makespan
        makespans[played:] = makespans[played - 1] if played else float(base.makespan)
    diag = pol.diagnostics() if hasattr(pol, "diagnostics") else {}
    env_metrics = _canon(base.oracle.episode_metrics()) if hasattr(base.oracle, "episode_metrics") else {}
    env.close()
    return {
        "seed": seed,
        "status": "ok",
        "mode": "per-run",
        "t": ck,
        "cum_regret": curve[ck - 1],
        "simple_regret": simple,
        "static_regret": np.cumsum(static)[ck - 1] if track_st else None,
        "iterate_gap": iterate_gap,
        "makespan": makespans[ck - 1] if makespans is not None else None,
        "diagnostics": _per_run_diag(diag, None),
        "env_metrics": env_metrics,
        "seconds": seconds,
        "steps": T,
        "batch_size": 1,
    }


def _tracks_simple_regret(oracle: Any) -> bool:
    return bool(getattr(type(oracle), "TRACK_SIMPLE_REGRET", False))


def _tracks_last_regret(oracle: Any) -> bool:
    """Whether the env's per-step regret is itself the quantity of interest (a game's equilibrium gap of the
    current iterate): the runner then stores it at the checkpoints as the ``iterate_gap`` curve."""
    return bool(getattr(type(oracle), "TRACK_LAST_REGRET", False))


def _tracks_static_regret(oracle: Any) -> bool:
    return bool(getattr(oracle, "tracks_static_regret", False))


EXTRA_CURVES = ("simple_regret", "static_regret", "iterate_gap", "makespan")  # optional curves next to cum_regret


def _regret_name(env_cls: Any) -> str:
    """The env module's ``REGRET_NAME`` (what its cumulative "regret" is, e.g. a cumulative equilibrium gap), or
    ``""``."""
    import importlib

    return str(getattr(importlib.import_module(env_cls.__module__), "REGRET_NAME", "") or "")


#: the figure kinds an env module may declare as ``PLOT_KIND`` (default ``"regret"``)
PLOT_KINDS = ("regret", "makespan")


def _plot_kind(env_cls: Any) -> str:
    """The env module's declared ``PLOT_KIND``: ``"regret"`` (default: cumulative regret curves) or
    ``"makespan"`` (scheduling envs: the env's ``makespan`` after every step is stored as the ``makespan``
    curve and drawn instead of the cumulative regret, which is 0 until the last step)."""
    import importlib

    mod = importlib.import_module(getattr(env_cls, "__module__", "") or "builtins")
    kind = str(getattr(mod, "PLOT_KIND", "regret"))
    if kind not in PLOT_KINDS:
        raise ValueError(f"{getattr(mod, '__name__', env_cls)}.PLOT_KIND must be one of {PLOT_KINDS}, got {kind!r}")
    return kind


INSTANCE = "_instance"  # pseudo-agent name of the per-seed instance cells


def run_instance_cells(env_id: str, env_kwargs: Mapping[str, Any], seeds: Sequence[int]) -> list[dict[str, Any]]:
    """Per-seed facts about the instances (``oracle.instance_metrics()``: e.g. significant shifts),
    computed once per seed whatever the agents. Pure; never raises."""
    from threadpoolctl import threadpool_limits

    import papergym.envs  # noqa: F401

    seeds = [int(s) for s in seeds]
    with threadpool_limits(limits=1):
        try:
            env = env_class(env_id)(**env_kwargs)
            out = []
            for s in seeds:
                env.reset(seed=s)
                out.append(
                    {"agent": INSTANCE, "seed": s, "status": "ok", "info": _canon(env.oracle.instance_metrics())}
                )
            env.close()
            return out
        except Exception as exc:  # noqa: BLE001 - a failing cell is a recorded status
            tb = traceback.format_exc()
            return [
                {
                    "agent": INSTANCE,
                    "seed": s,
                    "status": "error",
                    "error": f"{type(exc).__name__}: {exc}",
                    "traceback": tb,
                }
                for s in seeds
            ]


def _ensure_registered(info: Any, env_id: str) -> None:
    """Register ``info`` (an :class:`~papergym.agents.base.AgentInfo`) in this process unless its name is known."""
    from papergym.agents.base import UnknownAgentError, register_agent

    try:
        get_agent_info(info.name, env_id)
        return
    except UnknownAgentError:
        pass
    register_agent(
        info.name,
        info.factory,
        info.envs,
        info.role,
        batched_factory=info.batched_factory,
        description=info.description,
        defaults=dict(info.defaults),
    )


def _shipped_registration(info: Any) -> Any:
    """``info`` if workers cannot rebuild it by importing papergym's agent packages, else ``None``."""
    module = getattr(info.factory, "__module__", "") or ""
    return None if module.startswith("papergym.") else info


def _run_job(kind: str, *args: Any) -> list[dict[str, Any]]:
    """What the executors run: an agent job (:func:`run_cells`) or an instance job."""
    if kind == "instance":
        return run_instance_cells(*args)
    return run_cells(*args)


def _oracle_class(env_id: str, env_kwargs: Mapping[str, Any]):
    env = env_class(env_id)(**env_kwargs)
    try:
        env.reset(seed=0)
        return type(env.unwrapped.oracle)
    finally:
        env.close()


def _instance_path(out: Path, cell: Cell) -> Path:
    return out / cell.env_id / INSTANCE / f"{cell.key}.json"


# ------------------------------------------------------------------------------------------- results
@dataclass
class CompareResult:
    """What :func:`compare` returns.

    ``runs``: one row per cell (agent, role, seed, status, final_regret, restarts, seconds,
    sec_per_1k_steps, key). ``curves``: long format (agent, role, seed, t, cum_regret).
    ``summary``: one row per agent: mean final dynamic regret with its 95 % bootstrap CI over seeds,
    mean restarts (where the agent reports them), seconds per 1,000 steps, counts of runs and
    failures, and the means of the env's run scores where it defines them (``NonStatLipschitz-v0``:
    ``L_tilde``, ``normalized_regret``, ``detections``, ``false_alarms``, ``mean_delay``; see the
    oracle's ``score_run``). Oracle-role agents are reference lines and are listed last, unranked.
    """

    env_id: str
    env_kwargs: dict[str, Any]
    runs: pd.DataFrame
    curves: pd.DataFrame
    summary: pd.DataFrame
    errors: list[dict[str, Any]] = field(default_factory=list)
    log_x_panel: bool = False  # the env asks for a log-x next to the linear-x regret panel
    per_instance: bool = False  # the env scores makespans per instance (FJSP): table per instance and agent
    plot_kind: str = "regret"  # the env module's PLOT_KIND: "regret" curves or per-step "makespan" curves
    regret_name: str = ""  # the env module's REGRET_NAME: what the cumulative "regret" of this env is

    @property
    def regret_column(self) -> str:
        """Header of the table's main column: the env's ``REGRET_NAME`` without its formula or remark
        (``"cumulative equilibrium gap  sum_k gap(profile_k)"`` -> ``"cumulative equilibrium gap"``,
        ``"cumulative pseudo-regret (from means)"`` -> ``"cumulative pseudo-regret"``); ``"cumulative regret"``
        where the env declares none. The number is the mean over seeds of that sum at the horizon."""
        name = (self.regret_name or "cumulative regret").split("  ")[0].split(" (")[0].strip()
        return name or "cumulative regret"

    @property
    def figure_name(self) -> str:
        """Stem of the figure :meth:`save` writes: ``makespan`` for envs whose ``PLOT_KIND`` is ``"makespan"``,
        else ``regret`` (``<stem>.png`` and ``<stem>.svg``)."""
        return "makespan" if self.plot_kind == "makespan" else "regret"

    @property
    def has_simple_regret(self) -> bool:
        """Whether the env tracks simple regret (its oracle class sets ``TRACK_SIMPLE_REGRET``)."""
        return "simple_regret" in self.curves.columns and bool(self.curves.simple_regret.notna().any())

    def plot(self, path: str | os.PathLike | None = None, *, ax=None, log_x: bool = False):
        """Cumulative-regret curves (mean and 95 % bootstrap band over seeds); where the env tracks simple
        regret, a second panel with the simple regret of the best point so far on a log scale
        (``symlog``: linear below ``1e-8``, so a run that found the optimum, regret 0, stays visible). Envs
        whose module declares ``PLOT_KIND = "makespan"`` (FJSP) get the per-step makespan instead
        (:meth:`plot_makespan`). Legends sit outside the axes.

        Writes nothing unless ``path`` is given: then ``<path>.png`` and ``<path>.svg`` (any suffix of
        ``path`` replaced). Returns the matplotlib figure (close it with ``plt.close(fig)``).
        """
        import matplotlib.pyplot as plt

        from papergym.leaderboard.runner.plots import plot_regret_curves

        if self.plot_kind == "makespan" and "makespan" in self.curves.columns and self.curves.makespan.notna().any():
            fig = self.plot_makespan(ax=ax, log_x=log_x)
            if path is not None:
                _save_figure(fig, path)
            return fig
        shown = ("instance", "horizon", "d", "m", "gap", "noise", "kernel", "lengthscale", "B", "action_mode", "role")
        title = f"{self.env_id}  " + ", ".join(
            f"{k}={v}" for k, v in self.env_kwargs.items() if k in shown and v is not None
        )
        ranked = (
            [a for a, r in zip(self.summary.agent, self.summary.role) if r != "oracle"] if len(self.summary) else []
        )
        cmap = plt.get_cmap("tab10" if len(ranked) <= 10 else "tab20")
        colours = {a: cmap(i % cmap.N) for i, a in enumerate(ranked)}  # one colour per agent, in table order
        primary = "static_regret" if "static_regret" in self.curves.columns else "cum_regret"
        stat = "(mean over seeds)"
        name = self.regret_column
        ylab = f"static pseudo-regret vs best fixed action {stat}" if primary == "static_regret" else f"{name} {stat}"
        if "iterate_gap" in self.curves.columns and self.curves.iterate_gap.notna().any() and ax is None:
            # games / mean-field minimisation: the gap of the current iterate on a log scale is the paper's curve
            fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 4.8))
            plot_regret_curves(
                self.curves,
                title=title,
                ax=ax1,
                log_x=log_x,
                ylabel=ylab,
                colours=colours,
                xlabel="step k (best-response evaluations)",
                legend=False,
            )
            plot_regret_curves(
                self.curves,
                title="gap of the current iterate",
                ax=ax2,
                log_x=log_x,
                value="iterate_gap",
                log_y=True,
                linthresh=1e-16,
                ylabel="gap of iterate k (NI error / exploitability) (mean over seeds)",
                colours=colours,
                xlabel="step k (best-response evaluations)",
            )
        elif self.log_x_panel and not self.has_simple_regret and ax is None:
            fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 4.8))
            plot_regret_curves(
                self.curves, title=title, ax=ax1, ylabel=ylab, value=primary, colours=colours, legend=False
            )
            plot_regret_curves(
                self.curves, title="log-scaled rounds", ax=ax2, log_x=True, ylabel=ylab, value=primary, colours=colours
            )
        elif self.has_simple_regret and ax is None:
            fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 4.8))
            plot_regret_curves(
                self.curves, title=title, ax=ax1, log_x=log_x, ylabel=f"{name} {stat}", colours=colours, legend=False
            )
            plot_regret_curves(
                self.curves,
                title="simple regret of the best point so far",
                ax=ax2,
                log_x=log_x,
                value="simple_regret",
                log_y=True,
                ylabel=f"simple regret f* - max_s f(x_s) {stat}",
                colours=colours,
            )
        else:
            fig = plot_regret_curves(
                self.curves, title=title, ax=ax, log_x=log_x, colours=colours, value=primary, ylabel=ylab
            )
        if path is not None:
            _save_figure(fig, path)
        return fig

    def makespan_curves(self) -> tuple[pd.DataFrame, str, str]:
        """The per-step makespan curves as ``(curves, value column, y label)``: the gap to the reference in %,
        ``100 (C_t - C_ref) / C_ref``, per run (``gap_pct``) when every run's instance has a reference, else the
        makespan itself (instances of different sizes then mix, so the label says so)."""
        c = self.curves[self.curves.makespan.notna()].copy() if "makespan" in self.curves.columns else self.curves
        # an agent that is a reference line rather than a walk of the env (cpsat on FJSPImprove-v0) reports its
        # own makespan in its diagnostics: a flat line at that value, not the env's untouched start
        if len(c) and "diagnostics" in self.runs.columns:
            for r in self.runs.itertuples():
                d = r.diagnostics if isinstance(r.diagnostics, Mapping) else {}
                if "makespan" in d:
                    c.loc[(c.agent == r.agent) & (c.seed == r.seed), "makespan"] = float(d["makespan"])
        ref = None
        if "reference" in self.runs.columns and len(c):
            per_seed = self.runs.dropna(subset=["reference"]).drop_duplicates("seed").set_index("seed")["reference"]
            ref = c.seed.map(per_seed).astype(float)
        import importlib

        what = getattr(importlib.import_module(env_class(self.env_id).__module__), "MAKESPAN_OF", "the schedule")
        if ref is not None and np.isfinite(ref.to_numpy()).all() and (ref > 0).all():
            c["gap_pct"] = 100.0 * (c.makespan.to_numpy(dtype=float) - ref.to_numpy()) / ref.to_numpy()
            return c, "gap_pct", f"C_max of {what}: gap to reference [%]\n(mean over instances)"
        return c, "makespan", f"C_max of {what} [time units]\n(mean over instances)"

    def plot_makespan(self, *, ax=None, log_x: bool = False):
        """Scheduling envs (``PLOT_KIND = "makespan"``): the makespan after every step (``FJSPImprove-v0``: the
        incumbent's; ``FJSP-v0``: the partial schedule's), as the gap to the reference in % where every instance
        has one (:meth:`makespan_curves`), mean over the seeds' instances with a 95 % bootstrap band per agent.
        Returns the figure."""
        import matplotlib.pyplot as plt

        from papergym.leaderboard.runner.plots import plot_regret_curves

        curves, value, ylab = self.makespan_curves()
        ranked = (
            [a for a, r in zip(self.summary.agent, self.summary.role) if r != "oracle"] if len(self.summary) else []
        )
        cmap = plt.get_cmap("tab10" if len(ranked) <= 10 else "tab20")
        colours = {a: cmap(i % cmap.N) for i, a in enumerate(ranked)}
        kw = ", ".join(
            f"{k}={v}"
            for k, v in self.env_kwargs.items()
            if k in ("instances", "family", "instance", "init", "horizon") and v is not None
        )
        fig = plot_regret_curves(
            curves,
            title=f"{self.env_id}  {kw}",
            ax=ax,
            log_x=log_x,
            ylabel=ylab,
            value=value,
            colours=colours,
            xlabel="step t",
        )
        if value == "gap_pct":
            (ax or fig.axes[0]).axhline(0.0, color="0.2", lw=0.8, ls=":", zorder=0)
        return fig

    def format_table(self) -> str:
        """The summary as a plain-text table (columns of env-specific scores only where present)."""
        s = self.summary
        if s.empty:
            return "(no results)"
        if self.per_instance and {"makespan", "instance"} <= set(self.runs.columns):
            return self.format_instance_table()

        def num(v, fmt=None):
            if v is None or not np.isfinite(v):
                return "-"
            return format(v, fmt) if fmt else _fmt_num(v)

        def present(col):
            return col in s.columns and np.isfinite(s[col].to_numpy(dtype=float)).any()

        cols: list[tuple[str, Any]] = [
            ("agent", lambda r: r.agent + (" (oracle)" if r.role == "oracle" else "")),
            (self.regret_column, lambda r: num(r.final_regret)),
            (
                "95% CI",
                lambda r: f"[{_fmt_num(r.ci_low)}, {_fmt_num(r.ci_high)}]" if np.isfinite(r.final_regret) else "-",
            ),
        ]
        if present("static_regret"):
            cols += [
                ("static regret", lambda r: num(r.static_regret)),
                (
                    "95% CI  ",
                    lambda r: (
                        f"[{_fmt_num(r.static_ci_low)}, {_fmt_num(r.static_ci_high)}]"
                        if np.isfinite(r.static_regret)
                        else "-"
                    ),
                ),
            ]
        if present("normalized_regret"):
            cols.append(("norm. regret", lambda r: num(r.normalized_regret, ".3f")))
        if present("regret_per_ln_n"):
            cols += [
                ("R/ln n", lambda r: num(r.regret_per_ln_n)),
                ("R/sqrt(nmd)", lambda r: num(r.regret_per_sqrt_nmd, ".4f")),
            ]
        if self.has_simple_regret:
            cols += [
                ("R(T/2)", lambda r: num(r.regret_half)),
                ("flatness", lambda r: num(r.flatness, ".3f")),
                ("simple regret", lambda r: num(r.simple_regret, ".2e")),
                (
                    "95% CI ",
                    lambda r: (
                        f"[{r.simple_ci_low:.2e}, {r.simple_ci_high:.2e}]" if np.isfinite(r.simple_regret) else "-"
                    ),
                ),
            ]
        if present("gap_last"):  # games and mean-field minimisation (oracle.episode_metrics)
            cols += [
                ("gap last", lambda r: num(r.gap_last, ".2e")),
                ("gap avg-iterate", lambda r: num(r.gap_avg, ".2e")),
            ]
            if present("ni_last") and not np.allclose(
                s.ni_last.to_numpy(dtype=float), s.gap_last.to_numpy(dtype=float), rtol=1e-9, atol=1e-15, equal_nan=True
            ):
                cols += [("NI last", lambda r: num(r.ni_last, ".2e")), ("NI avg", lambda r: num(r.ni_avg, ".2e"))]
            cols += [
                ("steps to tol", lambda r: num(r.steps_to_tol, ".1f")),
                ("rate", lambda r: num(r.rate, ".4f")),
                ("cycling", lambda r: num(r.cycling, ".2f")),
            ]
            if present("w1_last"):
                cols.append(("W1 to mu*", lambda r: num(r.w1_last, ".2e")))
            if present("diverged"):
                cols.append(("diverged", lambda r: num(r.diverged, ".2f")))
            if present(
                "contraction_bound"
            ):  # the oracle's contractivity (envs/games: l1 bound; mean field: W1 constant)
                cols += [
                    ("kappa", lambda r: num(r.contraction_bound, ".3g")),
                    ("contractive", lambda r: num(r.contractive, ".2f")),
                ]
            if present("converged"):
                cols.append(("status", _game_status))
        if present("sum_sigma"):
            cols.append(("sum sigma(x_t)", lambda r: num(r.sum_sigma)))
        if present("restarts"):
            cols.append(("restarts", lambda r: num(r.restarts, ".1f")))
        if present("gr_draws_per_round"):
            cols.append(("GR draws/round", lambda r: num(r.gr_draws_per_round, ".1f")))
        if present("cap_hits") and np.nansum(s.cap_hits.to_numpy(dtype=float)) > 0:
            cols.append(("cap hits", lambda r: num(r.cap_hits, ".1f")))
        if present("detections"):
            cols += [
                ("detected", lambda r: num(r.detections, ".1f")),
                ("false alarms", lambda r: num(r.false_alarms, ".1f")),
                ("delay", lambda r: num(r.mean_delay, ",.0f")),
            ]
        cols += [
            ("ms/step", lambda r: num(r.sec_per_1k_steps, ".4f")),
            ("ok runs", lambda r: f"{int(r.n_ok)}/{int(r.n_ok + r.n_failed)}"),
        ]
        head = [c[0].strip() for c in cols]
        rows = [[f(r) for _, f in cols] for _, r in s.iterrows()]
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]

        def fmt(cells):
            return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

        out = [fmt(head), "-" * len(fmt(head))]
        out += [fmt(row) for row in rows]
        return "\n".join(out)

    def format_instance_table(self) -> str:
        """Scheduling envs: makespan, gap to the reference and seconds per instance and agent, then a
        summary per agent over the instance set (mean gap over the instances with a reference, mean
        makespan, mean seconds, instances at or below the reference, failed runs)."""
        runs = self.runs
        ok = runs[runs.status == "ok"]
        agents = list(self.summary.agent)
        names = list(dict.fromkeys(ok.sort_values("seed").instance)) if len(ok) else []
        head = ["instance", "LB", "ref"] + [
            f"{a}{' (ref. line)' if r == 'oracle' else ''}" for a, r in zip(self.summary.agent, self.summary.role)
        ]
        rows = []
        for name in names:
            sub = ok[ok.instance == name]
            first = sub.iloc[0]
            ref = first.reference
            row = [str(name), f"{first.lower_bound:.0f}", "-" if not np.isfinite(ref) else f"{ref:.0f}"]
            for a in agents:
                ra = sub[sub.agent == a]
                if not len(ra):
                    row.append("failed" if len(runs[(runs.agent == a)]) else "-")
                    continue
                c, g, sec = ra.makespan.mean(), ra.gap.mean(), ra.seconds.mean()
                gtxt = f" {100 * g:+.1f}%" if np.isfinite(g) else ""
                row.append(f"{c:.0f}{gtxt} {sec:.2f}s")
            rows.append(row)
        summ = []
        for a in agents:
            ra = ok[ok.agent == a]
            gaps = ra.gap.to_numpy(dtype=float)
            gaps = gaps[np.isfinite(gaps)]
            at = int((ra.makespan <= ra.reference).sum()) if len(ra) else 0
            n_fail = int(((runs.agent == a) & (runs.status != "ok")).sum())
            summ.append(
                [
                    a,
                    f"{100 * gaps.mean():+.2f}%" if gaps.size else "-",
                    f"{ra.makespan.mean():.1f}" if len(ra) else "-",
                    f"{ra.seconds.mean():.2f}" if len(ra) else "-",
                    f"{at}/{len(ra)}",
                    str(n_fail),
                ]
            )
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]

        def fmt(cells, w):
            return "  ".join(c.ljust(x) if i == 0 else c.rjust(x) for i, (c, x) in enumerate(zip(cells, w)))

        out = [fmt(head, widths), "-" * len(fmt(head, widths))] + [fmt(r, widths) for r in rows]
        sh = ["agent", "mean gap", "mean C_max", "mean s", "<= ref", "failed"]
        sw = [max(len(h), *(len(r[i]) for r in summ)) for i, h in enumerate(sh)]
        out += ["", fmt(sh, sw), "-" * len(fmt(sh, sw))] + [fmt(r, sw) for r in summ]
        if "below_lower_bound" in ok.columns and (ok.below_lower_bound > 0).any():
            bad = ok[ok.below_lower_bound > 0]
            out.append(
                "\nERROR: makespan below a proven lower bound (a data error or a broken schedule): "
                + ", ".join(
                    f"{r.agent} on {r.instance} ({r.makespan:.0f} < {r.lower_bound:.0f})" for r in bad.itertuples()
                )
            )
        sources = sorted({s for s in ok.get("reference_source", pd.Series(dtype=str)).dropna() if s})
        if sources:
            out.append(f"\nreferences: {', '.join(sources)} (data/bks.json, data/references.json)")
        return "\n".join(out)

    def save(self, folder: str | os.PathLike) -> Path:
        """Write ``summary.csv``, ``runs.parquet``, ``curves.parquet``, ``table.txt``, ``config.json`` and the
        figure ``<figure_name>.png/.svg`` (``regret``, or ``makespan`` for scheduling envs)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.summary.to_csv(folder / "summary.csv", index=False)
        runs = self.runs.copy()
        runs["diagnostics"] = runs["diagnostics"].map(canonical_json)
        # self-describing rows: the env and its arguments travel with every run (also in config.json)
        runs.insert(0, "env_id", self.env_id)
        runs.insert(1, "env_kwargs", canonical_json(_canon(self.env_kwargs)))
        runs.to_parquet(folder / "runs.parquet", index=False)
        self.curves.to_parquet(folder / "curves.parquet", index=False)
        seeds = sorted({int(x) for x in self.runs["seed"]}) if "seed" in self.runs.columns and len(self.runs) else []
        span = (
            f"{len(seeds)} seeds ({seeds[0]}..{seeds[-1]})"
            if seeds and seeds == list(range(seeds[0], seeds[-1] + 1))
            else f"{len(seeds)} seeds"
        )
        header = f"# {self.env_id} {canonical_json(_canon(self.env_kwargs))}, {span}\n"
        (folder / "table.txt").write_text(header + self.format_table() + "\n")
        (folder / "config.json").write_text(
            json.dumps({"env_id": self.env_id, "env_kwargs": _canon(self.env_kwargs)}, indent=1)
        )
        if not self.curves.empty:
            import matplotlib.pyplot as plt

            fig = self.plot(folder / self.figure_name)
            plt.close(fig)
        return folder


def _save_figure(fig, path: str | os.PathLike) -> None:
    """``<path>.png`` (150 dpi) and ``<path>.svg`` (a ``.png`` / ``.svg`` suffix of ``path`` replaced), with
    ``bbox_inches="tight"`` so legends outside the axes are kept."""
    stem = Path(path)
    stem = stem.with_suffix("") if stem.suffix in (".png", ".svg") else stem
    stem.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(stem.with_suffix(".png"), dpi=150, bbox_inches="tight")
    fig.savefig(stem.with_suffix(".svg"), bbox_inches="tight")


def _fmt_num(v: float) -> str:
    """Regret-like numbers: ``12,345.6``, ``3.142``, ``4.20e-05``."""
    if not np.isfinite(v):
        return "-"
    a = abs(v)
    if a >= 100:
        return f"{v:,.1f}"
    if a >= 0.01 or a == 0:
        return f"{v:.3f}"
    return f"{v:.2e}"


SCORE_COLUMNS = (
    "L_tilde",
    "normalized_regret",
    "detections",
    "false_alarms",
    "mean_delay",
    "regret_per_ln_n",
    "regret_per_sqrt_nmd",
)


def _nanmean(col: pd.Series) -> float:
    x = col.to_numpy(dtype=float)
    return float(np.nanmean(x)) if np.isfinite(x).any() else np.nan


_BASE_RUN_COLUMNS = (
    "agent",
    "role",
    "seed",
    "status",
    "final_regret",
    "regret_half",
    "flatness",
    "simple_regret",
    "static_regret",
    "seconds",
    "sec_per_1k_steps",
    "diagnostics",
    "key",
    "error",
)


def _summarise(runs: pd.DataFrame, agent_order: Sequence[str]) -> pd.DataFrame:
    extra = [
        c
        for c in runs.columns
        if c not in _BASE_RUN_COLUMNS
        and c not in SCORE_COLUMNS
        and (pd.api.types.is_numeric_dtype(runs[c]) or runs[c].isna().all())
    ]
    rows = []
    for name in agent_order:
        r = runs[runs.agent == name]
        ok = r[r.status == "ok"]
        est, lo, hi = bootstrap_ci(ok.final_regret.to_numpy()) if len(ok) else (np.nan,) * 3
        row = {
            "agent": name,
            "role": r.role.iloc[0] if len(r) else "",
            "final_regret": est,
            "ci_low": lo,
            "ci_high": hi,
            "regret_half": _nanmean(ok.regret_half),
            "flatness": _nanmean(ok.flatness),
        }
        if "simple_regret" in runs.columns:
            sv = ok.simple_regret.to_numpy(dtype=float)
            sv = sv[np.isfinite(sv)]
            se, slo, shi = bootstrap_ci(sv) if len(sv) else (np.nan,) * 3
            row.update({"simple_regret": se, "simple_ci_low": slo, "simple_ci_high": shi})
        if "static_regret" in runs.columns:
            sv = ok.static_regret.to_numpy(dtype=float)
            sv = sv[np.isfinite(sv)]
            se, slo, shi = bootstrap_ci(sv) if len(sv) else (np.nan,) * 3
            row.update({"static_regret": se, "static_ci_low": slo, "static_ci_high": shi})
        # scalar diagnostics of the agents (restarts, sum_sigma, ...): means over the runs
        for col in extra:
            row[col] = _nanmean(ok[col])
        row.update(
            {
                "sec_per_1k_steps": float(ok.sec_per_1k_steps.mean()) if len(ok) else np.nan,
                "n_ok": len(ok),
                "n_failed": len(r) - len(ok),
            }
        )
        # env-specific run scores (e.g. L_tilde, normalized_regret, detections): means over the runs
        for col in SCORE_COLUMNS:
            if col in runs.columns:
                row[col] = _nanmean(ok[col])
        rows.append(row)
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df["_oracle"] = df.role == "oracle"
    return (
        df.sort_values(["_oracle", "final_regret"], na_position="last").drop(columns="_oracle").reset_index(drop=True)
    )


# ------------------------------------------------------------------------------------------- compare
def _chunk(seq: Sequence[int], size: int) -> list[list[int]]:
    return [list(seq[i : i + size]) for i in range(0, len(seq), size)]


def compare(
    env_id: str,
    agents: Iterable[str] | None = None,
    seeds: Iterable[int] = range(10),
    horizon: int | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    backend: str = "joblib",
    out: str | os.PathLike | None = None,
    cache: bool = True,
    *,
    hyperparameters: Mapping[str, Mapping[str, Any]] | None = None,
    n_jobs: int | None = None,
    scheduler: Any = None,
    mode: str = "auto",
    batch_size: int | None = None,
    progress: Any = None,
    instance_metrics: bool = True,
    progress_every: float = DEFAULT_EVERY,
) -> CompareResult:
    """Run every agent on ``env_id`` for every seed and collect dynamic-regret results.

    Parameters
    ----------
    env_id:
        A registered papergym env id (``"NonStatLipschitz-v0"``).
    agents:
        Registered agent names (default: every agent registered for the env).
    seeds:
        Run seeds (each splits into instance, noise and agent streams).
    horizon, env_kwargs:
        Env constructor arguments (``horizon`` overrides ``env_kwargs["horizon"]``).
    backend:
        ``"serial"``, ``"joblib"`` (default) or ``"dask"`` (see :mod:`~papergym.leaderboard.runner.executors`).
    out:
        Folder of cell files (default: :func:`default_cache_dir`).
    cache:
        Reuse finished cells found in ``out`` (failed cells are always rerun).
    hyperparameters:
        ``{agent: {name: value}}`` passed to the agents' factories (part of the cell key).
    n_jobs, scheduler:
        Workers; dask scheduler address, ``"slurm"`` or a ``distributed.Client``.
    mode:
        ``"auto"`` (batched where available), ``"batched"`` or ``"per-run"``.
    batch_size:
        Seeds per job (default: enough jobs to keep every worker busy, at most 100 seeds a job).
        Results do not depend on it.
    progress:
        ``None`` (default): a progress bar when stderr is a terminal, else a line logged every
        ``progress_every`` seconds (:class:`~papergym.leaderboard.runner.progress.RunProgress`); ``True``: a
        bar anyway; ``False``: nothing. A :class:`~papergym.leaderboard.runner.progress.RunProgress` of the
        caller (e.g. :func:`~papergym.leaderboard.runner.sweep.sweep`'s) is told of the runs instead.
    progress_every:
        Seconds between two progress lines off a terminal (``0``: none).
    instance_metrics:
        Where the env's oracle defines ``instance_metrics()`` and ``score_run(...)`` (for
        ``NonStatLipschitz-v0``: significant shifts ``L~``, normalised regret, detections, false alarms
        and detection delays), compute the instance facts once per seed (cached like the runs) and
        score every run with them.
    """
    import papergym.envs as penvs

    base_id = penvs.check_env_id(env_id)
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid backends: {', '.join(BACKENDS)}")
    if mode not in ("auto", "batched", "per-run"):
        raise ValueError(f"mode must be 'auto', 'batched' or 'per-run', got {mode!r}")
    registered = [a.name for a in list_agents(base_id)]
    agent_list = list(registered if agents is None else agents)
    if isinstance(agents, str):
        raise TypeError("agents must be a list of names, not a string")
    if not agent_list:
        raise ValueError("no agents to compare")
    for a in agent_list:
        get_agent_info(a, base_id)  # raises with the valid names
    agent_list = list(dict.fromkeys(agent_list))
    seed_list = list(dict.fromkeys(int(s) for s in seeds))
    for s in seed_list:
        if s < 0:
            raise ValueError(f"seeds must be non-negative integers, got {s}")
    if not seed_list:
        raise ValueError("no seeds given")
    hps = {k: dict(v) for k, v in (hyperparameters or {}).items()}
    unknown_hp = sorted(set(hps) - set(agent_list))
    if unknown_hp:
        raise ValueError(f"hyperparameters given for agents not compared: {unknown_hp}")
    kwargs = resolve_env_kwargs(base_id, env_kwargs, horizon)
    validate_hyperparameters(base_id, hps, kwargs)
    out_dir = Path(out) if out is not None else default_cache_dir()
    env_hash = _file_hash(env_class(base_id))

    cells: dict[tuple[str, int], Cell] = {}
    for a in agent_list:
        info = get_agent_info(a, base_id)
        for s in seed_list:
            cells[(a, s)] = Cell(base_id, env_hash, kwargs, a, info.code_hash, hps.get(a, {}), s)

    results: dict[tuple[str, int], tuple[dict, pd.DataFrame | None]] = {}
    missing: dict[str, list[int]] = {}
    for (a, s), cell in cells.items():
        got = _read_cell(_cell_path(out_dir, cell)) if cache else None
        if got is not None and got[0].get("key") == cell.key:
            results[(a, s)] = got
        else:
            missing.setdefault(a, []).append(s)

    # per-seed instance facts (e.g. significant shifts), shared by all agents, cached as JSON
    oracle_cls = _oracle_class(base_id, kwargs) if instance_metrics else None
    scorer = getattr(oracle_cls, "score_run", None)
    inst_cells = {s: Cell(base_id, env_hash, kwargs, INSTANCE, "", {}, s) for s in seed_list}
    instances: dict[int, dict[str, Any]] = {}
    inst_missing: list[int] = []
    if oracle_cls is not None and hasattr(oracle_cls, "instance_metrics"):
        for s, cell in inst_cells.items():
            rec = cellcache.read_json(_instance_path(out_dir, cell)) if cache else None
            if rec is not None and rec.get("key") == cell.key:
                instances[s] = rec["info"]
            else:
                inst_missing.append(s)

    n_workers = 1 if backend == "serial" else (n_jobs or default_n_jobs())
    n_missing = sum(len(v) for v in missing.values())
    if batch_size is None:
        per_job = max(1, math.ceil(n_missing / max(1, n_workers)))
        batch_size = min(100, per_job)
    regs = {a: _shipped_registration(get_agent_info(a, base_id)) for a in missing}
    jobs = [
        ("agent", base_id, kwargs, a, hps.get(a, {}), chunk, mode) + ((regs[a],) if regs[a] is not None else ())
        for a, ss in missing.items()
        for chunk in _chunk(ss, int(batch_size))
    ]
    inst_chunk = max(1, math.ceil(len(inst_missing) / max(1, n_workers)))
    jobs += [("instance", base_id, kwargs, chunk) for chunk in _chunk(inst_missing, inst_chunk)]
    errors: list[dict[str, Any]] = []
    if isinstance(progress, RunProgress):  # the caller's (a sweep's): cached runs need no work
        bar, own_bar = progress, False
        bar.skip(len(agent_list) * len(seed_list) - n_missing)
    elif jobs:
        bar, own_bar = (
            RunProgress(n_missing, f"compare {base_id}", unit="runs", enabled=progress, every=progress_every),
            True,
        )
        logger.info(
            "compare %s: %d of %d runs to compute (%d cached), %d job(s) on %s",
            base_id,
            n_missing,
            len(agent_list) * len(seed_list),
            len(agent_list) * len(seed_list) - n_missing,
            len(jobs),
            backend,
        )
    if jobs:
        try:
            for res_list in run_jobs(_run_job, jobs, backend=backend, n_jobs=n_jobs, scheduler=scheduler):
                for res in res_list:
                    a = res["agent"]
                    if a == INSTANCE:
                        cell = inst_cells[res["seed"]]
                        if res["status"] == "ok":
                            instances[res["seed"]] = res["info"]
                            record = {"cell": cell.as_dict(), "key": cell.key, "info": res["info"]}
                            cellcache.write_json(_instance_path(out_dir, cell), record)
                        else:
                            errors.append(
                                {
                                    "agent": a,
                                    "seed": res["seed"],
                                    "status": res["status"],
                                    "error": res["error"],
                                    "traceback": res["traceback"],
                                }
                            )
                        continue
                    cell = cells[(a, res["seed"])]
                    _write_cell(out_dir, cell, res)
                    if res["status"] == "ok":
                        df = pd.DataFrame({"t": res["t"], "cum_regret": res["cum_regret"]})
                        for name in EXTRA_CURVES:
                            if res.get(name) is not None:
                                df[name] = res[name]
                        meta = {
                            "key": cell.key,
                            "mode": res["mode"],
                            "seconds": res["seconds"],
                            "steps": res["steps"],
                            "diagnostics": res["diagnostics"],
                            "env_metrics": res.get("env_metrics") or {},
                        }
                        results[(a, res["seed"])] = (meta, df)
                    else:
                        errors.append(
                            {
                                "agent": a,
                                "seed": res["seed"],
                                "status": res["status"],
                                "error": res["error"],
                                "traceback": res["traceback"],
                            }
                        )
                    bar.update(1, failed=int(res["status"] != "ok"))
        finally:
            if own_bar:
                bar.close()
    score = None
    if scorer is not None and instances:

        def score(seed: int, final: float, diag: dict) -> dict[str, float]:
            info = instances.get(seed)
            return {} if info is None else scorer(info, final, diag, kwargs)
    elif scorer is not None and not hasattr(oracle_cls, "instance_metrics"):

        def score(seed: int, final: float, diag: dict) -> dict[str, float]:
            return scorer({}, final, diag, kwargs)

    ocls = oracle_cls if oracle_cls is not None else _oracle_class(base_id, kwargs)
    log_x_panel = bool(getattr(ocls, "PLOT_LOG_X_PANEL", False))
    res = _collect(base_id, kwargs, agent_list, seed_list, cells, results, errors, score, log_x_panel)
    res.per_instance = bool(getattr(ocls, "PER_INSTANCE_TABLE", False))
    res.plot_kind = _plot_kind(env_class(base_id))
    res.regret_name = _regret_name(env_class(base_id))
    if errors:
        import warnings

        e = errors[0]
        warnings.warn(
            f"{len(errors)} of {len(agent_list) * len(seed_list)} runs failed (see result.errors); first: "
            f"{e['agent']} seed {e['seed']}: {e['error']}",
            RuntimeWarning,
            stacklevel=2,
        )
    return res


_RESERVED = frozenset(
    {
        "agent",
        "role",
        "seed",
        "status",
        "final_regret",
        "regret_half",
        "flatness",
        "simple_regret",
        "static_regret",
        "seconds",
        "sec_per_1k_steps",
        "diagnostics",
        "key",
        "error",
    }
)


def _game_status(r: Any) -> str:
    """The runs' convergence statuses from the per-agent means of the one-hot flags of
    ``oracle.episode_metrics()`` (entropic games): e.g. ``converged 4/5, not converged 1/5``, ``grid-edge 1/1``."""
    n = int(r.n_ok)
    if n == 0:
        return "-"
    parts, seen = [], 0
    for name, col in (("converged", "converged"), ("grid-edge", "grid_edge"), ("not contractive", "not_contractive")):
        f = float(getattr(r, col, np.nan))
        k = round(f * n) if np.isfinite(f) else 0
        seen += k
        if k:
            parts.append(f"{name} {k}/{n}")
    if n - seen > 0:
        parts.append(f"not converged {n - seen}/{n}")
    return ", ".join(parts)


def _scalar_diagnostics(diag: Mapping[str, Any]) -> dict[str, float]:
    """The scalar numeric entries of an agent's diagnostics (lists and strings are left out)."""
    out = {}
    for k, v in diag.items():
        if k in _RESERVED or isinstance(v, (bool, np.bool_)):
            continue
        if isinstance(v, (int, float, np.integer, np.floating)):
            out[k] = float(v)
    return out


def _collect(
    env_id, kwargs, agent_list, seed_list, cells, results, errors, score=None, log_x_panel=False
) -> CompareResult:
    roles = {a: get_agent_info(a, env_id).role for a in agent_list}
    run_rows, curve_frames = [], []
    err_index = {(e["agent"], e["seed"]): e for e in errors}
    half = max(1, int(kwargs["horizon"]) // 2)
    for a in agent_list:
        for s in seed_list:
            got = results.get((a, s))
            if got is None:
                e = err_index.get((a, s), {})
                run_rows.append(
                    {
                        "agent": a,
                        "role": roles[a],
                        "seed": s,
                        "status": e.get("status", "missing"),
                        "final_regret": np.nan,
                        "regret_half": np.nan,
                        "flatness": np.nan,
                        "restarts": np.nan,
                        "seconds": np.nan,
                        "sec_per_1k_steps": np.nan,
                        "diagnostics": {},
                        "key": cells[(a, s)].key,
                        "error": e.get("error", ""),
                    }
                )
                continue
            meta, df = got
            diag = meta.get("diagnostics") or {}
            steps = meta.get("steps") or int(df.t.iloc[-1])
            final = float(df.cum_regret.iloc[-1])
            at_half = df.cum_regret[df.t == half]
            r_half = float(at_half.iloc[0]) if len(at_half) else np.nan
            row = {
                "agent": a,
                "role": roles[a],
                "seed": s,
                "status": "ok",
                "final_regret": final,
                "regret_half": r_half,
                "flatness": (final - r_half) / final if final > 0 else (0.0 if final == 0 else np.nan),
                "restarts": np.nan,
            }
            for name in EXTRA_CURVES:
                if name in df.columns:
                    row[name] = float(df[name].iloc[-1])
            row.update(_scalar_diagnostics(diag))
            # the env's own scores of the episode (oracle.episode_metrics(): a game's last/average-iterate gap,
            # steps to tolerance, rate); they overwrite an agent diagnostic of the same name
            row.update(_scalar_diagnostics(meta.get("env_metrics") or {}))
            primary = row.get("static_regret", final)  # the papers' regret where the two differ
            row.update(
                {
                    "seconds": float(meta["seconds"]),
                    "sec_per_1k_steps": 1000.0 * float(meta["seconds"]) / steps,
                    "diagnostics": diag,
                    "key": meta["key"],
                    "error": "",
                    **(score(s, primary, diag) if score is not None else {}),
                }
            )
            run_rows.append(row)
            cols = ["t", "cum_regret"] + [c for c in EXTRA_CURVES if c in df.columns]
            c = df[cols].copy()
            c.insert(0, "seed", s)
            c.insert(0, "role", roles[a])
            c.insert(0, "agent", a)
            curve_frames.append(c)
    runs = pd.DataFrame(run_rows)
    curves = (
        pd.concat(curve_frames, ignore_index=True)
        if curve_frames
        else pd.DataFrame(columns=["agent", "role", "seed", "t", "cum_regret"])
    )
    summary = _summarise(runs, agent_list)
    return CompareResult(
        env_id=env_id,
        env_kwargs=dict(kwargs),
        runs=runs,
        curves=curves,
        summary=summary,
        errors=errors,
        log_x_panel=log_x_panel,
    )


# solver benchmarks on tasks live in their own module; ``runner.bench`` is the same function
from papergym.leaderboard.runner.bench import BenchResult, bench  # noqa: E402,F401
