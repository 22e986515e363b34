"""Optimizer tasks (DANA, local SGD, BCD, R-AdaGrad): one table per task, measured side by side in one run. The
tasks and the papers' claims: docs/papers/dana.md, docs/papers/local-sgd.md, docs/papers/bcd.md and
docs/papers/radagrad.md.

``PowerLawRandomFeatures-v0`` (DANA): per (alpha, beta, d), the median fitted loss exponent (slope of
log(P - P_inf) vs log t on the window [min(1e2, t_sat/10), t_sat], t_sat = min(T, T_r d^(2 alpha))) of every solver, its
ratio to SGD's (> 1: a steeper decay; the paper's headline is DANA > 1 and SGD-M ~ 1) and the final log10 excess ratio,
over ``--seeds`` seeds. ``DistributedRegression-v0`` (local SGD): per (spread, K), the median final log10 suboptimality
of local SGD and mini-batch SGD per second-order heterogeneity tau, and their difference (negative: local SGD ahead; the
paper's regime question), plus SCAFFOLD and AC-SA, on ``--seeds`` fresh seeds 100, 101, ... (never used for tuning),
with every solver's step tuned per K on dev seeds 0-1 (each method tuned over the same grid, as the paper's
comparisons do).
``DeepRegression-v0`` (BCD): per family and depth (leaky-ReLU), the median log10 training loss of ``bcd``, ``gd``
and ``adam`` after the full budget (500 sweeps / epochs) and at equal wall-clock seconds (the shortest solver's
total time on that instance, read off the anytime curves).
``LowRankRecovery-v0``: median oracle calls to relative error 1e-6 (PAR-2) per kappa for every solver on the
sensing family and on the regression family at kappa_H = 100 (rank 3, the solvers' default steps).

    python benchmarks/bench_optimizers.py                         # the task's 4 (alpha, beta) x d in {100, 200},
                                                                  # T = 1e5
    python benchmarks/bench_optimizers.py --d 400 --pairs 1.0:0.7 --seeds 5
    python benchmarks/bench_optimizers.py --only distributed --local-steps 1,10,50
    python benchmarks/bench_optimizers.py --only deep --seeds 3
    python benchmarks/bench_optimizers.py --only low-rank --seeds 3
    python benchmarks/bench_optimizers.py --smoke                 # the four tables on tiny instances, 1 seed, 1 worker
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from papergym.envs.tasks.power_law_features import DEFAULT_PAIRS
from papergym.envs.tasks.power_law_features.report import config_of, outscaling_regime
from papergym.leaderboard import bench

SOLVERS = ["sgd", "sgd-momentum", "dana-constant", "dana-decaying"]
#: --smoke: the smallest instances of the four tasks (every solver and column still runs end to end)
SMOKE_DIST = {"d": 10, "machines": 2, "rounds": 2}
SMOKE_DEEP = {"depth": [3], "width": 8, "n": 20, "max_sweeps": 5}
SMOKE_LOW_RANK = {"kappa": [1, 10], "m": 10, "n": 10, "max_calls": 200}


def plrf(pairs, d, steps, seeds, jobs, first_seed=0) -> None:
    seed_list = list(range(first_seed, first_seed + seeds))
    print(
        f"PowerLawRandomFeatures-v0: T = {steps}, B = 1, v = 4d, seeds {seed_list[0]}..{seed_list[-1]}; slope window "
        "[min(1e2, t_sat/10), t_sat], t_sat = min(T, T_r d^(2 alpha)); diverged runs counted, not averaged"
    )
    head = f"{'alpha':>6}{'beta':>6}{'d':>6}  {'solver':<15}{'slope':>8}{'vs sgd':>8}{'log10 excess':>14}{'s/solve':>9}"
    print(head + "\n" + "-" * len(head))
    t0 = time.perf_counter()
    for a, b in pairs:
        res = bench(
            "PowerLawRandomFeatures-v0",
            solvers=SOLVERS,
            task_kwargs={"alpha": a, "beta": b, "d": list(d), "steps": steps, "seeds": seed_list},
            n_jobs=jobs,
            cache=False,
            progress=False,
        )
        every = res.runs.copy()
        runs = every[every.status == "ok"].copy()
        runs["config"] = runs.instance.map(config_of)
        for dd in d:
            sub = runs[runs.param_d == dd]
            ref = sub[sub.label == "sgd"].slope.median()
            for s in SOLVERS:
                r = sub[sub.label == s]
                n_div = int(((every.param_d == dd) & (every.label == s) & (every.status == "diverged")).sum())
                sl = r.slope.median()
                print(
                    f"{a:>6g}{b:>6g}{dd:>6}  {s:<15}{sl:>8.3f}{sl / ref:>8.2f}{r.log10_excess.median():>14.2f}"
                    f"{r.seconds.median():>9.2f}" + (f"  ({n_div} diverged)" if n_div else "")
                )
            reg = outscaling_regime(a, b, dd, 4 * dd, steps)
            print(
                f"{'':>20}dana-decaying's momentum takes over at t_x = {reg['t_x']:.3g}, d-floor near "
                f"{reg['t_floor']:.3g}: "
                + (f"{reg['decades']:.1f} decades of outscaling range" if reg["decades"] > 0 else "no outscaling range")
            )
    print(f"({time.perf_counter() - t0:.0f} s)")


DIST_SOLVERS = ["local-sgd", "minibatch-sgd", "scaffold", "accelerated-minibatch-sgd"]
LR_GRID = [2.0**-j for j in range(0, 9)]


def tune_lr(K: int, dev_seeds=(0, 1), extra: dict | None = None) -> dict[str, float]:
    """Tuning rule: for each solver the step (lr = eta * H) of the grid {2^-j, j = 0..8} with the best median
    final log10 suboptimality over the public dev seeds ``dev_seeds`` at tau = 0.03, spread = 1 (the middle
    second-order and the largest first-order heterogeneity); frozen for the table, which is measured on fresh
    seeds 100, 101, ... (never tuned on)."""
    from papergym.agents.base import make_solver
    from papergym.envs.tasks.base import make_task

    task = make_task(
        "DistributedRegression-v0", tau=0.03, spread=1.0, local_steps=K, seeds=list(dev_seeds), **(extra or {})
    )
    best = {}
    for s in DIST_SOLVERS:
        scores = []
        for lr in LR_GRID:
            per_seed = []
            for ref in task.instances("dev"):
                problem, ev = task.make(ref)
                sol = make_solver(s, "DistributedRegression-v0", lr=lr).solve(
                    problem, task.default_budget, lambda *a, **k: None
                )
                per_seed.append(ev.evaluate(sol)["log10_subopt"])
            scores.append(float(np.median(per_seed)))
        best[s] = LR_GRID[int(np.argmin(scores))]
    return best


def distributed(local_steps, seeds, jobs, extra: dict | None = None) -> None:
    print(
        f"\nDistributedRegression-v0: d = 50, M = 8, R = 10, sigma = 0.5, fresh seeds 100..{99 + seeds}; "
        "steps tuned per (solver, K) on dev seeds 0-1 (tau = 0.03, spread = 1)"
    )
    for K in local_steps:
        lrs = tune_lr(K, extra=extra)
        print(f"\nK = {K}: tuned lr = eta * H: " + ", ".join(f"{s} {v:g}" for s, v in lrs.items()))
        res = bench(
            "DistributedRegression-v0",
            solvers=DIST_SOLVERS,
            task_kwargs={"local_steps": K, "seeds": list(range(100, 100 + seeds)), **(extra or {})},
            hyperparameters={s: {"lr": v} for s, v in lrs.items()},
            n_jobs=jobs,
            cache=False,
            progress=False,
        )
        print(res.extra_report())
        print(res.summary[["label", "geo_mean", "n_ok", "n_failed"]].to_string(index=False))


def deep(seeds, jobs, extra: dict | None = None) -> None:
    res = bench(
        "DeepRegression-v0",
        solvers=["bcd", "gd", "adam"],
        task_kwargs={
            "family": ["teacher", "random"],
            "activation": "leaky-relu",
            "depth": [3, 5],
            "seeds": list(range(seeds)),
            **(extra or {}),
        },
        n_jobs=jobs,
        cache=False,
        progress=False,
    )
    runs, curves = res.runs[res.runs.status == "ok"], res.curves
    print(f"\nDeepRegression-v0: leaky-ReLU, width 64, n = 200, 500 sweeps / epochs, seeds 0..{seeds - 1}")
    head = f"{'configuration':<26}{'solver':<8}{'log10 loss (end)':>18}{'at equal s':>12}{'equal s':>9}{'s/solve':>9}"
    print(head + "\n" + "-" * len(head))
    for cfg in dict.fromkeys(i.rsplit("/", 1)[0] for i in runs.instance):
        sub = runs[runs.instance.str.startswith(cfg + "/")]
        eq: dict[str, list[float]] = {s: [] for s in ("bcd", "gd", "adam")}
        tstars = []
        for inst in sub.instance.unique():
            c = curves[curves.instance == inst]
            tstar = min(c[c.label == s].seconds.max() for s in eq)
            tstars.append(tstar)
            for s in eq:
                cs = c[(c.label == s) & (c.seconds <= tstar)]
                eq[s].append(float(np.log10(cs.train_loss.iloc[-1])) if len(cs) else np.nan)
        for s in eq:
            r = sub[sub.label == s]
            print(
                f"{cfg:<26}{s:<8}{r.log10_train_loss.median():>18.2f}{np.nanmedian(eq[s]):>12.2f}"
                f"{np.median(tstars):>9.2f}{r.seconds.median():>9.2f}"
            )


def low_rank(seeds, jobs, extra: dict | None = None) -> None:
    res = bench(
        "LowRankRecovery-v0",
        solvers=["rgd", "radagrad", "radamw", "scaled-gd", "lora-adam", "factorized-gd"],
        task_kwargs={
            "kappa": [1, 10, 100, 1000],
            "kappa_H": [100],
            "rank": 3,
            "seeds": list(range(seeds)),
            **(extra or {}),
        },
        n_jobs=jobs,
        cache=False,
        progress=False,
    )
    print(
        f"\nLowRankRecovery-v0: m = n = 40, r* = r = 3, 5,000 oracle calls, seeds 0..{seeds - 1} "
        "(regression: kappa_H = 100)"
    )
    print(res.extra_report())


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", default=None, help="alpha:beta pairs, comma-separated (default: the task's four)")
    ap.add_argument("--d", default="100,200", help="model sizes (default 100,200)")
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=0, help="PowerLawRandomFeatures seeds start here (default 0)")
    ap.add_argument("--jobs", type=int, default=None, help="workers (default: all cores)")
    ap.add_argument(
        "--only", choices=("plrf", "distributed", "deep", "low-rank"), default=None, help="one task's table"
    )
    ap.add_argument("--local-steps", default="1,10,50", help="DistributedRegression K values (default 1,10,50)")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run: the four tables on the smallest instances (one (alpha, beta) pair, d = 20, "
        "T = 1000, K = 1, SMOKE_DIST / SMOKE_DEEP / SMOKE_LOW_RANK), 1 seed, 1 worker",
    )
    args = ap.parse_args(argv)
    if args.smoke:
        if args.only in (None, "plrf"):
            plrf(DEFAULT_PAIRS[:1], [20], 1000, 1, 1, args.first_seed)
        if args.only in (None, "distributed"):
            distributed([1], 1, 1, SMOKE_DIST)
        if args.only in (None, "deep"):
            deep(1, 1, SMOKE_DEEP)
        if args.only in (None, "low-rank"):
            low_rank(1, 1, SMOKE_LOW_RANK)
        return
    try:
        pairs = (
            DEFAULT_PAIRS
            if args.pairs is None
            else [tuple(float(x) for x in p.split(":")) for p in args.pairs.split(",") if p.strip()]
        )
        d = [int(x) for x in args.d.split(",") if x.strip()]
    except ValueError:
        ap.error("--pairs must look like 1.0:0.7,0.3:0.7 and --d like 100,200")
    if any(len(p) != 2 for p in pairs) or args.seeds < 1 or args.steps < 1:
        ap.error("--pairs needs alpha:beta pairs; --seeds and --steps must be >= 1")
    try:
        ks = [int(x) for x in args.local_steps.split(",") if x.strip()]
    except ValueError:
        ap.error("--local-steps must look like 1,10,50")
    if args.only in (None, "plrf"):
        plrf(pairs, d, args.steps, args.seeds, args.jobs, args.first_seed)
    if args.only in (None, "distributed"):
        distributed(ks, args.seeds, args.jobs)
    if args.only in (None, "deep"):
        deep(args.seeds, args.jobs)
    if args.only in (None, "low-rank"):
        low_rank(args.seeds, args.jobs)


if __name__ == "__main__":
    main()
