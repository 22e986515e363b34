"""Oracles of ``NoiseFreeGPBandit-v0``: the privileged view of a run (:class:`NoiseFreeGPOracle`) and of the
vector env's rows (:class:`BatchedNoiseFreeGPOracle`): the function, its optimum, the regret and the simple
regret, all computed from ``f`` (never from observations).

Environment of S. Iwazaki, *Gaussian Process Upper Confidence Bound Achieves Nearly-Optimal Regret in
Noise-Free Gaussian Process Bandits* (arXiv 2502.19006, NeurIPS 2025); see docs/papers/noise-free-gp.md.
How ``f*`` and its certificate are computed: :mod:`papergym.envs.bandits.gp.instances`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from papergym.envs.bandits.gp.actions import as_index, as_indices, as_points, check_round
from papergym.envs.bandits.gp.config import Config
from papergym.envs.bandits.gp.instances import Instance, read_only
from papergym.envs.bandits.gp.kernels import kernel_expansion, kernel_matrix


class NoiseFreeGPOracle:
    """Privileged view of one run (``env.unwrapped.oracle``): the function ``f = sum_j a_j k(., z_j)``,
    its optimum and the regret.

    ``mean_reward(a, t) = f(x_a)``; ``optimal_value(t) = f*`` (constant in ``t``); ``regret(a, t) =
    f* - f(x_a) >= 0``; ``simple_regret(actions) = f* - max_s f(x_s)`` (best observed point);
    ``values(X)``; ``f_candidates``; ``best_action()``; ``maximiser``; ``rkhs_norm()`` (``= B``);
    ``certificate`` (an upper bound on ``sup_x f(x) - f*``: 0 in discrete mode, where ``f*`` is the maximum
    over the candidate set). Rounds are 1-based; ``t`` is checked but the function does not depend on it.
    """

    #: The runner also records the simple regret (best observed point) of every run.
    TRACK_SIMPLE_REGRET = True

    def __init__(self, cfg: Config, inst: Instance, seed: int):
        self._cfg = cfg
        self._inst = inst
        self.seed = seed
        self.d = cfg.d
        self.horizon = cfg.horizon
        self.action_mode = cfg.action_mode
        self.N = cfg.n_candidates
        self._discrete = cfg.discrete

    def __repr__(self) -> str:
        return (
            f"NoiseFreeGPOracle(seed={self.seed}, instance={self._cfg.instance!r}, kernel={self._cfg.kernel!r}, "
            f"f*={self._inst.f_star:.6g})"
        )

    # --------------------------------------------------------------------------- the function
    @property
    def centres(self) -> np.ndarray:
        """``Z``: ``(J, d)`` expansion centres (read-only)."""
        return self._inst.Z

    @property
    def coefficients(self) -> np.ndarray:
        """``a``: ``(J,)`` expansion coefficients (read-only)."""
        return self._inst.a

    @property
    def f_candidates(self) -> np.ndarray:
        """``f`` at every candidate, ``(N,)`` (read-only)."""
        return self._inst.f_candidates

    @property
    def maximiser(self) -> np.ndarray:
        """The point ``x*`` with ``f(x*) = f*``: the best candidate (discrete mode) or the certified
        continuous maximiser (read-only ``(d,)``)."""
        return self._inst.maximiser

    @property
    def certificate(self) -> float:
        """Upper bound on ``sup_{[0,1]^d} f - f*`` in continuous mode (NaN for ``d >= 4``, see
        :mod:`papergym.envs.bandits.gp.instances`); 0 in discrete mode (``f*`` is then exact over the action set)."""
        return self._inst.certificate

    def values(self, X: Any) -> np.ndarray:
        """``f`` at the rows of ``X`` (``(m, d)``, any finite points) -> ``(m,)``."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.d:
            raise ValueError(f"X must have shape (m, {self.d}), got {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X must be finite")
        return kernel_expansion(self._cfg.kernel, self._cfg.lengthscale, X, self._inst.Z, self._inst.a)

    def rkhs_norm(self) -> float:
        """``||f||_k = sqrt(a^T K_ZZ a)``, recomputed from ``(Z, a)`` (``= B`` up to round-off)."""
        Z, a = self._inst.Z, self._inst.a
        return math.sqrt(float(a @ (kernel_matrix(self._cfg.kernel, Z, Z, self._cfg.lengthscale) @ a)))

    def _f(self, action: Any) -> float:
        if self._discrete:
            return float(self._inst.f_candidates[as_index(action, self.N)])
        x = as_points(action, (self.d,))
        inst = self._inst
        return float(kernel_expansion(self._cfg.kernel, self._cfg.lengthscale, x[None, :], inst.Z, inst.a)[0])

    # ------------------------------------------------------------------------ oracle protocol
    def mean_reward(self, action: Any, t: int) -> float:
        """``f(x_action)`` (the reward is exact)."""
        check_round(t, self.horizon)
        return self._f(action)

    def optimal_value(self, t: int) -> float:
        """``f*``: the maximum over the candidates (discrete) or over ``[0, 1]^d`` (continuous, certified
        to within :attr:`certificate`)."""
        check_round(t, self.horizon)
        return self._inst.f_star

    def regret(self, action: Any, t: int) -> float:
        """``f* - f(x_action) >= 0`` (continuous mode: ``max(f* - f(x), 0)``; the clip can only act on
        points better than ``f*``, i.e. by at most :attr:`certificate`)."""
        check_round(t, self.horizon)
        g = self._inst.f_star - self._f(action)
        return g if g > 0.0 else 0.0

    def best_action(self) -> int | np.ndarray:
        """An optimal action: the best candidate's index (discrete) or a copy of :attr:`maximiser`."""
        return self._inst.best_index if self._discrete else self._inst.maximiser.copy()

    def simple_regret(self, actions: Any) -> float:
        """``f* - max_s f(x_s)`` over the actions played so far (the best observed point, as in the paper):
        a sequence of indices (discrete) or a ``(k, d)`` array of points (continuous), ``k >= 1``."""
        if self._discrete:
            if isinstance(actions, np.ndarray) and actions.ndim == 1:
                idx = as_indices(actions, actions.shape, self.N)
            else:
                idx = np.array([as_index(a, self.N) for a in actions], dtype=np.intp)
            if idx.size == 0:
                raise ValueError("simple_regret needs at least one action")
            best = float(self._inst.f_candidates[idx].max())
        else:
            X = np.asarray(actions)
            if X.ndim != 2 or X.shape[0] == 0:
                raise ValueError(
                    f"simple_regret needs a (k, {self.d}) array of points with k >= 1, got shape {X.shape}"
                )
            X = as_points(X, (X.shape[0], self.d), "actions")
            best = float(kernel_expansion(self._cfg.kernel, self._cfg.lengthscale, X, self._inst.Z, self._inst.a).max())
        g = self._inst.f_star - best
        return g if g > 0.0 else 0.0


