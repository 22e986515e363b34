"""Learning-systems tasks (LEAR, SymMPO, UFO-RL): per task the score table and seconds, measured side by side in
one run. The tasks and the papers' claims: docs/papers/lear.md, docs/papers/symmpo.md and docs/papers/ufo-rl.md.

``ContinualDomains-v0`` — per method: final accuracy A_T (batches of 32 and per sample), average incremental
accuracy, forgetting, backward and forward transfer, expert-selection accuracy, seconds.

``PreferenceHallucination-v0`` — per method: F1, CHAIR_i (hallucinated mentions), CHAIR_s, recall, the partner
hallucination rate, seconds.

``RLDataSelection-v0`` — per selection method: test accuracy after the evaluator's fixed GRPO recipe, accuracy gain,
selection seconds and token-forwards, training seconds; then the two figures of the paper's claims: the scoring-time
ratio of ``multi-sample-acc`` to ``ufo-rl`` (the paper reports up to 185x) and the accuracy at 10 % of the data
against ``full-data``.

    python benchmarks/bench_learning_systems.py                 # all three, dev seeds 0-2
    python benchmarks/bench_learning_systems.py --only data --seeds 5
    python benchmarks/bench_learning_systems.py --smoke         # every method of all three on tiny instances, 1 seed
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from papergym.leaderboard import bench

CONT = "ContinualDomains-v0"
PREF = "PreferenceHallucination-v0"
DATA = "RLDataSelection-v0"


def _num(g: pd.DataFrame, col: str) -> np.ndarray:
    return pd.to_numeric(g[col], errors="coerce").to_numpy(dtype=float) if col in g else np.array([np.nan])


def _mean(a: np.ndarray) -> float:
    a = a[np.isfinite(a)]
    return float(np.mean(a)) if len(a) else np.nan


def _table(res, cols: tuple[str, ...], title: str) -> pd.DataFrame:
    runs = res.runs
    print(f"\n{title}")
    head = f"{'method':<24}" + "".join(f"{c:>18}" for c in cols) + f"{'seconds':>10}{'failed':>8}"
    print(head + "\n" + "-" * len(head))
    rows = []
    for lab, g in runs.groupby("label", sort=True):
        ok = g[g.status == "ok"]
        vals = {c: _mean(_num(ok, c)) for c in cols}
        secs = _mean(_num(ok, "seconds"))
        rows.append({"method": lab, **vals, "seconds": secs})
        print(f"{lab:<24}" + "".join(f"{vals[c]:>18.4g}" for c in cols) + f"{secs:>10.1f}{len(g) - len(ok):>8}")
    return pd.DataFrame(rows).set_index("method")


#: --smoke: the smallest instances of each task (every method still runs end to end)
SMOKE_KWARGS = {
    CONT: {"images_per_domain": 40, "epochs": 1},
    PREF: {"n_pref": 16, "epochs": 1, "n_test": 16},
    DATA: {"pool_size": 40, "test_size": 20, "rl_epochs": 1},
}


def continual(seeds: int, jobs: int | None, extra: dict | None = None) -> None:
    t0 = time.perf_counter()
    res = bench(
        CONT, task_kwargs={"seeds": list(range(seeds)), **(extra or {})}, n_jobs=jobs, cache=False, progress=False
    )
    _table(
        res,
        ("final_acc", "final_acc_sample", "avg_inc_acc", "forgetting", "bwt", "fwt", "selection_acc"),
        f"{CONT}: means over instances ({time.perf_counter() - t0:.0f} s wall, dev seeds 0-{seeds - 1})",
    )


def preference(seeds: int, jobs: int | None, extra: dict | None = None) -> None:
    t0 = time.perf_counter()
    res = bench(
        PREF, task_kwargs={"seeds": list(range(seeds)), **(extra or {})}, n_jobs=jobs, cache=False, progress=False
    )
    _table(
        res,
        ("f1", "chair_i", "chair_s", "recall", "partner_halluc"),
        f"{PREF}: means over instances ({time.perf_counter() - t0:.0f} s wall, dev seeds 0-{seeds - 1})",
    )


def data_selection(seeds: int, jobs: int | None, extra: dict | None = None) -> None:
    t0 = time.perf_counter()
    res = bench(
        DATA, task_kwargs={"seeds": list(range(seeds)), **(extra or {})}, n_jobs=jobs, cache=False, progress=False
    )
    t = _table(
        res,
        ("test_acc", "acc_gain", "select_seconds", "select_forwards", "train_seconds"),
        f"{DATA}: means over instances ({time.perf_counter() - t0:.0f} s wall, dev seeds 0-{seeds - 1})",
    )
    if {"multi-sample-acc", "ufo-rl"} <= set(t.index):
        r = t.loc["multi-sample-acc", "select_seconds"] / t.loc["ufo-rl", "select_seconds"]
        f = t.loc["multi-sample-acc", "select_forwards"] / t.loc["ufo-rl", "select_forwards"]
        print(
            f"\nscoring cost, multi-sample-acc / ufo-rl: {r:.1f}x seconds, {f:.1f}x token-forwards "
            "(paper: up to 185x faster data evaluation)"
        )
    if {"full-data", "ufo-rl"} <= set(t.index):
        print(
            f"test accuracy: ufo-rl (10 % of the pool) {t.loc['ufo-rl', 'test_acc']:.3f} vs full-data "
            f"{t.loc['full-data', 'test_acc']:.3f}; RL training seconds {t.loc['ufo-rl', 'train_seconds']:.1f} vs "
            f"{t.loc['full-data', 'train_seconds']:.1f}"
        )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--only", choices=["continual", "preference", "data"], action="append", help="run only these tasks (repeatable)"
    )
    ap.add_argument("--seeds", type=int, default=3, help="dev seeds 0..K-1 per configuration (default 3)")
    ap.add_argument("--jobs", type=int, default=None, help="joblib workers (default: all cores)")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run: every method on the smallest instances (SMOKE_KWARGS), 1 seed, 1 worker",
    )
    a = ap.parse_args(argv)
    if a.seeds < 1:
        ap.error("--seeds must be >= 1")
    if a.smoke:
        a.seeds, a.jobs = 1, 1
    todo = a.only or ["continual", "preference", "data"]
    for name, fn, task in (
        ("continual", continual, CONT),
        ("preference", preference, PREF),
        ("data", data_selection, DATA),
    ):
        if name in todo:
            fn(a.seeds, a.jobs, SMOKE_KWARGS[task] if a.smoke else None)


if __name__ == "__main__":
    main()
