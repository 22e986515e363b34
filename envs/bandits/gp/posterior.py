"""The exact noise-free GP posterior (:class:`NoiseFreeGP`), shared by every GP agent of
``NoiseFreeGPBandit-v0`` (one implementation), and a dense reference (:func:`dense_posterior`).

Setting of S. Iwazaki, *Gaussian Process Upper Confidence Bound Achieves Nearly-Optimal Regret in Noise-Free
Gaussian Process Bandits* (arXiv 2502.19006, NeurIPS 2025); kernels in :mod:`papergym.envs.bandits.gp.kernels`.

:class:`NoiseFreeGP` keeps the posterior on a fixed candidate set ``C`` (``N x d``), updated by rank-one
Cholesky extensions. With data ``X_t = (x_1..x_t)``, ``y_t = f(X_t)`` and ``K_t = k(X_t, X_t) + jitter I =
L_t L_t^T`` ([paper]; tags: see docs/conventions.md):

- ``mu_t(x) = k_t(x)^T K_t^{-1} y_t``,  ``sigma_t^2(x) = k(x, x) - k_t(x)^T K_t^{-1} k_t(x)``.

The state kept is ``L_t``, ``V_t = k(C, X_t) L_t^{-T}`` (``N x t``) and ``alpha_t = L_t^{-1} y_t``, so
``mu_t = V_t alpha_t`` and ``sigma_t^2 = 1 - rowsum(V_t^2)``. Appending ``x`` with value ``y``:

- ``l = L_t^{-1} k_t(x)``, ``delta = sqrt(k(x, x) + jitter - l^T l)``                  (O(t^2))
- ``L_{t+1} = [[L_t, 0], [l^T, delta]]``, ``alpha_{t+1} = (y - l^T alpha_t) / delta``
- new column ``v = (k(C, x) - V_t l) / delta``                                        (O(N t))
- ``mu_{t+1} = mu_t + v alpha_{t+1}``, ``sigma_{t+1}^2 = sigma_t^2 - v^2`` (clipped at 0)

so a step costs ``O(t^2 + N t)`` instead of ``O(t^3 + N t^2)`` for a refactorisation. Nothing is ever
refactorised from scratch except when the Cholesky extension fails (``delta^2 <= 0`` or not finite), which
in exact arithmetic cannot happen for ``jitter > 0``.

Numerics [design]: float64 throughout; ``jitter`` starts at ``1e-10`` (added to ``K``'s diagonal only to keep
the factor well defined) and is multiplied by 10 on a Cholesky failure, after which the factor is rebuilt
once at the new jitter (counted in ``refactorisations``; a warning is issued); past :data:`MAX_JITTER` the
failure is an error. At a queried *candidate* the noise-free posterior is exact: ``mu = f(x)``, ``sigma =
0`` are set there (not left at their ``O(jitter)`` numerical values). A candidate already queried is never
appended again (it adds no information).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
from scipy.linalg import cholesky, solve_triangular

from papergym.envs.bandits.gp.kernels import KERNELS, check_lengthscale, kernel_matrix
from papergym.validate import one_of

MAX_JITTER = 1e-2  # past this, a failing factorisation is an error, not a numerical accident


def dense_posterior(
    kernel: str, lengthscale: float, X: np.ndarray, y: np.ndarray, C: np.ndarray, jitter: float = 1e-10
) -> tuple[np.ndarray, np.ndarray]:
    """Reference posterior ``(mu, sigma^2)`` on ``C`` from one dense solve with ``K + jitter I``
    (``O(t^3 + N t^2)``; for tests and benchmarks)."""
    K = kernel_matrix(kernel, X, X, lengthscale) + jitter * np.eye(len(X))
    Kc = kernel_matrix(kernel, C, X, lengthscale)
    A = np.linalg.solve(K, np.column_stack([np.asarray(y, float), Kc.T]))
    mu = Kc @ A[:, 0]
    var = 1.0 - np.einsum("ij,ji->i", Kc, A[:, 1:])
    return mu, np.maximum(var, 0.0)


class NoiseFreeGP:
    """Exact noise-free GP posterior on a fixed candidate set, with rank-one Cholesky updates.

    Parameters
    ----------
    candidates:
        ``(N, d)`` points at which the posterior is maintained (``mean``, ``var``, ``std``).
    kernel, lengthscale:
        One of :data:`KERNELS` and ``l > 0``.
    jitter:
        Initial diagonal jitter (default ``1e-10``); multiplied by 10 on a Cholesky failure.
    capacity:
        Initial number of data slots (grown by doubling as needed).

    Attributes
    ----------
    mean, var, std:
        ``(N,)`` posterior mean, variance and standard deviation at the candidates (prior: 0, 1, 1).
    n:
        Number of data points in the factor.
    X, y, indices:
        The data (``indices``: candidate index of each point, ``-1`` for a point added with
        :meth:`add_point` that is not a candidate).
    jitter, refactorisations:
        Current jitter and how many times the factor was rebuilt after a Cholesky failure.
    """

    def __init__(
        self, candidates: np.ndarray, kernel: str, lengthscale: float, *, jitter: float = 1e-10, capacity: int = 64
    ):
        C = np.asarray(candidates, dtype=np.float64)
        if C.ndim != 2 or C.shape[0] < 1 or C.shape[1] < 1:
            raise ValueError(f"candidates must be a non-empty (N, d) array, got shape {C.shape}")
        if not np.all(np.isfinite(C)):
            raise ValueError("candidates must be finite")
        self.kernel = one_of(kernel, "kernel", KERNELS)
        self.lengthscale = check_lengthscale(lengthscale)
        jitter = float(jitter)
        if not (math.isfinite(jitter) and jitter > 0.0):
            raise ValueError(f"jitter must be a positive finite number, got {jitter!r}")
        self.jitter = jitter
        self.initial_jitter = jitter
        self.refactorisations = 0
        self.C = C
        self.N, self.d = C.shape
        cap = max(1, int(capacity))
        self._L = np.zeros((cap, cap))
        self._V = np.zeros((self.N, cap), order="F")  # columns appended: contiguous in Fortran order
        self._alpha = np.zeros(cap)
        self._X = np.zeros((cap, self.d))
        self._y = np.zeros(cap)
        self._idx = np.full(cap, -1, dtype=np.int64)
        self.n = 0
        self.mean = np.zeros(self.N)
        self.var = np.ones(self.N)
        self._queried = np.zeros(self.N, dtype=bool)

    # ----------------------------------------------------------------------------------- views
    @property
    def std(self) -> np.ndarray:
        return np.sqrt(self.var)

    @property
    def X(self) -> np.ndarray:
        return self._X[: self.n]

    @property
    def y(self) -> np.ndarray:
        return self._y[: self.n]

    @property
    def indices(self) -> np.ndarray:
        return self._idx[: self.n]

    @property
    def L(self) -> np.ndarray:
        """The lower Cholesky factor of ``k(X, X) + jitter I`` (a copy)."""
        return self._L[: self.n, : self.n].copy()

    def is_queried(self, i: int) -> bool:
        return bool(self._queried[i])

    # ---------------------------------------------------------------------------------- update
    def _grow(self) -> None:
        cap = self._L.shape[0]
        new = 2 * cap
        L = np.zeros((new, new))
        L[:cap, :cap] = self._L
        V = np.zeros((self.N, new), order="F")
        V[:, :cap] = self._V
        self._L, self._V = L, V
        self._alpha = np.concatenate([self._alpha, np.zeros(cap)])
        self._X = np.concatenate([self._X, np.zeros((cap, self.d))])
        self._y = np.concatenate([self._y, np.zeros(cap)])
        self._idx = np.concatenate([self._idx, np.full(cap, -1, dtype=np.int64)])

    def add(self, i: int, y: float) -> bool:
        """Append candidate ``i`` observed exactly as ``y``. Returns ``False`` (and changes nothing)
        if ``i`` was already queried: a repeated point adds no information."""
        i = int(i)
        if not 0 <= i < self.N:
            raise IndexError(f"candidate index {i} out of range [0, {self.N})")
        if self._queried[i]:
            return False
        self._append(self.C[i], float(y), i)
        return True

    def add_point(self, x: np.ndarray, y: float) -> None:
        """Append an arbitrary point ``x`` (``(d,)``) observed exactly as ``y``."""
        x = np.asarray(x, dtype=np.float64).reshape(self.d)
        if not np.all(np.isfinite(x)):
            raise ValueError(f"point must be finite, got {x}")
        self._append(x, float(y), -1)

    def _append(self, x: np.ndarray, y: float, idx: int) -> None:
        if not math.isfinite(y):
            raise ValueError(f"observation must be finite, got {y!r}")
        t = self.n
        if t == self._L.shape[0]:
            self._grow()
        kx = kernel_matrix(self.kernel, self._X[:t], x[None, :], self.lengthscale)[:, 0] if t else np.zeros(0)
        # l = L_t^{-1} k_t(x); delta^2 = k(x,x) + jitter - l.l   (Schur complement, >= jitter exactly)
        l = solve_triangular(self._L[:t, :t], kx, lower=True, check_finite=False) if t else kx
        d2 = 1.0 + self.jitter - float(l @ l)
        self._X[t] = x
        self._y[t] = y
        self._idx[t] = idx
        if not (math.isfinite(d2) and d2 > 0.0):
            # Cholesky failure: raise the jitter and rebuild once (the only full refactorisation)
            self.n = t + 1
            old_jitter = self.jitter
            while True:
                self.jitter *= 10.0
                if self.jitter > MAX_JITTER:
                    self.n, self.jitter = t, old_jitter  # nothing appended; the old factor is intact
                    raise np.linalg.LinAlgError(
                        f"NoiseFreeGP: cannot factorise k(X, X) + jitter I even with jitter {MAX_JITTER:g}"
                    )
                warnings.warn(
                    f"NoiseFreeGP: Cholesky extension failed at n={t + 1}; jitter raised to "
                    f"{self.jitter:.1e} and the factor rebuilt",
                    RuntimeWarning,
                    stacklevel=3,
                )
                if self._rebuild():
                    break
            self.refactorisations += 1
            if idx >= 0:
                self._queried[idx] = True
            self._pin_all()
            return
        delta = math.sqrt(d2)
        self._L[t, :t] = l
        self._L[t, t] = delta
        a_new = (y - float(l @ self._alpha[:t])) / delta
        self._alpha[t] = a_new
        kc = kernel_matrix(self.kernel, self.C, x[None, :], self.lengthscale)[:, 0]
        v = kc - self._V[:, :t] @ l if t else kc
        v /= delta
        self._V[:, t] = v
        self.n = t + 1
        # mu_{t+1} = mu_t + v alpha_{t+1};  sigma^2_{t+1} = sigma^2_t - v^2
        self.mean += v * a_new
        self.var -= v * v
        np.maximum(self.var, 0.0, out=self.var)
        if idx >= 0:
            self._queried[idx] = True
        self._pin_all()

    def _rebuild(self) -> bool:
        """Factorise ``k(X, X) + jitter I`` from scratch and recompute ``V``, ``alpha``, ``mu``,
        ``sigma^2``. Returns ``False`` if the Cholesky factorisation fails."""
        n = self.n
        X = self._X[:n]
        K = kernel_matrix(self.kernel, X, X, self.lengthscale)
        K[np.diag_indices(n)] += self.jitter
        try:
            L = cholesky(K, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            return False
        if not np.all(np.isfinite(L)):
            return False
        self._L[:n, :n] = L
        self._L[n:, :] = 0.0
        self._L[:, n:] = 0.0
        Kc = kernel_matrix(self.kernel, self.C, X, self.lengthscale)
        self._V[:, :n] = solve_triangular(L, Kc.T, lower=True, check_finite=False).T
        self._alpha[:n] = solve_triangular(L, self._y[:n], lower=True, check_finite=False)
        self.mean = self._V[:, :n] @ self._alpha[:n]
        self.var = np.maximum(1.0 - np.einsum("ij,ij->i", self._V[:, :n], self._V[:, :n]), 0.0)
        return True

    def refactorise(self) -> None:
        """Recompute the whole state from scratch at the current jitter (a check of the rank-one
        updates; :meth:`add` never needs it)."""
        if self.n and not self._rebuild():
            raise np.linalg.LinAlgError(f"k(X, X) + {self.jitter:g} I is not positive definite")
        self._pin_all()

    def _pin_all(self) -> None:
        # the noise-free posterior is exact at queried candidates: mu = f(x), sigma = 0
        # (O(t): the rank-one updates would otherwise move them by O(jitter))
        q = self._idx[: self.n]
        m = q >= 0
        self.mean[q[m]] = self._y[: self.n][m]
        self.var[q[m]] = 0.0

    # ------------------------------------------------------------------------------- queries
    def posterior(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(mu, sigma^2)`` at arbitrary points ``Z`` (``(M, d)``), ``O(M t^2)``."""
        Z = np.atleast_2d(np.asarray(Z, dtype=np.float64))
        n = self.n
        if n == 0:
            return np.zeros(len(Z)), np.ones(len(Z))
        W = solve_triangular(
            self._L[:n, :n], kernel_matrix(self.kernel, self.X, Z, self.lengthscale), lower=True, check_finite=False
        )
        return W.T @ self._alpha[:n], np.maximum(1.0 - np.einsum("ij,ij->j", W, W), 0.0)

    def covariance(self, idx: Sequence[int] | np.ndarray) -> np.ndarray:
        """Joint posterior covariance ``k(C_S, C_S) - V_S V_S^T`` of the candidates ``idx``
        (``O(|S|^2 t)``; the diagonal equals ``var[idx]``)."""
        idx = np.asarray(idx, dtype=np.int64)
        Vs = self._V[idx, : self.n]
        S = kernel_matrix(self.kernel, self.C[idx], self.C[idx], self.lengthscale) - Vs @ Vs.T
        S = 0.5 * (S + S.T)
        S[np.diag_indices(len(idx))] = self.var[idx]
        q = self._queried[idx]
        S[q, :] = 0.0
        S[:, q] = 0.0
        return S