class BatchedNoiseFreeGPOracle:
    """Oracle of :class:`NoiseFreeGPBanditVectorEnv`: one function per row, vectorised over rows.

    ``mean_reward(actions, t)``, ``optimal_value(t)``, ``regret(actions, t)`` return ``(n,)`` (actions:
    ``(n,)`` indices or ``(n, d)`` points); ``simple_regret(history)`` takes the actions played so far
    stacked over time (``(k, n)`` or ``(k, n, d)``); row ``i`` equals ``oracles[i]`` bit for bit.
    """

    TRACK_SIMPLE_REGRET = True

    def __init__(self, cfg: Config, oracles: list[NoiseFreeGPOracle]):
        self._cfg = cfg
        self.oracles = oracles
        self.n = len(oracles)
        self.d = cfg.d
        self.horizon = cfg.horizon
        self.N = cfg.n_candidates
        self._discrete = cfg.discrete
        insts = [o._inst for o in oracles]
        self.f_star = read_only(np.array([i.f_star for i in insts]))
        self._rows = np.arange(self.n)
        if self._discrete:
            self._F = np.stack([i.f_candidates for i in insts])  # (n, N): a step is a lookup
        else:
            self._Zs = np.stack([i.Z for i in insts])  # (n, J, d)
            self._A = np.stack([i.a for i in insts])  # (n, J)

    def _f(self, actions: Any) -> np.ndarray:
        if self._discrete:
            return self._F[self._rows, as_indices(actions, (self.n,), self.N)]
        X = as_points(actions, (self.n, self.d), "actions")
        return kernel_expansion(self._cfg.kernel, self._cfg.lengthscale, X, self._Zs, self._A)

    @property
    def maximiser(self) -> np.ndarray:
        return np.stack([o.maximiser for o in self.oracles])

    @property
    def certificate(self) -> np.ndarray:
        return np.array([o.certificate for o in self.oracles])

    def mean_reward(self, actions: Any, t: int) -> np.ndarray:
        check_round(t, self.horizon)
        return self._f(actions)

    def optimal_value(self, t: int) -> np.ndarray:
        check_round(t, self.horizon)
        return self.f_star.copy()

    def regret(self, actions: Any, t: int) -> np.ndarray:
        check_round(t, self.horizon)
        return np.maximum(self.f_star - self._f(actions), 0.0)

    def best_action(self) -> np.ndarray:
        return np.array([o.best_action() for o in self.oracles])

    def rkhs_norm(self) -> np.ndarray:
        return np.array([o.rkhs_norm() for o in self.oracles])

    def simple_regret(self, history: Any) -> np.ndarray:
        H = np.asarray(history)
        if H.ndim < 1 or H.shape[0] == 0:
            raise ValueError("simple_regret needs at least one round of actions")
        if self._discrete:
            idx = as_indices(H, (H.shape[0], self.n), self.N)
            best = self._F[self._rows[None, :], idx].max(axis=0)
        else:
            k = H.shape[0]
            X = as_points(H, (k, self.n, self.d), "actions")
            best = np.max(
                [kernel_expansion(self._cfg.kernel, self._cfg.lengthscale, X[s], self._Zs, self._A) for s in range(k)],
                axis=0,
            )
        return np.maximum(self.f_star - best, 0.0)
