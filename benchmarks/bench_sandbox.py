"""Sandboxed vs in-process evaluation time of a T = 10^5 bandit agent, by number of seeds evaluated
together (target: sandboxed <= 2x in-process at 20 seeds).

    python benchmarks/bench_sandbox.py                          # T = 1e5, seeds 1, 5, 20 (~2 min)
    python benchmarks/bench_sandbox.py --horizon 20000 --seeds 1,20

The agent is ``benchmarks/sandbox_ucb1.py`` (UCB1 on a fixed grid of K = 32 arms of [0, 1], batched
with numpy) on ``NonStatLipschitz-v0``'s native vector env. Both columns drive the same loop: the
evaluator's own :func:`papergym.leaderboard.board.evaluate.play` when it exists (``--loop play``, the
default then), else this file's loop (``--loop own``: reset with the seeds, T rounds of
``session.step`` -> regret from ``venv.oracle.regret`` -> ``venv.step``). In-process: the same file
imported here and hosted by :class:`~papergym.leaderboard.board.sandbox.InProcessAgentSession`;
sandboxed: :class:`~papergym.leaderboard.board.sandbox.SandboxedAgentSession` (``--sandbox auto``: the full
sandbox -- bubblewrap, job cgroup, seccomp filter, per-job uid -- when available, else bubblewrap).
The final regrets of both must be equal (checked). BLAS threads are pinned to 1.

A short in-process run first warms up the env's compiled kernels. ``--spin 0`` turns off the
sandbox's bounded busy-wait (:data:`papergym.leaderboard.board.sandbox.SPIN_SECONDS`) to show what it buys.

Measured (2-vCPU KVM VM, otherwise idle, bwrap, T = 10^5, loop = play):

    seeds  in-process s  sandboxed s  ratio  us/step added
        1          3.60         5.84   1.62           22.4
        5          3.01         4.45   1.48           14.5
       20          3.15         4.56   1.45           14.2      (--spin 0: ratio 4-6)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
import papergym.envs  # noqa: F401 - registers the envs
from gymnasium.envs.registration import load_env_creator
from papergym.leaderboard.board import sandbox as sandbox_module
from papergym.leaderboard.board.sandbox import (
    SANDBOX_MODES,
    InProcessAgentSession,
    SandboxedAgentSession,
    problem_to_public,
    resolve_sandbox,
)

ENV = "NonStatLipschitz-v0"
AGENT = Path(__file__).resolve().parent / "sandbox_ucb1.py"
ATTR = "make_agent"


def own_loop(session, seeds: list[int], horizon: int) -> np.ndarray:
    """T rounds of every seed together; returns the final cumulative regret of each run."""
    venv = load_env_creator(gym.spec(ENV).vector_entry_point)(num_envs=len(seeds), horizon=horizon)
    obs, _ = venv.reset(seed=list(seeds))
    session.start(problem_to_public(venv.problem), list(seeds), {})
    active = np.ones(len(seeds), dtype=bool)
    regret = np.zeros(len(seeds))
    rewards = None
    for t in range(1, horizon + 1):
        actions, failed = session.step(obs, rewards, active)
        if failed:
            raise RuntimeError(f"runs failed: {failed}")
        regret += venv.oracle.regret(actions, t)
        obs, rewards, *_ = venv.step(actions)
    session.close()
    return regret


def play_loop(session, seeds: list[int], horizon: int) -> np.ndarray:
    from papergym.leaderboard.board.evaluate import play

    runs = play(ENV, {"horizon": horizon}, seeds, session, seeds, {})
    bad = [r for r in runs if r["status"] != "ok"]
    if bad:
        raise RuntimeError(f"runs failed: {bad[0].get('error')}")
    return np.array([next(iter(r["metrics"].values())) if "final_regret" not in r["metrics"]
                     else r["metrics"]["final_regret"] for r in runs], dtype=float)


def _factory():
    spec = importlib.util.spec_from_file_location("sandbox_ucb1", AGENT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, ATTR)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=int, default=100_000)
    ap.add_argument("--seeds", default="1,5,20", help="numbers of seeds evaluated together (comma-separated)")
    ap.add_argument("--loop", choices=("auto", "play", "own"), default="auto")
    ap.add_argument("--sandbox", choices=SANDBOX_MODES, default="auto",
                    help="the sandbox mode (papergym.leaderboard.board.sandbox, Isolation); auto: full when available")
    ap.add_argument("--spin", type=float, default=None,
                    help="seconds each end busy-waits for a reply (default: the sandbox's SPIN_SECONDS)")
    args = ap.parse_args(argv)
    if args.spin is not None:
        if args.spin < 0:
            ap.error("--spin must be >= 0")
        sandbox_module.SPIN_SECONDS = args.spin
    loop = args.loop
    if loop == "auto":
        try:
            from papergym.leaderboard.board.evaluate import play  # noqa: F401
            loop = "play"
        except ImportError:
            loop = "own"
    run = play_loop if loop == "play" else own_loop
    mode = resolve_sandbox(args.sandbox)  # SandboxUnavailable (naming what is missing) rather than no sandbox
    print(f"# {ENV}, UCB1 on a grid of 32 arms, T = {args.horizon}, loop = {loop}, "
          f"sandbox: {mode}, spin: {sandbox_module.SPIN_SECONDS:g} s")
    print(f"{'seeds':>5}  {'in-process s':>12}  {'sandboxed s':>11}  {'ratio':>5}  {'us/step added':>13}")
    factory = _factory()
    run(InProcessAgentSession(factory), [1, 2], min(args.horizon, 2000))  # warm-up: compiled kernels
    worst = 0.0
    for n in [int(x) for x in args.seeds.split(",")]:
        seeds = list(range(1, n + 1))
        t0 = time.perf_counter()
        r_in = run(InProcessAgentSession(factory), seeds, args.horizon)
        t_in = time.perf_counter() - t0
        t0 = time.perf_counter()
        sess = SandboxedAgentSession(AGENT, ATTR, sandbox=mode)
        r_sb = run(sess, seeds, args.horizon)
        t_sb = time.perf_counter() - t0
        if not np.array_equal(r_in, r_sb):
            print(f"final regrets differ at {n} seeds: {r_in} vs {r_sb}", file=sys.stderr)
            return 1
        ratio = t_sb / t_in
        worst = ratio if n >= 20 else worst
        print(f"{n:>5}  {t_in:>12.2f}  {t_sb:>11.2f}  {ratio:>5.2f}  {(t_sb - t_in) / args.horizon * 1e6:>13.1f}",
              flush=True)
    if worst:
        print(f"target (ratio <= 2 at 20 seeds): {'met' if worst <= 2 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
