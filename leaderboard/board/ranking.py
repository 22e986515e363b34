"""What a leaderboard shows: :class:`BenchmarkBoard` (one env or task) and :class:`Board` (all of them).

These are plain data (pandas DataFrames with the documented columns), assembled from the store by
:func:`build_board` and rendered by :mod:`papergym.leaderboard.board.html` (static site) and
:mod:`papergym.leaderboard.board.text` (terminal table).

``BenchmarkBoard.table`` -- one row per shown submission (the latest finished submission of each
(name, author) on the benchmark's current version), ranked rows first by rank, then unranked rows
(reference lines: roles ``oracle`` / ``reference``; incomplete or failed submissions; stale versions):

========================  =====================================================================
column                    meaning
========================  =====================================================================
submission_id             int, the store's id
name, author              str
role                      ``submission`` | ``paper`` | ``baseline`` | ``oracle`` | ``reference``
ranked                    bool: has a rank (all runs ok, role not oracle/reference)
rank                      float: point rank (1 = best; ties share the smallest rank); NaN if unranked
rank_lo, rank_hi          float: 95 % rank interval from the bootstrap replicates; NaN if unranked
tie                       bool: the point estimate equals another ranked row's
score                     float: the primary metric's aggregate (mean over strata of the per-stratum
                          mean over seeds)
ci_low, ci_high           float: 95 % stratified-bootstrap CI of ``score``
n_runs                    int, and one column per run status: ``n_ok``, ``n_error``, ``n_timeout``,
                          ``n_oom``, ``n_invalid_action``, ``n_diverged``
status                    str: the submission's status (``ok``, ``error``, ``timeout``, ``oom``,
                          ``invalid_action``, ``diverged``, ``partial`` (some runs failed), ``running``,
                          ``stale``)
message                   str: a short reason shown for failed submissions ('' otherwise)
code_sha256               str: full SHA-256 of the submitted source
date                      str: ISO-8601 UTC time the submission finished
========================  =====================================================================

``BenchmarkBoard.curves`` (envs; ``None`` for tasks) -- long format: ``submission_id, name, role, t,
mean, ci_low, ci_high`` (mean cumulative regret over every test run and its 95 % bootstrap band).
``BenchmarkBoard.profiles`` (tasks; ``None`` for envs) -- Dolan--More performance profiles:
``name, role, tau, fraction``.

``Board.overall`` -- across benchmarks: ``name, author, n_benchmarks, benchmarks, iqm, ci_low,
ci_high`` (IQM of the normalised scores of every run on every benchmark the (name, author) is ranked
on, with a stratified-bootstrap CI).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

__all__ = [
    "CURVE_COLUMNS",
    "OVERALL_COLUMNS",
    "PROFILE_COLUMNS",
    "RUN_STATUSES",
    "TABLE_COLUMNS",
    "BenchmarkBoard",
    "Board",
    "build_benchmark_board",
    "build_board",
    "metric_and_direction",
]

#: ``diverged``: the task's evaluator reported the metric ``diverged = 1`` (a non-finite or exploding objective,
#: or a run that left its accuracy gate); like ``timeout`` it is the solver's failure on that instance, scored by
#: the task (e.g. the PAR-2 cap), never ``ok``: the run is stored, the submission is not ranked
RUN_STATUSES: tuple[str, ...] = ("ok", "error", "timeout", "oom", "invalid_action", "diverged")

TABLE_COLUMNS: tuple[str, ...] = (
    "submission_id",
    "name",
    "author",
    "role",
    "ranked",
    "rank",
    "rank_lo",
    "rank_hi",
    "tie",
    "score",
    "ci_low",
    "ci_high",
    "n_runs",
    *(f"n_{s}" for s in RUN_STATUSES),
    "status",
    "message",
    "code_sha256",
    "date",
)
CURVE_COLUMNS: tuple[str, ...] = ("submission_id", "name", "role", "t", "mean", "ci_low", "ci_high")
PROFILE_COLUMNS: tuple[str, ...] = ("name", "role", "tau", "fraction")
OVERALL_COLUMNS: tuple[str, ...] = ("name", "author", "n_benchmarks", "benchmarks", "iqm", "ci_low", "ci_high")


@dataclass
class BenchmarkBoard:
    """The board of one env or task (module docstring for the columns)."""

    benchmark_id: str
    kind: str  # "env" | "task"
    version: str
    metric: str  # e.g. "final cumulative regret R_T"
    direction: str  # "min" | "max"
    description: str
    strata: list[str]
    n_seeds: int  # test seeds per stratum
    table: pd.DataFrame
    curves: pd.DataFrame | None = None
    curve_ylabel: str = "cumulative regret"
    profiles: pd.DataFrame | None = None
    profile_xlabel: str = "tau (time to target / best time to target)"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Board:
    """Every benchmark's board and the cross-benchmark table."""

    benchmarks: list[BenchmarkBoard]
    overall: pd.DataFrame
    generated: str  # ISO-8601 UTC


