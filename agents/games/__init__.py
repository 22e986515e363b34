"""Entropic-game learners of the paper: ``br-flow`` on ``EntropicMeanField-v0``, ``EntropicMatrixGame-v0`` and
``EntropicMarkovGame-v0``."""

from __future__ import annotations

from papergym.agents.base import register_agent
from papergym.agents.games.br_flow import BRFlow

GAME_ENVS = ("EntropicMeanField-v0", "EntropicMatrixGame-v0", "EntropicMarkovGame-v0")


def _br_flow(problem, *, seed=None, **hp):
    return BRFlow(problem, seed=seed, **hp)


register_agent(
    "br-flow",
    _br_flow,
    envs=GAME_ENVS,
    role="paper",
    description="Best Response flow: explicit Euler mu <- (1 - h) mu + h Psi(mu), Psi the Gibbs best response; "
    "h='auto' from the published spectral bounds of the linearised Psi",
    defaults={"h": "auto", "schedule": "constant", "scheme": "euler"},
)
