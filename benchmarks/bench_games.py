"""Entropic games (best-response flow, docs/papers/best-response-games.md): best-response evaluations and
seconds to reach a gap of ``--tol`` (default 1e-6) for every learner on every instance, self-play
(``role="both"``) for the games.

One env step is one best-response evaluation (one feedback). Per (instance, learner), over ``--seeds`` seeds:
the median number of evaluations to the first step with gap <= tol (``>K`` if the median run never got
there), the median learner seconds up to that step (``act`` only; the env's feedback and the oracle's gap are not
counted), the median final gap of the last iterate, the fitted per-step rate, and the ratio of evaluations
to ``br-flow``'s measured side by side. The unstable mean-field presets are run too: their "minimum" is a
truncation artefact, and the table shows the fraction of runs the learner flagged as divergent.

    python benchmarks/bench_games.py                      # all instances, 5 seeds (~2 min)
    python benchmarks/bench_games.py --env EntropicMatrixGame-v0 --seeds 20 --tol 1e-8
    python benchmarks/bench_games.py --smoke              # first instance of each env, 1 seed, 50 steps (seconds)
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import papergym.envs  # noqa: F401
from papergym.agents.base import make_agent
from papergym.envs.spec import agent_seed

LEARNERS = ("br-flow", "best-response-iteration", "fictitious-play", "mirror-descent-ascent", "extragradient")
INSTANCES = {
    "EntropicMeanField-v0": ("curie-weiss", "double-well", "interaction", "curie-weiss-unstable", "double-well-broken"),
    "EntropicMatrixGame-v0": ("rps", "rps-cold", "rps-nonconvex", "random"),
    "EntropicMarkovGame-v0": ("random", "random-cold", "random-medium", "single-state"),
}


def run(env_id: str, instance: str, learner: str, seed: int, tol: float, horizon: int | None) -> dict:
    kw = {"instance": instance, "gap_tol": tol}
    if env_id != "EntropicMeanField-v0":
        kw["role"] = "both"
    if horizon is not None:
        kw["horizon"] = horizon
    env = gym.make(env_id, **kw).unwrapped
    obs, _ = env.reset(seed=seed)
    agent = make_agent(learner, env.problem, seed=agent_seed(seed))
    spent, to_tol = 0.0, np.nan
    for _k in range(1, env.horizon + 1):
        t0 = time.perf_counter()
        a = agent.act(obs)
        spent += time.perf_counter() - t0
        obs, r, term, trunc, _ = env.step(a)
        agent.update(a, r, obs)
        if np.isnan(to_tol) and env._gaps[-1] <= tol:
            to_tol = spent
        if term or trunc:
            break
    m = env.oracle.episode_metrics()
    return {
        "steps": m["steps_to_tol"],
        "seconds": to_tol,
        "gap": m["gap_last"],
        "rate": m["rate"],
        "K": env.horizon,
        "diverged": agent.diagnostics().get("diverged", 0.0),
    }


def fmt(v: float, spec: str) -> str:
    return "-" if not np.isfinite(v) else format(v, spec)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--env", default=None, help="one env id (default: all three)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--horizon", type=int, default=None, help="steps per run (default: each env's default)")
    ap.add_argument(
        "--smoke", action="store_true", help="tiny run: the first instance of each env, 1 seed, 50 steps, every learner"
    )
    args = ap.parse_args(argv)
    if args.smoke:
        args.seeds, args.horizon = 1, 50
    if args.seeds < 1 or not args.tol > 0:
        ap.error("--seeds must be >= 1 and --tol > 0")
    envs = [args.env] if args.env else list(INSTANCES)
    for e in envs:
        if e not in INSTANCES:
            ap.error(f"--env must be one of {', '.join(INSTANCES)}")
    t_all = time.perf_counter()
    for env_id in envs:
        print(f"\n{env_id}  (gap <= {args.tol:g}; medians over {args.seeds} seeds; self-play for the games)")
        head = (
            f"{'instance':<22}{'learner':<26}{'BR evals':>9}{'evals/br-flow':>14}{'learner s':>11}"
            f"{'final gap':>11}{'rate':>8}{'diverged':>9}"
        )
        print(head + "\n" + "-" * len(head))
        for inst in INSTANCES[env_id][:1] if args.smoke else INSTANCES[env_id]:
            res = {ln: [run(env_id, inst, ln, s, args.tol, args.horizon) for s in range(args.seeds)] for ln in LEARNERS}
            ref = np.median([r["steps"] for r in res["br-flow"]])
            for ln in LEARNERS:
                rs = res[ln]
                steps = np.array([r["steps"] for r in rs])
                K = rs[0]["K"]
                med = float(np.median(steps))
                evals = f">{K}" if med > K else f"{med:.0f}"
                ratio = "-" if med > K or ref > K else f"{med / ref:.2f}"
                secs = np.array([r["seconds"] if r["steps"] <= K else np.inf for r in rs])  # never reached: +inf
                sec = float(np.median(secs))
                print(
                    f"{inst:<22}{ln:<26}{evals:>9}{ratio:>14}{fmt(sec, '.2e'):>11}"
                    f"{fmt(np.median([r['gap'] for r in rs]), '.1e'):>11}"
                    f"{fmt(np.median([r['rate'] for r in rs]), '.3f'):>8}"
                    f"{np.mean([r['diverged'] for r in rs]):>9.2f}"
                )
    print(f"\n{time.perf_counter() - t_all:.0f} s in all")


if __name__ == "__main__":
    main()
