"""Learning-dynamics tasks (AGF, Lipschitz ResNets, diffusion disentanglement): per task the score table and
seconds, measured side by side in one run. The tasks and the papers' claims: docs/papers/agf.md,
docs/papers/lipschitz-resnets.md and docs/papers/diffusion-disentanglement.md.

``FeatureStaircase-v0`` — per setting (diagonal linear nets, linear nets, modular addition) and predictor: the mean
staircase error and its time / level / count / order terms, the median prediction seconds, the median seconds of the
gradient-descent run the prediction replaces (the evaluator's ground truth, per alpha) and their ratio, and the
error of each baseline relative to AGF's (> 1: worse than AGF).

``LipschitzApprox-v0`` — per family and solver: the task's error (normalised RMSE / 1 − certified accuracy; 1 when the
certificate exceeds 1), the certified bound, the empirical lower bound, training seconds.

``SubspaceDisentangle-v0`` — per supervision and method: disentangle score, subspace error (principal angles), content
and style accuracy of the transfers, seconds.

    python benchmarks/bench_learning_dynamics.py                         # all three, dev seeds 0-2 (~40 min, 2 cores)
    python benchmarks/bench_learning_dynamics.py --only lipschitz --lip-dims 1,2,5
    python benchmarks/bench_learning_dynamics.py --only staircase --seeds 5
    python benchmarks/bench_learning_dynamics.py --smoke                 # every method on tiny instances, 1 seed
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from papergym.leaderboard import bench

STAIR = "FeatureStaircase-v0"
LIP = "LipschitzApprox-v0"
SUB = "SubspaceDisentangle-v0"


def _num(g: pd.DataFrame, col: str) -> np.ndarray:
    return pd.to_numeric(g[col], errors="coerce").to_numpy(dtype=float) if col in g else np.array([np.nan])


def _mean(a: np.ndarray) -> float:
    a = a[np.isfinite(a)]
    return float(np.mean(a)) if len(a) else np.nan


def _med(a: np.ndarray) -> float:
    a = a[np.isfinite(a)]
    return float(np.median(a)) if len(a) else np.nan


#: --smoke: the smallest instances of each task (every solver and setting still runs end to end)
SMOKE_KWARGS = {
    STAIR: {
        "d": [5],
        "a": [1.0],
        "alpha": [1e-2],
        "horizon": 20_000,
        "linear_d": [4],
        "linear_samples": 100,
        "linear_horizon": 20_000,
        "mod_p": 11,
        "mod_width": 6,
        "mod_horizon": 2_000,
    },
    LIP: {
        "epochs": 2,
        "n_train": 64,
        "grid_1d": 200,
        "grid_2d": 20,
        "n_test_uniform": 200,
        "emp_points": 100,
        "emp_steps": 2,
        "emp_starts": 2,
    },
    SUB: {"n": [64], "max_steps": 20},
}


def staircase(seeds: int, jobs: int | None, extra: dict | None = None) -> None:
    kw = {"setting": ["diagonal-linear", "linear", "modular-addition"], "seeds": list(range(seeds)), **(extra or {})}
    t0 = time.perf_counter()
    res = bench(STAIR, task_kwargs=kw, n_jobs=jobs, cache=False, progress=False)
    runs = res.runs[res.runs.status == "ok"]
    print(
        f"\n{STAIR}: staircase error (mean over instances), prediction vs simulated GD seconds "
        f"({time.perf_counter() - t0:.0f} s wall, dev seeds 0-{seeds - 1})"
    )
    head = (
        f"{'setting':<18}{'predictor':<20}{'error':>8}{'time':>7}{'level':>7}{'count':>7}{'order':>7}"
        f"{'pred s':>10}{'GD s':>8}{'GD/pred':>10}{'err/agf':>9}"
    )
    print(head + "\n" + "-" * len(head))
    for setting, g in runs.groupby("param_setting", sort=False):
        agf = _mean(_num(g[g.solver == "agf"], "staircase_error"))
        for lab, h in g.groupby("label", sort=True):
            e = _mean(_num(h, "staircase_error"))
            terms = [_mean(_num(h, c)) for c in ("time_error", "level_error", "count_error", "order_error")]
            ps, gs = _med(_num(h, "time_s")), _med(_num(h, "gd_seconds"))
            print(
                f"{setting:<18}{lab:<20}{e:>8.3f}"
                + "".join(f"{v:>7.3f}" for v in terms)
                + f"{ps:>10.2e}{gs:>8.1f}{gs / ps:>10.0f}{e / agf:>9.2f}"
            )


def _solver_table(res, group: str, cols: tuple[str, ...], title: str) -> None:
    runs = res.runs
    print(f"\n{title}")
    head = f"{group:<28}{'solver':<24}" + "".join(f"{c:>14}" for c in cols) + f"{'seconds':>10}{'failed':>8}"
    print(head + "\n" + "-" * len(head))
    gcol = f"param_{group}" if f"param_{group}" in runs else "instance"
    for (grp, lab), g in runs.groupby([gcol, "label"], sort=True):
        ok = g[g.status == "ok"]
        print(
            f"{str(grp):<28}{lab:<24}"
            + "".join(f"{_med(_num(ok, c)):>14.4g}" for c in cols)
            + f"{_med(_num(ok, 'seconds')):>10.1f}{len(g) - len(ok):>8}"
        )


def lipschitz(seeds: int, jobs: int | None, dims: list[int], extra: dict | None = None) -> None:
    t0 = time.perf_counter()
    res = bench(
        LIP,
        task_kwargs={"dims": dims, "seeds": list(range(seeds)), **(extra or {})},
        n_jobs=jobs,
        cache=False,
        progress=False,
    )
    _solver_table(
        res,
        "family",
        ("error", "cert_bound", "emp_lip"),
        f"{LIP}: medians over instances ({time.perf_counter() - t0:.0f} s wall, dev seeds 0-{seeds - 1})",
    )


def subspace(seeds: int, jobs: int | None, extra: dict | None = None) -> None:
    t0 = time.perf_counter()
    res = bench(
        SUB, task_kwargs={"seeds": list(range(seeds)), **(extra or {})}, n_jobs=jobs, cache=False, progress=False
    )
    _solver_table(
        res,
        "supervision",
        ("disentangle_score", "subspace_error", "content_acc", "style_acc"),
        f"{SUB}: medians over instances ({time.perf_counter() - t0:.0f} s wall, dev seeds 0-{seeds - 1})",
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--only",
        choices=["staircase", "lipschitz", "subspace"],
        action="append",
        help="run only these tasks (repeatable)",
    )
    ap.add_argument("--seeds", type=int, default=3, help="dev seeds 0..K-1 per configuration (default 3)")
    ap.add_argument("--jobs", type=int, default=None, help="joblib workers (default: all cores)")
    ap.add_argument(
        "--lip-dims",
        default="2",
        help="LipschitzApprox-v0 input dimensions (default 2; the task's "
        "default 1,2,5 with 5 seeds trains about 65 networks for up to 60 s each)",
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run: every solver on the smallest instances (SMOKE_KWARGS), 1 seed, 1 worker, dims 1",
    )
    a = ap.parse_args(argv)
    if a.seeds < 1:
        ap.error("--seeds must be >= 1")
    if a.smoke:
        a.seeds, a.jobs, a.lip_dims = 1, 1, "1"
    try:
        dims = [int(x) for x in a.lip_dims.split(",")]
    except ValueError:
        ap.error(f"--lip-dims must be a comma list of integers, got {a.lip_dims!r}")
    todo = a.only or ["staircase", "lipschitz", "subspace"]
    smoke = SMOKE_KWARGS if a.smoke else {}
    if "staircase" in todo:
        staircase(a.seeds, a.jobs, smoke.get(STAIR))
    if "lipschitz" in todo:
        lipschitz(a.seeds, a.jobs, dims, smoke.get(LIP))
    if "subspace" in todo:
        subspace(a.seeds, a.jobs, smoke.get(SUB))


if __name__ == "__main__":
    main()
