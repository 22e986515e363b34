"""``mirror-descent-ascent`` and ``extragradient``: entropic proximal steps for the entropic games
(``docs/papers/best-response-games.md``).

**Mirror descent–ascent** (Beck & Teboulle 2003; for entropy-regularised games Cen, Wei & Chi, NeurIPS 2021,
arXiv 2105.15186). With feedback ``g`` at ``x_k`` and the exact KL term, the proximal step of size ``η`` on the
linearised objective ``⟨g, x⟩ + σ KL(x|π)`` is

    x_{k+1} ∝ x_k^{1/(1+ησ)} · (π e^{−g/σ})^{ησ/(1+ησ)}

— a *geometric* interpolation between ``x_k`` and the Gibbs best response ``Ψ = softmax(log π − g/σ)`` with
weight ``ησ/(1 + ησ)`` (the Best Response flow interpolates arithmetically). The maximiser uses ``+g`` and
``σ′``; on the mean-field env it is plain entropic mirror descent. ``η = 1`` [secondary].

**Extragradient** (Korpelevich 1976; Cen, Wei & Chi 2021):

* ``mode="optimistic"`` (default): the same step with the predicted feedback ``2g_k − g_{k−1}`` (``g_{−1} = g_0``);
  one feedback per step;
* ``mode="two-call"``: alternately a midpoint ``x_{k+½} = step(x_k, g(x_k))`` and the update
  ``x_{k+1} = step(x_k, g(x_{k+½}))`` — two env steps per iteration; exact only when the opponent runs the same
  schedule (``role="both"``, or a ``two-call`` opponent).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.agents.games.learner import GameLearner
from papergym.validate import one_of, positive_float

__all__ = ["MirrorDescentAscent", "Extragradient"]

_TINY = 1e-300


class MirrorDescentAscent(GameLearner):
    """Entropic proximal step (module docstring); ``eta`` the step size."""

    def __init__(self, problem: Any, *, seed: Any = None, eta: float = 1.0):
        super().__init__(problem, seed=seed)
        positive_float(eta, "eta")
        self.eta = float(eta)

    def prox(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        """``x^{1/(1+ησ)} Ψ(g)^{ησ/(1+ησ)}``, normalised per block (and row), computed in logs."""
        out = np.empty_like(x)
        for b, lr in zip(self.blocks, self._log_ref):
            s = slice(b["start"], b["stop"])
            T = b["temperature"]
            w = self.eta * T / (1.0 + self.eta * T)
            z = (1.0 - w) * np.log(np.maximum(x[..., s], _TINY)) + w * (lr + b["sign"] * g[..., s] / T)
            z = z - z.max(axis=-1, keepdims=True)
            e = np.exp(z)
            out[..., s] = e / e.sum(axis=-1, keepdims=True)
        return out

    def _next(self, g: np.ndarray) -> np.ndarray:
        self._track(self.best_response(g))
        return self.prox(self.x, g)


class Extragradient(MirrorDescentAscent):
    """Optimistic or two-call extragradient on the entropic proximal step (module docstring)."""

    def __init__(self, problem: Any, *, seed: Any = None, eta: float = 1.0, mode: str = "optimistic"):
        super().__init__(problem, seed=seed, eta=eta)
        one_of(mode, "mode", ("optimistic", "two-call"))
        self.mode = mode
        self._g_prev: np.ndarray | None = None
        self._anchor: np.ndarray | None = None  # two-call: x_k while the midpoint is being evaluated

    def _next(self, g: np.ndarray) -> np.ndarray:
        if self.mode == "optimistic":
            self._track(self.best_response(g))
            pred = 2.0 * g - (g if self._g_prev is None else self._g_prev)
            self._g_prev = g
            return self.prox(self.x, pred)
        if self._anchor is None:  # g is the feedback at x_k: go to the midpoint
            self._track(self.best_response(g))
            self._anchor = self.x
            return self.prox(self.x, g)
        anchor, self._anchor = self._anchor, None  # g is the feedback at the midpoint: update from x_k
        return self.prox(anchor, g)
