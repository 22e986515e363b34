"""``br-flow``: the Best Response flow (Lascu & Majka, NeurIPS 2025), discretised in distribution space.

The paper studies ``dμ_t/dt = Ψ(μ_t) − μ_t`` with the Gibbs best response

    Ψ(μ)(dx) = Z(μ)⁻¹ exp(−σ⁻¹ δF/δμ(μ, x)) π(dx)                                    (paper, BR operator)

(for a maximiser ``Φ(μ, ν) ∝ exp(+δ_νF/σ′) ρ``, and per state with ``q`` tables for the Markov game). When
``Ψ`` is a contraction its fixed point is the unique global minimiser of ``F^σ = F + σ KL(·|π)`` and the flow
converges to it. On the env's finite set (grid, actions) ``Ψ`` is exact: one feedback = one best-response
evaluation. Each step (spec ``games.md`` §7.1):

1. feedback ``g = δF/δμ(μ_k)`` (payoff vector, ``q`` table) at the current profile;
2. ``Ψ_k = normalise(π ⊙ exp(−(g − min g)/σ))`` (shifted for stability);
3. explicit Euler ``μ_{k+1} = (1 − h_k) μ_k + h_k Ψ_k``, or ``scheme="exponential"``:
   ``μ_{k+1} = e^{−h_k} μ_k + (1 − e^{−h_k}) Ψ_k`` (the exact flow over the step with ``Ψ`` frozen);
4. ``h_k = h`` (``schedule="constant"``, default ``h = 0.5``) or ``h_k = 1/(k + 1)``, ``k = 0, 1, ...``
   (``schedule="harmonic"``: the running average of best responses, i.e. fictitious play).

``h = 1`` is best-response iteration (registered as ``best-response-iteration``); the harmonic schedule is
``fictitious-play``. The step and schedule are [design] hyperparameters: the paper analyses continuous time.
Diagnostics (see :class:`~papergym.agents.games.learner.GameLearner`): fixed-point residuals and a
``diverged`` flag, so a run on a non-contractive instance (Curie–Weiss with ``a > σ``) reports divergence
rather than the truncation artefact it ends in.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.agents.games.learner import GameLearner

__all__ = ["BRFlow"]


class BRFlow(GameLearner):
    """The Best Response flow learner (module docstring)."""

    def __init__(self, problem: Any, *, seed: Any = None, h: float = 0.5, schedule: str = "constant",
                 scheme: str = "euler"):
        super().__init__(problem, seed=seed)
        if isinstance(h, bool) or not isinstance(h, (int, float)) or not 0 < h <= 1:
            raise ValueError(f"h must be a number in (0, 1], got {h!r}")
        if schedule not in ("constant", "harmonic"):
            raise ValueError(f"schedule must be 'constant' or 'harmonic', got {schedule!r}")
        if scheme not in ("euler", "exponential"):
            raise ValueError(f"scheme must be 'euler' or 'exponential', got {scheme!r}")
        self.h, self.schedule, self.scheme = float(h), schedule, scheme

    def step_size(self, k: int) -> float:
        """``h_k``: ``h`` or ``1/(k + 1)``."""
        return self.h if self.schedule == "constant" else 1.0 / (k + 1)

    def _next(self, g: np.ndarray) -> np.ndarray:
        psi = self.best_response(g)
        self._track(psi)
        hk = self.step_size(self.k)
        w = hk if self.scheme == "euler" else 1.0 - np.exp(-hk)
        return (1.0 - w) * self.x + w * psi