# ======================================================================================= assembly
_RANKED_ROLES = ("submission", "paper", "baseline")


def metric_and_direction(cfg: Any) -> tuple[str, str, str]:
    """(metric column, direction, human label) of a board."""
    if cfg.kind == "task":
        from papergym.envs.tasks.base import make_task

        task = make_task(cfg.benchmark_id, **dict(cfg.task_kwargs))
        metric = cfg.metric or task.primary
        direction = cfg.direction or task.metrics.get(metric, "min")
        return metric, direction, metric
    import importlib

    import gymnasium as gym

    import papergym.envs as penvs

    module = importlib.import_module(gym.spec(penvs.check_env_id(cfg.benchmark_id)).entry_point.split(":")[0])
    return "regret", "min", f"final {getattr(module, 'REGRET_NAME', 'regret')}"


#: the splits a board shows: ``test`` (hidden seeds, the service's ranked split) and ``local`` (a
#: submission evaluated by ``papergym submit`` on its author's machine, with that machine's secret; only
#: ever in that machine's own store). ``validation`` submissions are feedback for their authors, never
#: on a board.
BOARD_SPLITS: tuple[str, ...] = ("test", "local")


def _shown(store: Any, benchmark_id: str, version: str) -> pd.DataFrame:
    subs = store.submissions(benchmark_id, version=version, latest_only=True)
    return subs[subs["split"].isin(BOARD_SPLITS)].reset_index(drop=True) if len(subs) else subs


