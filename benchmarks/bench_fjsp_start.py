"""The FJSPImprove-v0 protocol's start solution and the searches from it (MIStar's table layout).

    python benchmarks/bench_fjsp_start.py                 # ~2 min on 2 cores (one process)
    python benchmarks/bench_fjsp_start.py --init mwkr     # the same from the MWKR start
    python benchmarks/bench_fjsp_start.py --starts-only   # section 1 only (seconds)
    python benchmarks/bench_fjsp_start.py --smoke         # both sections on 2 / 1 instances per set, T = 10

1. Start quality: mean gap of the ``mwkr`` and ``sampled-dispatch`` starts
   (:mod:`papergym.envs.scheduling.fjsp.sampled`) to the shipped references (``data/bks.json`` for the
   benchmarks, papergym's CP-SAT ``data/references.json`` for SD2) on the whole SD2 10x5 test set,
   Brandimarte mk01-10 and Hurink edata la01-40; milliseconds per start; how many starts have a strictly
   improving ``nopt2-lite`` move.
2. ``papergym.leaderboard.compare`` of ``initial-solution``, ``bi-search``, ``fi-search``, ``gd-search`` and
   ``gd-search`` with ``tabu_tenure = 30`` (a hyperparameter, not the paper's GD) at ``T = 400`` from
   ``--init`` on the first 20 SD2 10x5 test instances, Brandimarte mk01-10 and the first ``--hurink``
   Hurink edata instances: mean gap and seconds per instance (agent + env, serial backend), next to
   MIStar's published GD-400 / BI-400 / MIStar-400 (which start from DANIEL-sampled solutions).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from papergym.envs.scheduling.fjsp.graph import evaluate, neighbourhood
from papergym.envs.scheduling.fjsp.improve import initial_solution
from papergym.envs.scheduling.fjsp.sets import load_set, reference

# MIStar (NeurIPS 2025), results tables: gaps to DANIEL's OR-Tools references / best known values
PAPER = {
    "sd2-10x5": {"start": "11.96 (DANIEL sampling)", "gd-search": 10.40, "bi-search": 7.18, "mistar": 4.98},
    "brandimarte": {"gd-search": 3.72, "bi-search": 3.44, "mistar": 2.96},
    "hurink-edata": {"gd-search": 6.96, "bi-search": 6.94, "mistar": 6.83},
}


def table(head, rows):
    w = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(head)]
    line = "  ".join(str(h).rjust(x) if i else str(h).ljust(x) for i, (h, x) in enumerate(zip(head, w)))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(str(c).rjust(x) if i else str(c).ljust(x) for i, (c, x) in enumerate(zip(r, w))))
    print()


def starts(count: int | None = None) -> None:
    print("1. Start solutions: mean gap to the shipped references, ms per start, starts with an improving move")
    initial_solution(load_set("sd2-10x5")[0], "sampled-dispatch")  # compile / load the numba cache
    rows = []
    for name in ("sd2-10x5", "brandimarte", "hurink-edata"):
        insts = load_set(name)[:count]
        for init in ("mwkr", "sampled-dispatch"):
            gaps, secs, improving = [], [], 0
            for inst in insts:
                t0 = time.perf_counter()
                sol = initial_solution(inst, init)
                secs.append(time.perf_counter() - t0)
                c = evaluate(inst, sol).cmax
                ref = reference(inst.name).ub
                gaps.append((c - ref) / ref)
                improving += int(neighbourhood(inst, sol).cmax.min()) < c
            rows.append(
                [
                    name,
                    init,
                    len(insts),
                    f"{100 * np.mean(gaps):.2f}%",
                    f"{1000 * np.mean(secs):.1f}",
                    f"{improving}/{len(insts)}",
                ]
            )
    table(["set", "init", "n", "mean gap", "ms/start", "improving move"], rows)


def searches(init: str, horizon: int, n_sd2: int, n_hurink: int, n_brandimarte: int = 10) -> None:
    from papergym.leaderboard.runner.compare import compare

    print(f"2. Searches from init={init}, T = {horizon}: mean gap (seconds per instance); serial backend")
    agents = ["initial-solution", "bi-search", "fi-search", "gd-search"]
    sets = [("sd2-10x5", n_sd2), ("brandimarte", n_brandimarte), ("hurink-edata", n_hurink)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, n in sets:
            kw = {"instances": name, "init": init}
            res = compare(
                "FJSPImprove-v0",
                agents=agents,
                seeds=range(n),
                horizon=horizon,
                env_kwargs=kw,
                backend="serial",
                out=tmp,
                cache=False,
                progress=False,
            )
            r30 = compare(
                "FJSPImprove-v0",
                agents=["gd-search"],
                seeds=range(n),
                horizon=horizon,
                env_kwargs=kw,
                backend="serial",
                out=tmp,
                cache=False,
                progress=False,
                hyperparameters={"gd-search": {"tabu_tenure": 30}},
            )
            runs = res.runs
            cells = []
            for a in agents:
                ra = runs[runs.agent == a]
                cells.append(f"{100 * ra.gap.mean():.2f}% ({ra.seconds.mean():.2f} s)")
            ra = r30.runs
            cells.append(f"{100 * ra.gap.mean():.2f}% ({ra.seconds.mean():.2f} s)")
            p = PAPER.get(name, {})
            cells += [
                f"{p[k]:.2f}%" if isinstance(p.get(k), float) else "-" for k in ("gd-search", "bi-search", "mistar")
            ]
            rows.append([f"{name} ({n})"] + cells)
    table(
        [
            "set",
            "start",
            "bi-search",
            "fi-search",
            "gd-search",
            "gd tenure 30",
            "paper GD-400",
            "paper BI-400",
            "paper MIStar-400",
        ],
        rows,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--init", default="sampled-dispatch")
    ap.add_argument("--horizon", type=int, default=400)
    ap.add_argument("--sd2", type=int, default=20, help="first N SD2 10x5 test instances")
    ap.add_argument("--hurink", type=int, default=40, help="first N Hurink edata instances (la01..)")
    ap.add_argument("--starts-only", action="store_true")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run: starts on the first 2 instances of each set, searches on 1 per set at T = 10",
    )
    args = ap.parse_args()
    t0 = time.perf_counter()
    starts(2 if args.smoke else None)
    if args.smoke and not args.starts_only:
        searches(args.init, 10, 1, 1, 1)
    elif not args.starts_only:
        searches(args.init, args.horizon, args.sd2, args.hurink)
    print(f"{time.perf_counter() - t0:.0f} s wall")


if __name__ == "__main__":
    main()
