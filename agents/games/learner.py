"""What every entropic-game learner shares (``agents/games``, ``baselines/games``): the player blocks of the
public ``ProblemSpec`` (who moves which columns of the action, minimiser or maximiser, temperature,
reference measure, initial strategy), the exact Gibbs best response to a feedback, and the fixed-point
diagnostics.

A learner holds its current strategy ``x_k`` (the whole action: one block for a single player, two side by
side for ``role="both"``; rows are states of the Markov game). ``act(obs)`` receives the feedback at ``x_k``
(from ``reset``, then from each ``step``) and returns ``x_{k+1}``.
"""

from __future__ import annotations

import abc
from typing import Any

import numpy as np

from papergym.envs.games.common import gibbs
from papergym.envs.games.mean_field import EDGE_MASS, edge_mass

__all__ = ["GameLearner"]


class GameLearner(abc.ABC):
    """Base class: block bookkeeping, :meth:`best_response`, diagnostics. Subclasses implement ``_next``."""

    def __init__(self, problem: Any, *, seed: Any = None):
        params = problem.params
        if "blocks" not in params:
            raise ValueError(f"{type(self).__name__} needs an entropic-game ProblemSpec (params['blocks'])")
        self.blocks = list(params["blocks"])
        shape = tuple(problem.action_space.shape)
        self.x = np.empty(shape)
        self._log_ref = []
        for b in self.blocks:
            self.x[..., b["start"] : b["stop"]] = np.asarray(b["initial"], dtype=float)
            with np.errstate(divide="ignore"):
                self._log_ref.append(np.log(np.asarray(b["reference"], dtype=float)))
        self.k = 0
        self._grid = np.asarray(params["grid"], dtype=float) if "grid" in params else None
        self._res_first: float | None = None
        self._res_last = float("nan")
        self._res_max = 0.0

    def best_response(self, g: np.ndarray) -> np.ndarray:
        """The Gibbs best response of every block to the feedback ``g`` (same shape as the action):
        ``softmax(log ref − g/σ)`` for a minimiser, ``softmax(log ref + g/σ′)`` for a maximiser."""
        g = np.asarray(g, dtype=float)
        if g.shape != self.x.shape:
            raise ValueError(f"feedback of shape {g.shape}, expected {self.x.shape}")
        out = np.empty_like(self.x)
        for b, lr in zip(self.blocks, self._log_ref):
            s = slice(b["start"], b["stop"])
            out[..., s] = gibbs(lr, g[..., s], b["temperature"], b["sign"])
        return out

    def _track(self, br: np.ndarray) -> None:
        """Record ``‖Ψ(x_k) − x_k‖₁`` (per state row, the largest) before the update."""
        d = np.abs(br - self.x)
        r = float(d.reshape(-1, d.shape[-1]).sum(axis=-1).max())
        if self._res_first is None:
            self._res_first = r
        self._res_last = r
        self._res_max = max(self._res_max, r) if np.isfinite(r) else np.inf

    def act(self, obs: Any) -> np.ndarray:
        g = np.asarray(obs, dtype=float)
        self.x = self._next(g)
        self.k += 1
        return self.x.copy()

    @abc.abstractmethod
    def _next(self, g: np.ndarray) -> np.ndarray:
        """``x_{k+1}`` from the feedback ``g`` at ``x_k``."""

    def update(self, action: Any, reward: float, observation: Any) -> None:  # noqa: B027 - an optional hook, not abstract
        """Full-information learners use the next observation in ``act``; nothing to do here."""

    def diagnostics(self) -> dict[str, Any]:
        """``residual_first`` / ``residual_last``: ``‖Ψ(x) − x‖₁`` at the first and the last feedback;
        ``boundary_mass`` (grid problems): mass of ``x`` in the outer 5 % of the grid; ``diverged``: 1 if the
        iterates ran into the truncation boundary (boundary mass above 1e−3: the continuum flow has no
        minimiser to converge to) or the residual grew tenfold, else 0."""
        out: dict[str, Any] = {
            "residual_first": self._res_first if self._res_first is not None else float("nan"),
            "residual_last": self._res_last,
        }
        div = bool(
            not np.isfinite(self._res_last)
            or (self._res_first is not None and self._res_last > 10 * max(self._res_first, 1e-12))
        )
        if self._grid is not None:
            mass = edge_mass(self.x, self._grid)
            out["boundary_mass"] = mass
            div = div or mass > EDGE_MASS
        out["diverged"] = float(div)
        return out