def build_benchmark_board(store: Any, benchmark_id: str, *, n_boot: int = 2000) -> BenchmarkBoard:
    """The board of one benchmark from the store: the current version of its board configuration (or
    the latest version in the store if nothing was scored on the current one)."""
    import numpy as np

    from papergym.leaderboard.board.configs import EnvBoardConfig, board_config, board_version
    from papergym.leaderboard.runner.stats import (
        bootstrap_mean_ci_columns,
        performance_profile,
        rank_table,
        stratified_bootstrap,
    )

    cfg = board_config(benchmark_id)
    version = board_version(cfg)
    subs = _shown(store, benchmark_id, version)
    if not len(subs):
        latest = store.latest_version(benchmark_id)
        if latest is not None and latest != version:
            version = latest
            subs = _shown(store, benchmark_id, version)
    metric, direction, label = metric_and_direction(cfg)
    if isinstance(cfg, EnvBoardConfig):
        strata = list(cfg.strata)
        expected = len(strata) * cfg.seeds
        n_seeds = cfg.seeds
    else:
        strata, expected, n_seeds = [], None, 0
    runs = (
        store.runs(submission_ids=[int(i) for i in subs.submission_id], split="test") if len(subs) else pd.DataFrame()
    )
    if not strata and len(runs):
        strata = sorted(runs.stratum.unique())
        n_seeds = int(runs.groupby(["submission_id", "stratum"]).size().max())
    if expected is None:
        expected = int(runs.groupby("submission_id").size().max()) if len(runs) else 0

    rows: list[dict[str, Any]] = []
    data: dict[str, dict[str, np.ndarray]] = {}
    complete: dict[int, dict[str, np.ndarray]] = {}
    for sub in subs.itertuples(index=False):
        r = runs[runs.submission_id == sub.submission_id] if len(runs) else runs
        counts = {s: int((r.status == s).sum()) if len(r) else 0 for s in RUN_STATUSES}
        ok = len(r) == expected and expected > 0 and counts["ok"] == expected and metric in r.columns
        if ok:
            vals = {st: r[r.stratum == st].sort_values("seed_index")[metric].to_numpy(dtype=float) for st in strata}
            ok = all(len(v) and np.isfinite(v).all() for v in vals.values())
            if ok:
                complete[int(sub.submission_id)] = vals
        ranked = bool(ok and sub.role in _RANKED_ROLES and sub.status == "ok")
        if ranked:
            data[str(sub.submission_id)] = complete[int(sub.submission_id)]
        status = sub.status
        rows.append(
            {
                "submission_id": int(sub.submission_id),
                "name": sub.name,
                "author": sub.author,
                "role": sub.role,
                "ranked": ranked,
                "rank": np.nan,
                "rank_lo": np.nan,
                "rank_hi": np.nan,
                "tie": False,
                "score": np.nan,
                "ci_low": np.nan,
                "ci_high": np.nan,
                "n_runs": len(r),
                **{f"n_{s}": counts[s] for s in RUN_STATUSES},
                "status": status,
                "message": (sub.message or "") if status != "ok" else "",
                "code_sha256": sub.code_sha256,
                "date": _iso(sub.finished_at),
            }
        )
    table = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    if data:
        rt = rank_table(data, direction, n_boot=n_boot)
        for key, rr in rt.iterrows():
            m = table.submission_id == int(key)
            for c in ("score", "ci_low", "ci_high", "rank", "rank_lo", "rank_hi", "tie"):
                table.loc[m, c] = rr[c]
    for sid, vals in complete.items():  # unranked but complete (reference lines): their score too
        m = (table.submission_id == sid) & ~table.ranked
        if m.any():
            b = stratified_bootstrap({"x": vals}, n_boot=n_boot)
            table.loc[m, ["score", "ci_low", "ci_high"]] = [b.estimate[0], b.low[0], b.high[0]]
    table["tie"] = table["tie"].astype(bool)
    table = table.sort_values(
        ["ranked", "rank", "score"], ascending=[False, True, direction == "min"], kind="stable"
    ).reset_index(drop=True)

    curves = profiles = None
    if isinstance(cfg, EnvBoardConfig):
        parts = []
        for sub in subs.itertuples(index=False):
            if int(sub.submission_id) not in complete:
                continue
            r = runs[runs.submission_id == sub.submission_id]
            mats = []
            t = None
            for p in r.curve_path:
                if not isinstance(p, str) or not p:
                    continue
                c = store.read_curve(p)
                col = "static_regret" if "static_regret" in c.columns else "cum_regret"
                mats.append(c[col].to_numpy(dtype=float))
                t = c["t"].to_numpy()
            if not mats or len({len(m) for m in mats}) != 1:
                continue
            mean, lo, hi = bootstrap_mean_ci_columns(np.vstack(mats), n_boot=500)
            parts.append(
                pd.DataFrame(
                    {
                        "submission_id": int(sub.submission_id),
                        "name": sub.name,
                        "role": sub.role,
                        "t": t,
                        "mean": mean,
                        "ci_low": lo,
                        "ci_high": hi,
                    }
                )
            )
        curves = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(CURVE_COLUMNS))
    else:
        cost_rows = []
        for sub in subs.itertuples(index=False):
            if sub.role not in ("submission", "paper", "baseline", "reference") or not len(runs):
                continue
            r = runs[runs.submission_id == sub.submission_id]
            if not len(r):
                continue
            for rr in r.itertuples(index=False):
                c = getattr(rr, cfg.profile_cost, np.nan) if cfg.profile_cost in r.columns else np.nan
                okk = getattr(rr, cfg.profile_success, 1.0) if cfg.profile_success in r.columns else 1.0
                solved = rr.status == "ok" and np.isfinite(c) and (okk is not None and okk >= 1)
                cost_rows.append(
                    {
                        "solver": sub.name,
                        "problem": f"{rr.stratum}/{rr.seed_index}",
                        "cost": float(c) if solved else np.inf,
                        "role": sub.role,
                    }
                )
        if cost_rows:
            cdf = pd.DataFrame(cost_rows)
            roles = cdf.groupby("solver").role.first()
            prof = performance_profile(cdf[["solver", "problem", "cost"]])
            prof["name"] = prof["solver"]
            prof["role"] = prof["solver"].map(roles)
            profiles = prof[list(PROFILE_COLUMNS)]
        else:
            profiles = pd.DataFrame(columns=list(PROFILE_COLUMNS))
    return BenchmarkBoard(
        benchmark_id=benchmark_id,
        kind=cfg.kind,
        version=version,
        metric=label,
        direction=direction,
        description=cfg.description,
        strata=list(strata),
        n_seeds=int(n_seeds),
        table=table,
        curves=curves,
        profiles=profiles,
        curve_ylabel="cumulative regret (static where the means switch)",
        extra={
            "metric_column": metric,
            "complete": complete,
            "local": bool(len(subs) and (subs["split"] == "local").any()),
        },
    )


