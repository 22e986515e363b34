"""``br-flow`` at its default step ``h="auto"`` on every entropic-game family: does it converge, how fast, and at
the rate the linearisation predicts?

Per instance, over ``--seeds`` fresh seeds (``--first-seed`` on), self-play for the games (``role="both"``): the
step ``h`` derived from the published spectral bounds (``agents/games/br_flow.py``), the runs whose status is
``converged`` (gap ``≤ --tol`` with the contraction / uniqueness certificate, not at the grid edge), the median
and largest number of steps (= best-response evaluations) to a gap ``≤ --tol`` (``>K`` if never), the fitted
per-step rate of the gap (``oracle.episode_metrics()["rate"]``, median), the rate predicted by the exact
linearisation at the solution (``oracle.predicted_rate(h)`` = ``max_j |1 − h + hλ_j|²``, median) and the
guaranteed bound ``ρ(h)²`` from the published rectangle (``rate_bound``, median; ``-`` for the mean field,
which publishes none). A run stops once its gap reaches 1e−13 (the rate is fitted before 1e−12).

    python benchmarks/bench_br_auto_step.py                 # all families, 5 seeds from 1000 (~1 min)
    python benchmarks/bench_br_auto_step.py --env EntropicMarkovGame-v0 --seeds 20 --h 0.5
    python benchmarks/bench_br_auto_step.py --smoke         # first family of each env, 1 seed, K <= 50 (seconds)
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import papergym.envs  # noqa: F401
from papergym.agents.base import make_agent
from papergym.envs.spec import agent_seed

# instance -> step budget K
FAMILIES = {
    "EntropicMeanField-v0": {
        "curie-weiss": 200,
        "double-well": 200,
        "interaction": 200,
        "curie-weiss-unstable": 200,
        "double-well-broken": 200,
    },
    "EntropicMatrixGame-v0": {"rps": 500, "rps-cold": 2000, "rps-nonconvex": 500, "random": 500},
    "EntropicMarkovGame-v0": {"random": 500, "random-cold": 3000, "random-medium": 500, "single-state": 500},
}
STOP = 1e-13


def run(env_id: str, instance: str, seed: int, K: int, tol: float, h) -> dict:
    kw = {"instance": instance, "gap_tol": tol, "horizon": K}
    if env_id != "EntropicMeanField-v0":
        kw["role"] = "both"
    env = gym.make(env_id, **kw).unwrapped
    obs, _ = env.reset(seed=seed)
    agent = make_agent("br-flow", env.problem, seed=agent_seed(seed), **({} if h is None else {"h": h}))
    for _ in range(K):
        a = agent.act(obs)
        obs, r, term, trunc, _ = env.step(a)
        agent.update(a, r, obs)
        if env._gaps[-1] <= STOP or term or trunc:
            break
    m = env.oracle.episode_metrics()
    d = agent.diagnostics()
    return {
        "h": agent.h,
        "status": m["status"],
        "steps": m["steps_to_tol"] if m["steps_to_tol"] <= len(env._gaps) else np.inf,
        "rate": m["rate"],
        "pred": env.oracle.predicted_rate(agent.h),
        "bound": d["rate_bound"],
        "kappa": m["contraction_bound"],
    }


def fmt(v: float, spec: str) -> str:
    return "-" if not np.isfinite(v) else format(v, spec)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--env", default=None, help="one env id (default: all three)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=1000)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--h", type=float, default=None, help="a fixed step instead of 'auto'")
    ap.add_argument("--smoke", action="store_true", help="tiny run: the first family of each env, 1 seed, K <= 50")
    args = ap.parse_args(argv)
    if args.smoke:
        args.seeds = 1
    if args.seeds < 1 or not args.tol > 0:
        ap.error("--seeds must be >= 1 and --tol > 0")
    envs = [args.env] if args.env else list(FAMILIES)
    for e in envs:
        if e not in FAMILIES:
            ap.error(f"--env must be one of {', '.join(FAMILIES)}")
    t_all = time.perf_counter()
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    for env_id in envs:
        print(
            f"\n{env_id}  (br-flow, h={'auto' if args.h is None else args.h}; gap <= {args.tol:g}; seeds "
            f"{seeds.start}..{seeds.stop - 1})"
        )
        head = (
            f"{'instance':<22}{'K':>6}{'h (median)':>12}{'kappa':>8}{'converged':>11}{'steps med':>10}{'steps max':>10}"
            f"{'rate':>9}{'predicted':>10}{'bound':>8}  other status"
        )
        print(head + "\n" + "-" * len(head))
        for inst, K in list(FAMILIES[env_id].items())[:1] if args.smoke else FAMILIES[env_id].items():
            K = min(K, 50) if args.smoke else K
            rs = [run(env_id, inst, s, K, args.tol, args.h) for s in seeds]
            steps = np.array([r["steps"] for r in rs])
            other = sorted({r["status"] for r in rs} - {"converged"})

            def med(k, rs=rs):
                return float(np.median([r[k] for r in rs]))

            smax = steps.max()
            print(
                f"{inst:<22}{K:>6}{med('h'):>12.4g}{med('kappa'):>8.3g}"
                f"{sum(r['status'] == 'converged' for r in rs):>8}/{len(rs):<2}"
                f"{fmt(np.median(steps), '.0f') if np.median(steps) <= K else '>' + str(K):>10}"
                f"{fmt(smax, '.0f') if smax <= K else '>' + str(K):>10}"
                f"{fmt(med('rate'), '.4f'):>9}{fmt(med('pred'), '.4f'):>10}"
                f"{fmt(med('bound'), '.4f'):>8}  {', '.join(other)}"
            )
    print(f"\n{time.perf_counter() - t_all:.0f} s in all")


if __name__ == "__main__":
    main()
