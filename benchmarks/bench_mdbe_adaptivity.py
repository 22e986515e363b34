"""MDBE's adaptivity on NonStatLipschitz-v0: insignificant changes, and the calibrated c0 (the README's MDBE tables).

    python benchmarks/bench_mdbe_adaptivity.py                 # ~4 min on one core
    python benchmarks/bench_mdbe_adaptivity.py --seeds 5 --quick   # short run (T = 2^12)
    python benchmarks/bench_mdbe_adaptivity.py --smoke             # every table at T = 2^8, 2 seeds, no cache (seconds)

Runs ``papergym compare`` cells (same cache, same numbers as the command) and prints, per experiment, the
comparison table and *paired* ratios over seeds (every agent faces the same instance and noise on a seed):
the ratio of mean regrets ``sum_s R_A(s) / sum_s R_B(s)`` with a 95 % percentile-bootstrap CI (seeds resampled
jointly for both agents) and the number of seeds where A's regret is below B's.

1. ``benign-changes`` (``L = T`` changes, ``L~ = 0`` significant shifts): ``mdbe`` and ``mdbe-calibrated``
   against ``restart-oracle`` (restarts binning + UCB at every change, i.e. every round) and
   ``binning-ucb-oracle`` (restarts at the significant shifts only: never here), at ``T = 2^14`` and ``10^5``.
2. ``mdbe-calibrated`` against ``mdbe`` (the authors' ``c0 = 0.12``) on ``two-peak-cyclic`` (the paper's
   experiment, ``T = 10^5``) and on two stationary instances (``benign-changes --static true`` and one seeded
   tent, ``piecewise-tents --phases 1``; the calibration ran on the latter family with other seeds).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from papergym.leaderboard.runner.compare import compare

ENV = "NonStatLipschitz-v0"


def paired_ratio(runs, a: str, b: str, n_boot: int = 10_000, seed: int = 0) -> tuple[float, float, float, int, int]:
    """(ratio of mean regrets a/b, CI low, CI high, seeds with R_a < R_b, seeds) over the seeds both finished."""
    ra = runs[(runs.agent == a) & (runs.status == "ok")].set_index("seed").final_regret
    rb = runs[(runs.agent == b) & (runs.status == "ok")].set_index("seed").final_regret
    seeds = sorted(set(ra.index) & set(rb.index))
    x, y = ra.loc[seeds].to_numpy(), rb.loc[seeds].to_numpy()
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(seeds), size=(n_boot, len(seeds)))
    reps = x[idx].sum(1) / y[idx].sum(1)
    lo, hi = np.quantile(reps, [0.025, 0.975])
    return float(x.sum() / y.sum()), float(lo), float(hi), int((x < y).sum()), len(seeds)


def run(
    title: str, agents: list[str], pairs: list[tuple[str, str]], seeds: int, horizon: int, cache: bool = True, **env
) -> None:
    t0 = time.perf_counter()
    res = compare(
        ENV,
        agents=agents,
        seeds=range(seeds),
        horizon=horizon,
        env_kwargs=env,
        n_jobs=1,
        progress=False,
        **({} if cache else {"cache": False}),
    )
    kw = " ".join(f"--{k.replace('_', '-')} {str(v).lower() if isinstance(v, bool) else v}" for k, v in env.items())
    print(
        f"\n=== {title}\n$ papergym compare {ENV} {kw} --horizon {horizon} --seeds {seeds} "
        f"--agents {','.join(agents)} --n-jobs 1   ({time.perf_counter() - t0:.0f} s)\n"
    )
    print(res.format_table())
    for a, b in pairs:
        r, lo, hi, wins, n = paired_ratio(res.runs, a, b)
        print(f"paired ratio R_T({a}) / R_T({b}) = {r:.3f} [{lo:.3f}, {hi:.3f}]; {a} lower on {wins}/{n} seeds")
    if res.errors:
        print(f"{len(res.errors)} run(s) failed: {res.errors[0]['error']}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="T = 2^12 everywhere (a short run)")
    ap.add_argument("--smoke", action="store_true", help="tiny run: T = 2^8 everywhere, 2 seeds, no cell cache")
    args = ap.parse_args(argv)
    n = 2 if args.smoke else args.seeds
    big = 2**8 if args.smoke else (2**12 if args.quick else 100_000)
    small = 2**8 if args.smoke else (2**12 if args.quick else 2**14)
    c = {"cache": False} if args.smoke else {}
    ref = ["mdbe", "mdbe-calibrated", "binning-ucb", "binning-ucb-oracle", "restart-oracle"]
    ratios = [("mdbe", "restart-oracle"), ("mdbe-calibrated", "restart-oracle"), ("mdbe", "binning-ucb-oracle")]
    for T in dict.fromkeys((small, big)):
        run(
            f"benign-changes, T = {T}: every round changes, no significant shift",
            ref,
            ratios,
            n,
            T,
            instance="benign-changes",
            **c,
        )
    cal = [("mdbe-calibrated", "mdbe")]
    run(
        "two-peak-cyclic (the paper's experiment)",
        ["mdbe", "mdbe-calibrated", "binning-ucb"],
        cal,
        n,
        big,
        instance="two-peak-cyclic",
        **c,
    )
    run(
        "stationary: benign-changes static twin",
        ["mdbe", "mdbe-calibrated", "binning-ucb"],
        cal,
        n,
        big,
        instance="benign-changes",
        static=True,
        **c,
    )
    run(
        "stationary: one seeded tent",
        ["mdbe", "mdbe-calibrated", "binning-ucb"],
        cal,
        n,
        big,
        instance="piecewise-tents",
        phases=1,
        **c,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