def _iso(ts: Any) -> str:
    if ts is None or (isinstance(ts, float) and math.isnan(ts)):
        return ""
    try:
        return (
            pd.Timestamp(ts).tz_localize("UTC").isoformat()
            if pd.Timestamp(ts).tzinfo is None
            else pd.Timestamp(ts).tz_convert("UTC").isoformat()
        )
    except (ValueError, TypeError):
        return str(ts)


def build_board(store: Any, benchmark_ids: Any = None, *, n_boot: int = 2000) -> Board:
    """Every benchmark's board (all boards in :func:`~papergym.leaderboard.board.configs.board_ids` that have
    a registered version in the store, or ``benchmark_ids``) and the cross-benchmark IQM table."""
    import datetime as _dt

    import numpy as np

    from papergym.leaderboard.board.configs import board_ids
    from papergym.leaderboard.runner.stats import normalised_scores, stratified_bootstrap

    registered = set(store.benchmarks().benchmark_id) if len(store.benchmarks()) else set()
    ids = list(benchmark_ids) if benchmark_ids else [b for b in board_ids() if b in registered]
    boards = [build_benchmark_board(store, b, n_boot=n_boot) for b in ids]

    # normalised scores: per stratum, 1 = the best ranked reference (paper/baseline), 0 = the worst
    pooled: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    for bb in boards:
        complete = bb.extra.get("complete", {})
        tab = bb.table.set_index("submission_id")
        refs = [
            sid
            for sid in complete
            if sid in tab.index and tab.loc[sid, "ranked"] and tab.loc[sid, "role"] in ("paper", "baseline")
        ]
        if len(refs) < 2:
            continue
        for sid, vals in complete.items():
            if sid not in tab.index or not tab.loc[sid, "ranked"]:
                continue
            key = (str(tab.loc[sid, "name"]), str(tab.loc[sid, "author"]))
            for st, v in vals.items():
                means = [float(np.mean(complete[r][st])) for r in refs]
                best = min(means) if bb.direction == "min" else max(means)
                worst = max(means) if bb.direction == "min" else min(means)
                pooled.setdefault(key, {})[f"{bb.benchmark_id}/{st}"] = normalised_scores(v, best, worst, bb.direction)
    rows = []
    for (name, author), strata in sorted(pooled.items()):
        b = stratified_bootstrap({"x": strata}, aggregate="iqm", n_boot=n_boot)
        bench = sorted({k.split("/", 1)[0] for k in strata})
        rows.append(
            {
                "name": name,
                "author": author,
                "n_benchmarks": len(bench),
                "benchmarks": ", ".join(bench),
                "iqm": float(b.estimate[0]),
                "ci_low": float(b.low[0]),
                "ci_high": float(b.high[0]),
            }
        )
    overall = pd.DataFrame(rows, columns=list(OVERALL_COLUMNS))
    if len(overall):
        overall = overall.sort_values("iqm", ascending=False, kind="stable").reset_index(drop=True)
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    return Board(benchmarks=boards, overall=overall, generated=now)
