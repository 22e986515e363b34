"""Test helpers of the bin-based baselines: a public problem, hand-made mean functions, a simulator.

Rewards are Bernoulli with pre-drawn uniforms (``Y = 1{U < mu(x)}``), so batched and per-run
agents face exactly the same reward stream (common random numbers).
"""

from __future__ import annotations

import numpy as np

from papergym.agents.base import make_agent, make_batched_agent
from papergym.envs.bandits.lipschitz import make_problem as _env_problem
from papergym.envs.spec import ProblemSpec, agent_seed

ENV = "NonStatLipschitz-v0"


def problem(T: int, d: int = 1) -> ProblemSpec:
    """The public problem of NonStatLipschitz-v0 (the env module's own constructor)."""
    return _env_problem(d, int(T), "bernoulli", 0.1)


def tent(center: float = 0.3, top: float = 0.8):
    """1-Lipschitz stationary mean ``top - ||x - center||_inf`` (clipped to [0, 1])."""

    def mu(x, t):
        return np.clip(top - np.abs(np.asarray(x) - center).max(axis=-1), 0.0, 1.0)

    return mu


def switching(tau: int):
    """Peak at 0.2 before round ``tau``, at 0.8 from ``tau`` on."""

    def mu(x, t):
        c = 0.2 if t < tau else 0.8
        return np.clip(0.8 - np.abs(np.asarray(x) - c).max(axis=-1), 0.0, 1.0)

    return mu


class FakeOracle:
    """Exposes only ``significant_shifts()`` (what ``binning-ucb-oracle`` reads)."""

    def __init__(self, shifts):
        self.shifts = tuple(shifts)
        self.calls = 0

    def significant_shifts(self, *args, **kwargs):
        self.calls += 1
        return self.shifts


def uniforms(T: int, n: int, seed: int = 12345) -> np.ndarray:
    return np.random.default_rng(seed).random((T, n))


def run_batched(agent, mu, T: int, U: np.ndarray):
    """Play ``T`` rounds; returns actions ``(T, n, d)``, arms ``(T, n)`` (if the agent has ``_arm``), rewards
    ``(T, n)``."""
    n = agent.n_envs
    obs = np.zeros((n, 1))
    acts, arms, rews = [], [], []
    for t in range(1, T + 1):
        a = agent.act(obs)
        acts.append(np.array(a, copy=True))
        if hasattr(agent, "_arm"):
            arms.append(np.array(agent._arm, copy=True))
        r = (U[t - 1] < mu(a, t)).astype(float)
        rews.append(r)
        obs = r[:, None].copy()
        agent.update(a, r, obs)
    return np.array(acts), (np.array(arms) if arms else None), np.array(rews)


def run_per_run(agent, mu, T: int, u: np.ndarray) -> np.ndarray:
    """One run with the uniforms ``u`` ``(T,)``; returns actions ``(T, d)``."""
    obs = np.zeros(1)
    acts = []
    for t in range(1, T + 1):
        a = agent.act(obs)
        acts.append(np.array(a, copy=True))
        r = float(u[t - 1] < mu(a[None, :], t)[0])
        obs = np.array([r])
        agent.update(a, r, obs)
    return np.array(acts)


def batched(name, T, seeds=(0, 1, 2), d=1, oracles=None, **hp):
    return make_batched_agent(name, problem(T, d), seeds=[agent_seed(s) for s in seeds], oracles=oracles, **hp)


def per_run(name, T, seed, d=1, oracle=None, **hp):
    return make_agent(name, problem(T, d), seed=agent_seed(seed), oracle=oracle, **hp)
