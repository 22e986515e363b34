"""Baselines of the entropic games (``docs/papers/best-response-games.md``): ``best-response-iteration`` and
``fictitious-play`` (the Best Response flow with ``h = 1`` and with ``h_k = 1/(k + 1)``), ``mirror-descent-ascent``
and ``extragradient``."""

from __future__ import annotations

from papergym.agents.base import register_agent
from papergym.agents.games import GAME_ENVS
from papergym.agents.games.br_flow import BRFlow
from papergym.baselines.games.mirror_descent import Extragradient, MirrorDescentAscent


def _bri(problem, *, seed=None, **hp):
    return BRFlow(problem, seed=seed, **{"h": 1.0, **hp})


def _fp(problem, *, seed=None, **hp):
    return BRFlow(problem, seed=seed, **{"schedule": "harmonic", **hp})


def _mda(problem, *, seed=None, **hp):
    return MirrorDescentAscent(problem, seed=seed, **hp)


def _eg(problem, *, seed=None, **hp):
    return Extragradient(problem, seed=seed, **hp)


register_agent(
    "best-response-iteration",
    _bri,
    envs=GAME_ENVS,
    role="baseline",
    description="mu <- Psi(mu): the Best Response flow's Euler step with h = 1",
    defaults={"h": 1.0},
)
register_agent(
    "fictitious-play",
    _fp,
    envs=GAME_ENVS,
    role="baseline",
    description="running average of best responses (h_k = 1/(k+1); Brown 1951)",
    defaults={"schedule": "harmonic"},
)
register_agent(
    "mirror-descent-ascent",
    _mda,
    envs=GAME_ENVS,
    role="baseline",
    description="entropic proximal step mu ~ mu^(1/(1+eta s)) Psi^(eta s/(1+eta s)) (Cen, Wei, Chi 2021)",
    defaults={"eta": 1.0},
)
register_agent(
    "extragradient",
    _eg,
    envs=GAME_ENVS,
    role="baseline",
    description="optimistic entropic mirror step with predicted feedback 2g_k - g_(k-1) (or two-call)",
    defaults={"eta": 1.0, "mode": "optimistic"},
)
