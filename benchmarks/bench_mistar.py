"""MIStar against the improvement baselines on FJSPImprove-v0 (issue 8, spec §11 and §15).

For each set (SD2 10x5 test instances, Brandimarte mk01-10) every agent improves the **same initial
solution** (the env's ``init``, MWKR by default) for ``--horizon`` steps (400, the paper's budget); the
table gives the mean gap of the final incumbent to the set's reference (CP-SAT 30 s for SD2 10x5 — close to
DANIEL's OR-Tools-1800 s values the paper uses —, best-known upper bounds for Brandimarte), the mean
makespan, seconds per instance and exact move evaluations per instance, plus the gap ratio to
``bi-search`` and ``random-p-search`` measured side by side, and the paired gap difference of ``mistar`` /
``mistar-no-memory`` minus each of them with a 95 % bootstrap CI over (instance, agent seed) pairs. Then
PPO training throughput (transitions per
second on this machine, one thread) for one batch of 20 SD2 10x5 episodes.

    python benchmarks/bench_mistar.py --jobs 2                    # 20 SD2 instances + mk01-10, T = 400 (~1.5 min)
    python benchmarks/bench_mistar.py --sd2 50 --seeds 3 --jobs 2  # ~6 min

The paper's numbers (MIStar-400 4.98 %, BI-400 7.18 %, GD-400 10.40 % on SD2 10x5; 2.96 / 3.44 / 3.72 % on
Brandimarte) start from DANIEL-sampled solutions and use a GPU-trained model; they are printed for
orientation, not as a like-for-like comparison.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
from joblib import Parallel, delayed

import papergym.envs  # noqa: F401
from papergym.agents.base import make_agent, play_episode
from papergym.envs.spec import agent_seed
from papergym.leaderboard.runner.stats import bootstrap_ci

AGENTS = ("mistar", "mistar-no-memory", "mistar-p1", "bi-search", "gd-search", "random-p-search", "initial-solution")
PAPER = {"sd2-10x5": {"mistar": 4.98, "bi-search": 7.18, "gd-search": 10.40},
         "brandimarte": {"mistar": 2.96, "bi-search": 3.44, "gd-search": 3.72}}


def run_one(set_name: str, index: int, agent: str, horizon: int, seed: int) -> dict:
    import torch

    torch.set_num_threads(1)
    env = gym.make("FJSPImprove-v0", instances=set_name, horizon=horizon).unwrapped
    obs, _ = env.reset(seed=seed, options={"index": index})
    pol = make_agent(agent, env.problem, seed=agent_seed(seed))
    t0 = time.perf_counter()
    play_episode(pol, env, obs)
    secs = time.perf_counter() - t0
    diag = pol.diagnostics() if hasattr(pol, "diagnostics") else {}
    return {"set": set_name, "index": index, "seed": seed, "agent": agent, "makespan": env.makespan,
            "gap": 100.0 * env.oracle.gap(env.makespan), "seconds": secs,
            "evaluated": diag.get("evaluated_moves", 0)}


def paired(rows: list[dict], a: str, b: str) -> np.ndarray:
    """Gap of ``a`` minus gap of ``b`` (percentage points) on every (instance, seed) both ran."""
    gb = {(r["index"], r["seed"]): r["gap"] for r in rows if r["agent"] == b}
    return np.array([r["gap"] - gb[(r["index"], r["seed"])] for r in rows
                     if r["agent"] == a and (r["index"], r["seed"]) in gb])


def training_throughput(batches: int = 1) -> float:
    from papergym.agents.scheduling.mistar.train import TrainConfig, train

    _, hist = train(TrainConfig(episodes=20 * batches, validate_count=0, seed=0), log=lambda s: None)
    return hist["transitions"] / hist["seconds"]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sd2", type=int, default=20, help="SD2 10x5 test instances (default 20, at most 100)")
    ap.add_argument("--brandimarte", type=int, default=10, help="Brandimarte instances (default all 10)")
    ap.add_argument("--horizon", type=int, default=400)
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--jobs", type=int, default=1, help="parallel worker processes (default 1)")
    ap.add_argument("--seeds", type=int, default=1, help="agent seeds per instance: 0..SEEDS-1 (default 1)")
    ap.add_argument("--no-throughput", action="store_true")
    args = ap.parse_args(argv)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    if args.seeds < 1:
        ap.error("--seeds must be at least 1")
    tasks = [(s, i, a, k) for s, n in (("sd2-10x5", args.sd2), ("brandimarte", args.brandimarte))
             for i in range(n) for a in agents for k in range(args.seeds)]
    t0 = time.perf_counter()
    rows = Parallel(n_jobs=args.jobs)(delayed(run_one)(s, i, a, args.horizon, k) for s, i, a, k in tasks)
    wall = time.perf_counter() - t0
    print(f"FJSPImprove-v0, init=mwkr, T={args.horizon}, agent seeds 0..{args.seeds - 1}; {wall:.0f} s wall on "
          f"{args.jobs} worker(s)\n")
    for s in ("sd2-10x5", "brandimarte"):
        sub = [r for r in rows if r["set"] == s]
        if not sub:
            continue
        n = len({r["index"] for r in sub})
        mean = {a: np.mean([r["gap"] for r in sub if r["agent"] == a]) for a in agents}
        print(f"{s} ({n} instances x {args.seeds} agent seed(s); means over all runs)")
        print(f"{'agent':<18}{'gap %':>8}{'makespan':>10}{'s/inst':>9}{'evals/inst':>12}{'vs bi':>8}{'vs rand-p':>10}"
              f"{'paper gap %':>12}")
        for a in agents:
            rs = [r for r in sub if r["agent"] == a]
            ratio_bi = mean[a] / mean["bi-search"] if "bi-search" in mean and mean["bi-search"] else float("nan")
            ratio_rp = (mean[a] / mean["random-p-search"] if "random-p-search" in mean and mean["random-p-search"]
                        else float("nan"))
            paper = PAPER.get(s, {}).get(a)
            print(f"{a:<18}{mean[a]:>8.2f}{np.mean([r['makespan'] for r in rs]):>10.1f}"
                  f"{np.mean([r['seconds'] for r in rs]):>9.2f}{np.mean([r['evaluated'] for r in rs]):>12.0f}"
                  f"{ratio_bi:>8.2f}{ratio_rp:>10.2f}{'' if paper is None else f'{paper:.2f}':>12}")
        for ours in ("mistar", "mistar-no-memory"):
            if ours not in mean:
                continue
            for other in ("bi-search", "random-p-search"):
                if other not in mean:
                    continue
                d = paired(sub, ours, other)
                est, lo, hi = bootstrap_ci(d)
                print(f"  {ours} - {other}: gap difference {est:+.2f} pp, 95% bootstrap CI [{lo:+.2f}, {hi:+.2f}] "
                      f"over {d.size} (instance, seed) pairs; better on {int((d < 0).sum())}, "
                      f"equal on {int((d == 0).sum())}, worse on {int((d > 0).sum())}")
        print()
    if not args.no_throughput:
        print(f"PPO training throughput (SD2 10x5, 20 envs, 1 thread): {training_throughput():.0f} transitions/s")


if __name__ == "__main__":
    main()
