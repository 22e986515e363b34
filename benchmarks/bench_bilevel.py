"""Bilevel tasks: two tables measured side by side in one run.

``DecentralizedBilevel-v0`` — step-size robustness (the paper's claim): every solver re-run with its base step
``gamma`` on the task's grid {1e-3, 1e-2, 1e-1, 1, 10} (``step_size_grid=True``), on the ``syn`` ridge-tuning
family at the three scale pairs ``c_l:c_f`` of the task's default, graphs ``--graphs``, heterogeneity 0 and 1,
``--seeds`` dev seeds. Per solver: the median final log10 |grad Phi(x_bar)|^2 / c_f^2 over instances at each
gamma, then the median and the worst over the grid, the number of diverged runs, and the worst minus adasdbo's
worst (in decades: > 0 means less robust than AdaSDBO). AdaSDBO runs with its default hierarchical step rule
(``normalized``) and the two non-hierarchical ablations ``independent`` and ``independent-scaled``. ``--digits``
adds the digits family (slower).

``SimpleBilevel-v0`` — per family and solver: median work units and solver iterations to (1e-3, 1e-3)-
stationarity (PAR-2 over 1e5 units), the fraction of runs that got there, and the median work relative to
``dbgd``'s (< 1: cheaper than DBGD).

    python benchmarks/bench_bilevel.py                        # both tables, dev seeds 0-2 / 0-4 (~25 min, 2 cores)
    python benchmarks/bench_bilevel.py --only decentralized --graphs ring,torus,er --seeds 2
    python benchmarks/bench_bilevel.py --only simple --instances circle,min-norm-regression
    python benchmarks/bench_bilevel.py --only initial-steps --seeds 1 --first-seed 2000   # AdaSDBO, gamma vs m0
    python benchmarks/bench_bilevel.py --smoke          # the three tables on tiny instances, 1 seed, 1 worker

The tasks and the papers' claims: docs/papers/adasdbo.md (AdaSDBO) and docs/papers/dbgd.md (DBGD).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from papergym.envs.tasks.decentralized_bilevel.report import annotate
from papergym.leaderboard import bench

DEC = "DecentralizedBilevel-v0"
DEC_SOLVERS = ["adasdbo", "sldbo", "ma-dsbo", "mdbo", "dbo"]
SIMPLE = "SimpleBilevel-v0"
SIMPLE_SOLVERS = ["dbgd", "penalty", "dbgd-original", "a-irg", "two-phase"]
DIVERGED = 299.0
STEP_RULES = ("normalized", "independent", "independent-scaled")  # AdaSDBO: the default and two ablations


#: --smoke: the smallest instances (every solver, configuration and column still runs end to end)
SMOKE_DEC = {"agents": 4, "rounds": 20, "heterogeneity": [0.0], "scales": ["1:1"]}
SMOKE_SIMPLE = {
    "circle_dims": [2],
    "ranks": [5],
    "factor_rows": 10,
    "hidden": 5,
    "net_points": 5,
    "regression_rows": 5,
    "regression_dim": 10,
    "max_work": 2_000,
}


def decentralized(graphs, seeds, digits, jobs, extra: dict | None = None) -> None:
    fams = ["syn", "digits"] if digits else ["syn"]
    kw = {"family": fams, "graph": graphs, "seeds": list(range(seeds)), "step_size_grid": True, **(extra or {})}
    t0 = time.perf_counter()
    res = bench(
        DEC,
        solvers=DEC_SOLVERS,
        task_kwargs=kw,
        n_jobs=jobs,
        cache=False,
        progress=False,
        sweep={"adasdbo": {"step_rule": list(STEP_RULES)}},
    )
    ok = annotate(res.runs)
    grid = sorted(ok.gamma.dropna().unique())
    configs = list(dict.fromkeys(ok.config))
    for fam in fams:
        sub = ok[ok.param_family == fam]
        n_inst = sub.instance.nunique()
        print(
            f"\n{DEC} [{fam}]: final log10 |grad Phi|^2/c_f^2, median over {n_inst} instances per gamma "
            f"(graphs {','.join(graphs)}, scales 1:1, 10:0.1, 0.1:10, h in {{0, 1}})"
        )
        head = (
            f"{'solver':<38}"
            + "".join(f"{'g=' + format(g, 'g'):>9}" for g in grid)
            + f"{'median':>9}{'worst':>9}{'diverged':>10}{'worst-ada':>11}"
        )
        print(head + "\n" + "-" * len(head))
        worst_ada = None
        rows = []
        for s in configs:
            h = sub[sub.config == s]
            per = h.groupby("gamma").log10_hypergrad.median().reindex(grid)
            div = int((h.log10_hypergrad >= DIVERGED).sum())
            med, worst = float(per.median()), float(per.max())
            if s == f"adasdbo[step_rule={STEP_RULES[0]}]":
                worst_ada = worst
            rows.append((s, per, med, worst, div, len(h)))
        for s, per, med, worst, div, n in rows:
            cells = "".join(f"{v:>9.2f}" if v < DIVERGED else f"{'div':>9}" for v in per.to_numpy(dtype=float))
            wm = f"{worst - worst_ada:>11.2f}" if worst < DIVERGED and worst_ada is not None else f"{'div':>11}"
            print(
                f"{s:<38}{cells}{med:>9.2f}"
                + (f"{worst:>9.2f}" if worst < DIVERGED else f"{'div':>9}")
                + f"{f'{div}/{n}':>10}{wm}"
            )
        if fam == "digits":
            acc = sub.groupby(["config", "gamma"]).test_acc.median().unstack().reindex(configs)
            print("median test accuracy of y*(x_bar) per gamma:")
            print(acc.to_string(float_format=lambda v: f"{v:.3f}"))
    sec = res.runs.groupby("solver").seconds.median().reindex(DEC_SOLVERS)
    print("median seconds per solve: " + ", ".join(f"{s} {v:.2f}" for s, v in sec.items()))
    print(f"({time.perf_counter() - t0:.0f} s wall)")


def initial_steps(graphs, seeds, first_seed, jobs, extra: dict | None = None) -> None:
    """AdaSDBO alone on ``syn``: the final log10 |grad Phi|^2/c_f^2 (median / worst over instances) when the initial
    step is varied through the base step ``gamma`` (m0 = 1; every step scaled, for all rounds) and through the
    initial accumulator ``m0`` (gamma = 1; initial step 1/m0, the template's "initial step size" that the
    accumulators then adapt)."""
    kw = {"family": "syn", "graph": graphs, "seeds": list(range(first_seed, first_seed + seeds)), **(extra or {})}
    grid = [1e-3, 1e-2, 1e-1, 1.0, 10.0]
    t0 = time.perf_counter()
    print(
        f"\n{DEC} [syn], adasdbo: initial step eta_0 swept two ways, seeds {first_seed}..{first_seed + seeds - 1}, "
        f"graphs {','.join(graphs)} (median / worst final log10 |grad Phi|^2/c_f^2 over instances)"
    )
    print(f"{'knob':<24}" + "".join(f"{'eta0=' + format(g, 'g'):>14}" for g in grid) + f"{'spread':>9}")
    for knob, values in (("gamma (m0 = 1)", grid), ("m0 = 1/eta0 (gamma = 1)", [1.0 / g for g in grid])):
        name = "gamma" if knob.startswith("gamma") else "m0"
        res = bench(
            DEC,
            solvers=["adasdbo"],
            task_kwargs=kw,
            n_jobs=jobs,
            cache=False,
            progress=False,
            sweep={"adasdbo": {name: values}},
        )
        runs = res.runs[res.runs.status.isin(["ok", "diverged"])]
        cells, meds = "", []
        for v in values:
            h = runs[runs.label.str.endswith(f"{name}={v}]")].log10_hypergrad
            meds.append(float(h.median()))
            cells += f"{h.median():>7.2f}/{h.max():>6.2f}"
        print(f"{knob:<24}{cells}{max(meds) - min(meds):>9.2f}")
    print(f"({time.perf_counter() - t0:.0f} s wall)")


def simple(instances, seeds, jobs, extra: dict | None = None) -> None:
    kw = {"seeds": list(range(seeds)), **(extra or {})}
    if instances:
        kw["instance"] = instances
    t0 = time.perf_counter()
    res = bench(SIMPLE, solvers=SIMPLE_SOLVERS, task_kwargs=kw, n_jobs=jobs, cache=False, progress=False)
    from papergym.envs.tasks.simple_bilevel.report import first_stationary_iteration

    iters = first_stationary_iteration(res.curves)
    runs = res.runs[res.runs.status.isin(["ok", "diverged"])].copy()  # diverged: scored with the PAR-2 cap
    runs["iters"] = [iters.get(key, np.inf) for key in zip(runs.label, runs.instance, runs.seed)]
    print(
        f"\n{SIMPLE}: work units and solver iterations to (1e-3, 1e-3)-stationarity (PAR-2 work: 2e5 if never), "
        f"medians over seeds 0..{seeds - 1} and sizes"
    )
    head = (
        f"{'family':<24}{'solver':<15}{'work':>10}{'vs dbgd':>9}{'iters':>9}{'reached':>9}{'f - f*':>11}{'g - g*':>11}"
    )
    print(head + "\n" + "-" * len(head))
    for fam, sub in runs.groupby("param_family", sort=False):
        ref = float(sub[sub.solver == "dbgd"].par2_calls.median())
        for s in SIMPLE_SOLVERS:
            h = sub[sub.solver == s]
            w = float(h.par2_calls.median())
            it = float(pd.Series(h.iters).median())
            print(
                f"{fam:<24}{s:<15}{w:>10.0f}{w / ref:>9.2f}"
                + (f"{it:>9.0f}" if np.isfinite(it) else f"{'never':>9}")
                + f"{h.stationary.mean():>9.2f}"
                + "".join(_gap(h[c]) for c in ("f_gap", "g_gap"))
            )
    print(f"({time.perf_counter() - t0:.0f} s wall)")


def _gap(col: pd.Series) -> str:
    """The median of a gap column, or "-" where the family has no known optimum (min-norm-network's f*)."""
    col = col.dropna()
    return f"{col.median():>11.2e}" if len(col) else f"{'-':>11}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--only",
        choices=("decentralized", "simple", "initial-steps"),
        default=None,
        help="one table (initial-steps: AdaSDBO's initial step swept via gamma and via m0; not in the default)",
    )
    ap.add_argument("--first-seed", type=int, default=0, help="first seed of the initial-steps table (default 0)")
    ap.add_argument("--graphs", default="ring,er", help="DecentralizedBilevel graphs (default ring,er)")
    ap.add_argument("--seeds", type=int, default=None, help="dev seeds per configuration (default 3 / 5)")
    ap.add_argument("--digits", action="store_true", help="add the digits family to the robustness table")
    ap.add_argument("--instances", default=None, help="SimpleBilevel families, comma-separated (default all)")
    ap.add_argument("--jobs", type=int, default=None, help="workers (default: all cores)")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run: all three tables (initial-steps included) on the smallest instances (SMOKE_DEC, "
        "SMOKE_SIMPLE), graph ring, 1 seed, 1 worker",
    )
    a = ap.parse_args(argv)
    if a.smoke:
        graphs = ["ring"]
        if a.only in (None, "decentralized"):
            decentralized(graphs, 1, False, 1, SMOKE_DEC)
        if a.only in (None, "initial-steps"):
            initial_steps(graphs, 1, a.first_seed, 1, SMOKE_DEC)
        if a.only in (None, "simple"):
            simple([x for x in a.instances.split(",") if x] if a.instances else None, 1, 1, SMOKE_SIMPLE)
        return
    if a.only in (None, "decentralized"):
        decentralized([g for g in a.graphs.split(",") if g], a.seeds or 3, a.digits, a.jobs)
    if a.only == "initial-steps":
        initial_steps([g for g in a.graphs.split(",") if g], a.seeds or 2, a.first_seed, a.jobs)
    if a.only in (None, "simple"):
        simple([x for x in a.instances.split(",") if x] if a.instances else None, a.seeds or 5, a.jobs)


if __name__ == "__main__":
    main()
