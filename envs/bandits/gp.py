"""Noise-free Gaussian-process bandit (``NoiseFreeGPBandit-v0``) and the shared GP numerics.

Shared numerics (imported by every GP agent; one implementation)
----------------------------------------------------------------
* :data:`KERNELS`, :func:`kernel_from_distance`, :func:`kernel_matrix`: the stationary kernels of
  the paper's setting, normalised to ``k(x, x) = 1`` (``r = ||x - x'||_2``, lengthscale ``l``):

  - ``se``:          ``exp(-r^2 / (2 l^2))``
  - ``matern-0.5``:  ``exp(-r / l)``
  - ``matern-1.5``:  ``(1 + sqrt(3) r / l) exp(-sqrt(3) r / l)``
  - ``matern-2.5``:  ``(1 + sqrt(5) r / l + 5 r^2 / (3 l^2)) exp(-sqrt(5) r / l)``

* :class:`NoiseFreeGP`: the exact noise-free posterior on a fixed candidate set ``C`` (``N x d``),
  updated by rank-one Cholesky extensions. With data ``X_t = (x_1..x_t)``, ``y_t = f(X_t)`` and
  ``K_t = k(X_t, X_t) + jitter I = L_t L_t^T`` ([paper]; tags: see docs/conventions.md):

  - ``mu_t(x) = k_t(x)^T K_t^{-1} y_t``,  ``sigma_t^2(x) = k(x, x) - k_t(x)^T K_t^{-1} k_t(x)``.

  The state kept is ``L_t``, ``V_t = k(C, X_t) L_t^{-T}`` (``N x t``) and ``alpha_t = L_t^{-1} y_t``, so
  ``mu_t = V_t alpha_t`` and ``sigma_t^2 = 1 - rowsum(V_t^2)``. Appending ``x`` with value ``y``:

  - ``l = L_t^{-1} k_t(x)``, ``delta = sqrt(k(x, x) + jitter - l^T l)``                  (O(t^2))
  - ``L_{t+1} = [[L_t, 0], [l^T, delta]]``, ``alpha_{t+1} = (y - l^T alpha_t) / delta``
  - new column ``v = (k(C, x) - V_t l) / delta``                                        (O(N t))
  - ``mu_{t+1} = mu_t + v alpha_{t+1}``, ``sigma_{t+1}^2 = sigma_t^2 - v^2`` (clipped at 0)

  so a step costs ``O(t^2 + N t)`` instead of ``O(t^3 + N t^2)`` for a refactorisation. Nothing is
  ever refactorised from scratch except when the Cholesky extension fails (``delta^2 <= 0`` or not
  finite), which in exact arithmetic cannot happen for ``jitter > 0``.

  Numerics [design]: float64 throughout; ``jitter`` starts at ``1e-10`` (added to ``K``'s diagonal only
  to keep the factor well defined) and is multiplied by 10 on a Cholesky failure, after which the
  factor is rebuilt once at the new jitter (counted in ``refactorisations``; a warning is issued). At
  a queried *candidate* the noise-free posterior is exact: ``mu = f(x)``, ``sigma = 0`` are set
  there (not left at their ``O(jitter)`` numerical values). A candidate already queried is never
  appended again (it adds no information).

The environment (``NoiseFreeGPBandit-v0``)
-----------------------------------------
Environment of S. Iwazaki, *Gaussian Process Upper Confidence Bound Achieves Nearly-Optimal Regret in
Noise-Free Gaussian Process Bandits* (arXiv 2502.19006, NeurIPS 2025); see ``docs/papers/noise-free-gp.md``.

``NoiseFreeGPBanditEnv``        the Gymnasium env (one run; see its docstring for spaces and kwargs).
``NoiseFreeGPBanditVectorEnv``  native vector env (``num_envs`` seeds stepped in numpy).
``NoiseFreeGPOracle``           per-run oracle; ``BatchedNoiseFreeGPOracle`` the vector env's.
``make_problem(...)``           the public ``ProblemSpec``; ``make_candidates(...)`` the candidate set.
``INSTANCES``, ``ACTION_MODES``, ``CANDIDATE_SETS``: valid values of the string kwargs.

Every constant below is [design] (the paper's experimental protocol is unknown) and is a
constructor kwarg unless said otherwise.

* Functions: ``f = sum_j a_j k(., z_j)`` with ``||f||_k = sqrt(a^T K_ZZ a) = B`` exactly (rescaled after
  the draw; the oracle keeps ``(Z, a)``). Randomness only from ``run_seeds(seed).instance``:
  ``rkhs-sum`` draws ``Z`` (``J x d`` uniforms) then ``a ~ N(0, I_J)``; ``gp-interpolant`` draws
  ``u ~ N(0, I)`` on the fixed coarse grid ``Z`` and sets ``y = L u ~ N(0, K_ZZ)``,
  ``a = (K_ZZ + eps I)^{-1} y = L^{-T} u`` with ``L L^T = K_ZZ + eps I``, ``eps = 1e-10``
  (``GP_INTERPOLANT_JITTER``, module constant). So ``f`` interpolates the GP sample ``y`` up to
  ``eps |a|``; its norm is recomputed from ``(Z, a)`` with the unjittered ``K_ZZ`` before rescaling.
* ``gp-interpolant`` conditioning: ``K_ZZ`` must have its smallest eigenvalue above ``1e-8``
  (``GP_INTERPOLANT_MIN_EIG``), so that ``|a|^2 <= 1e8 ||f||_k^2`` and values / norm are accurate.
  ``n_inducing=None`` takes the preset (15 / 7 / 5 per axis for ``d = 1 / 2 / >= 3``) and lowers it until
  the test passes (e.g. SE, ``d = 1``, ``l = 0.2``: 13 points); an explicit ``n_inducing`` that fails
  it is a ``ValueError`` naming the largest value that works. ``resolved_kwargs`` reports the value used.
* Candidate sets (:func:`make_candidates`) are public, fixed by ``candidate_set`` / ``n_candidates`` /
  ``candidate_seed`` (never by the run seed; drawing the ``d = 3`` Sobol set from the instance stream would be
  possible, but a
  seed-dependent set would make the ``ProblemSpec`` seed-dependent), read-only, at most
  ``MAX_CANDIDATES`` points. Grid for ``d >= 3`` with ``n_candidates=None``: side ``round(2048^(1/d))``.
* Discrete mode (default): ``f`` is evaluated on the candidates at ``reset``; ``f* = max`` over them
  (exact over the action set), ``certificate = 0``.
* Continuous mode: ``f*`` = the best value among (a) the candidates, (b) a dense oracle set -- a grid with
  10001 (``d = 1``), 301^2 (``d = 2``), 61^3 (``d = 3``) points, or 2^17 scrambled Sobol points with
  fixed seed 0 for ``d >= 4`` -- (c) L-BFGS-B (bounds ``[0, 1]^d``, ``ftol = 1e-15``) polished from the
  10 best *local maxima* of the grid (the 10 best points of the Sobol set), and (d) the centres ``z_j``
  (Matern-0.5 peaks sit on them). Local maxima rather than the 10 best points avoid ten starts on
  one peak. Gradients are analytic for SE and Matern-1.5/2.5 and finite differences for Matern-0.5.
* ``certificate`` (continuous mode) ``= max(0, max_grid f + G(h) - f*) >= sup f - f*`` with ``h =
  sqrt(d) / (2 (side - 1))`` the grid's covering radius (the grid includes every face of the cube):

  - every kernel: ``G(h) = B sqrt(2 (1 - k(h)))`` (:func:`kernel_lipschitz_profile`;
    ``|f(x) - f(x')| <= B ||k(x, .) - k(x', .)||_k``);
  - a maximiser ``x*`` lies in the relative interior of some face ``F`` where the gradient of ``f|_F``
    vanishes, and the grid restricted to ``F`` covers it within ``h``; with ``phi(s) = k(s u)``:
    ``f(x*) - f(g) <= B |g - x*| int_0^1 sqrt(2 (phi''(tau |g - x*|) - phi''(0))) dtau``, which gives
    ``G(h) = B sqrt(phi''''(0)) h^2 / 2`` for SE (``phi''''(0) = 3 / l^4``) and Matern-2.5
    (``25 / l^4``), and ``G(h) = (2/3) B sqrt(12 sqrt3) (h / l)^{3/2}`` for Matern-1.5
    (``phi''(s) - phi''(0) <= (3 / l^2) 2 sqrt3 s / l``); the smaller bound is used.

  For the ``d >= 4`` Sobol set no deterministic covering radius is available: ``certificate = NaN``.
  Matern-0.5 certificates are loose (``O(sqrt(h))``) even where ``f*`` itself is accurate.
  Continuous regret is ``max(f* - f(x), 0)``: the clip can only act on points better than ``f*``,
  i.e. by at most ``certificate``. Rounding errors (~1e-15) are ignored.
* One evaluator (elementwise numpy, reductions over the last axis) computes every reward, mean and
  regret, so rows of the vector env are bit-identical to single envs and ``f`` at a candidate's
  coordinates equals ``f_candidates`` exactly.
* Actions, discrete mode: a Python int, a NumPy integer, or an integer array of shape ``()`` or ``(1,)``;
  bools, floats (even integral), NaN, other shapes and indices outside ``[0, N)`` are rejected (rules
  ``dtype``, ``finite``, ``shape``, ``range``). Continuous mode: float or integer arrays of shape
  ``(d,)`` (rules ``dtype``, ``shape``, ``finite``, ``bounds``). The vector env takes ``(n,)`` integer
  arrays (``MultiDiscrete`` space) or ``(n, d)`` points.
* Instances are cached per ``(configuration, seed)`` (64 most recent, candidate sets up to 65536
  points), so the agents of one seed share the continuous-mode optimisation within a process.
* ``reset(seed=None)`` draws the run seed from ``self.np_random`` (Gymnasium's convention), as
  ``NonStatLipschitz-v0`` does. Vector env ``info``: ``{"t": (n,) ints, "_t": (n,) True}``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv
from scipy.linalg import cholesky, solve_triangular
from scipy.spatial.distance import cdist

from papergym.envs.spec import InvalidActionError, ProblemSpec, _check_seed, run_seeds
from papergym.envs.spec import draw_run_seeds as _draw_run_seeds, vector_run_seeds  # noqa: E402

__all__ = [
    "KERNELS",
    "kernel_from_distance",
    "kernel_matrix",
    "kernel_lipschitz_profile",
    "NoiseFreeGP",
    "dense_posterior",
    # the environment
    "ENV_ID",
    "INSTANCES",
    "ACTION_MODES",
    "CANDIDATE_SETS",
    "MAX_CANDIDATES",
    "make_candidates",
    "make_problem",
    "NoiseFreeGPBanditEnv",
    "NoiseFreeGPBanditVectorEnv",
    "NoiseFreeGPOracle",
    "BatchedNoiseFreeGPOracle",
]

KERNELS: tuple[str, ...] = ("se", "matern-0.5", "matern-1.5", "matern-2.5")

MAX_JITTER = 1e-2  # past this, a failing factorisation is an error, not a numerical accident
_SQRT3 = math.sqrt(3.0)
_SQRT5 = math.sqrt(5.0)


def _check_kernel(kernel: Any) -> str:
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(KERNELS)}; got {kernel!r}")
    return kernel


def _check_lengthscale(lengthscale: Any) -> float:
    if isinstance(lengthscale, bool):
        raise ValueError(f"lengthscale must be a positive finite number, got {lengthscale!r}")
    try:
        ell = float(lengthscale)
    except (TypeError, ValueError):
        raise ValueError(f"lengthscale must be a positive finite number, got {lengthscale!r}") from None
    if not (math.isfinite(ell) and ell > 0.0):
        raise ValueError(f"lengthscale must be a positive finite number, got {lengthscale!r}")
    return ell


def kernel_from_distance(kernel: str, r: np.ndarray, lengthscale: float) -> np.ndarray:
    """``k`` as a function of the Euclidean distance ``r >= 0`` (array in, array out; ``k(0) = 1``)."""
    kernel = _check_kernel(kernel)
    ell = _check_lengthscale(lengthscale)
    s = np.asarray(r, dtype=np.float64) / ell  # a fresh array: everything below works in place on it
    if kernel == "se":
        s *= s
        s *= -0.5
        return np.exp(s, out=s) if s.ndim else np.exp(s)
    if kernel == "matern-0.5":
        np.negative(s, out=s) if s.ndim else None
        return np.exp(s, out=s) if s.ndim else np.exp(-s)
    c = _SQRT3 if kernel == "matern-1.5" else _SQRT5
    if not s.ndim:
        a = c * s
        return (1.0 + a) * np.exp(-a) if kernel == "matern-1.5" else (1.0 + a + a * a / 3.0) * np.exp(-a)
    s *= c  # a = c r / l
    e = np.exp(-s)
    if kernel == "matern-1.5":
        s += 1.0  # 1 + a
    else:  # matern-2.5: 1 + a + a^2 / 3
        poly = s * s
        poly *= 1.0 / 3.0
        poly += s
        poly += 1.0
        s = poly
    s *= e
    return s


def kernel_matrix(kernel: str, X: np.ndarray, Y: np.ndarray, lengthscale: float) -> np.ndarray:
    """``k(X, Y)``: ``(len(X), len(Y))`` float64 Gram matrix. Distances by :func:`scipy.spatial.distance.cdist`
    (exact ``0`` on the diagonal, unlike the ``|x|^2 + |y|^2 - 2 x.y`` expansion)."""
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    Y = np.atleast_2d(np.asarray(Y, dtype=np.float64))
    return kernel_from_distance(kernel, cdist(X, Y), lengthscale)


def kernel_lipschitz_profile(kernel: str, lengthscale: float, h: float) -> float:
    """``sqrt(2 (1 - k(h)))`` = the RKHS distance ``||k(x, .) - k(x', .)||_k`` of two points at distance
    ``h``. For ``||f||_k <= B``: ``|f(x) - f(x')| <= B sqrt(2 (1 - k(h)))`` (Cauchy-Schwarz)."""
    return float(math.sqrt(max(0.0, 2.0 * (1.0 - float(kernel_from_distance(kernel, np.array(h), lengthscale))))))


def dense_posterior(kernel: str, lengthscale: float, X: np.ndarray, y: np.ndarray, C: np.ndarray,
                    jitter: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
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

    def __init__(self, candidates: np.ndarray, kernel: str, lengthscale: float, *, jitter: float = 1e-10,
                 capacity: int = 64):
        C = np.asarray(candidates, dtype=np.float64)
        if C.ndim != 2 or C.shape[0] < 1 or C.shape[1] < 1:
            raise ValueError(f"candidates must be a non-empty (N, d) array, got shape {C.shape}")
        if not np.all(np.isfinite(C)):
            raise ValueError("candidates must be finite")
        self.kernel = _check_kernel(kernel)
        self.lengthscale = _check_lengthscale(lengthscale)
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
                        f"NoiseFreeGP: cannot factorise k(X, X) + jitter I even with jitter {MAX_JITTER:g}")
                warnings.warn(f"NoiseFreeGP: Cholesky extension failed at n={t + 1}; jitter raised to "
                              f"{self.jitter:.1e} and the factor rebuilt", RuntimeWarning, stacklevel=3)
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
        W = solve_triangular(self._L[:n, :n], kernel_matrix(self.kernel, self.X, Z, self.lengthscale),
                             lower=True, check_finite=False)
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


# =========================================================================================
# NoiseFreeGPBandit-v0: configuration, candidate sets, instance families, oracle, envs
# =========================================================================================
ENV_ID = "NoiseFreeGPBandit-v0"
#: what ``papergym compare`` calls the regret it reports
REGRET_NAME = "cumulative regret"

#: Instance families: random kernel expansions with exact RKHS norm ``B``.
INSTANCES: tuple[str, ...] = ("rkhs-sum", "gp-interpolant")
#: Defaults of ``papergym compare NoiseFreeGPBandit-v0`` (20 seeds; the horizon is the env's
#: own d-dependent preset) [design].
COMPARE_DEFAULTS: dict[str, int] = {"seeds": 20}
#: ``action_mode`` values: an index into the candidate set, or any point of ``[0, 1]^d``.
ACTION_MODES: tuple[str, ...] = ("discrete", "continuous")
#: ``candidate_set`` values (``auto``: grid for ``d <= 2``, Sobol for ``d >= 3``).
CANDIDATE_SETS: tuple[str, ...] = ("auto", "grid", "sobol", "uniform")

#: Largest candidate set accepted (memory guard: the set, one ``f`` per run, the agents' ``N x t`` state).
MAX_CANDIDATES = 2**21
#: Largest number of expansion centres (``n_centres``, ``n_inducing^d``): ``J x J`` Gram matrices.
MAX_CENTRES = 4096
#: gp-interpolant: jitter of the Cholesky factor of ``K_ZZ`` used to draw ``y ~ N(0, K_ZZ)`` [design].
GP_INTERPOLANT_JITTER = 1e-10
#: gp-interpolant: smallest eigenvalue of ``K_ZZ`` accepted (``a = K_ZZ^{-1} y`` then has
#: ``|a|^2 <= 1e8 a^T K a``: values and norm stay accurate to ~1e-8 relative or better) [design].
GP_INTERPOLANT_MIN_EIG = 1e-8

_PRESET_HORIZON = {1: 60, 2: 150}  # d >= 3: 200 [design]
_PRESET_N_CANDIDATES = {1: 1000, 2: 2500}  # d >= 3: 2048 Sobol points [design]
_PRESET_N_INDUCING = {1: 15, 2: 7}  # d >= 3: 5 per axis [design]
_DENSE_GRID_SIDE = {1: 10001, 2: 301, 3: 61}  # continuous-mode oracle grid; d >= 4: 2^17 Sobol points
_DENSE_SOBOL_LOG2 = 17
_DENSE_SOBOL_SEED = 0  # fixed (public) seed of the d >= 4 oracle point set [design]
_N_POLISH = 10  # L-BFGS-B starts
_CHUNK = 1 << 20  # elements of the (m, J, d) temporaries of the evaluator
# fourth derivative at 0 of t -> k(t u) (|u| = 1), times l^4: curvature bound of the certificate
_PHI4 = {"se": 3.0, "matern-2.5": 25.0}


def _as_int(name: str, v: Any, lo: int, hi: int | None = None) -> int:
    if isinstance(v, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    if isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v).is_integer():
        v = int(v)
    if not isinstance(v, (int, np.integer)) or v < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    if hi is not None and v > hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {v!r}")
    return int(v)


def _as_positive(name: str, v: Any) -> float:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a positive finite number, got {v!r}")
    x = float(v)
    if not (math.isfinite(x) and x > 0.0):
        raise ValueError(f"{name} must be a positive finite number, got {v!r}")
    return x


def _choice(name: str, v: Any, valid: tuple[str, ...]) -> str:
    if not isinstance(v, str) or v not in valid:
        raise ValueError(f"{name} must be one of {', '.join(valid)}; got {v!r}")
    return v


# ------------------------------------------------------------------------------- candidate sets
def _grid(d: int, side: int) -> np.ndarray:
    """``side^d`` points, ``side`` equispaced values per axis including 0 and 1; point
    ``(i_1, .., i_d)`` has index ``((i_1 side + i_2) side + ..) + i_d`` (last axis fastest)."""
    g = np.linspace(0.0, 1.0, side)
    return np.stack(np.meshgrid(*([g] * d), indexing="ij"), axis=-1).reshape(-1, d)


def _sobol(d: int, n: int, seed: int) -> np.ndarray:
    from scipy.stats import qmc

    gen = np.random.default_rng(seed)  # a Generator: same points under scipy's `seed=` and `rng=` APIs
    try:
        engine = qmc.Sobol(d, scramble=True, rng=gen)
    except TypeError:  # scipy < 1.15
        engine = qmc.Sobol(d, scramble=True, seed=gen)
    with warnings.catch_warnings():
        # n need not be a power of two (then the set is a prefix of the sequence)
        warnings.filterwarnings("ignore", message=".*balance properties.*", category=UserWarning)
        return engine.random(n)


def _grid_side(d: int, n: int) -> int:
    side = int(round(n ** (1.0 / d)))
    for s in (side - 1, side, side + 1):
        if s >= 2 and s**d == n:
            return s
    if d == 1:
        raise ValueError(f"n_candidates must be >= 2 for a grid (it includes 0 and 1), got {n}")
    lo, hi = max(2, int(math.floor(n ** (1.0 / d)))), int(math.ceil(n ** (1.0 / d)))
    hint = sorted({max(2, lo) ** d, max(2, hi) ** d})
    auto = ", or 'auto' with d=2" if d == 2 else ""
    raise ValueError(
        f"n_candidates={n} is not side^{d} for an integer side >= 2, as a {d}-D grid needs "
        f"(candidate_set='grid'{auto}); e.g. {' or '.join(map(str, hint))}, or candidate_set='sobol' / 'uniform'"
    )


@lru_cache(maxsize=64)
def _candidates_cached(kind: str, d: int, n: int, seed: int) -> np.ndarray:
    if kind == "grid":
        C = _grid(d, _grid_side(d, n))
    elif kind == "sobol":
        C = _sobol(d, n, seed)
    else:  # uniform
        C = np.random.default_rng(seed).random((n, d))
    C = np.ascontiguousarray(C, dtype=np.float64)
    C.flags.writeable = False
    return C


def _resolve_candidates(d: int, candidate_set: Any, n_candidates: Any, candidate_seed: Any) -> tuple[str, int, int]:
    kind = _choice("candidate_set", candidate_set, CANDIDATE_SETS)
    seed = _as_int("candidate_seed", candidate_seed, 0)
    if kind == "auto":
        kind = "grid" if d <= 2 else "sobol"
    if n_candidates is None:
        if kind == "grid" and d >= 3:
            n = max(2, int(round(2048 ** (1.0 / d)))) ** d  # side = round(2048^(1/d)) [design]
        else:
            n = _PRESET_N_CANDIDATES.get(d, 2048)
    else:
        n = _as_int("n_candidates", n_candidates, 1)
    if n > MAX_CANDIDATES:
        raise ValueError(f"n_candidates={n} is too large (at most {MAX_CANDIDATES:,} candidate points); "
                         f"use a smaller n_candidates, or action_mode='continuous' for a dense domain")
    if kind == "grid":
        _grid_side(d, n)  # validates n
    return kind, n, seed


def make_candidates(d: int = 1, candidate_set: str = "auto", n_candidates: int | None = None,
                    candidate_seed: int = 0) -> np.ndarray:
    """The public candidate set: a read-only ``(N, d)`` float64 array.

    * ``"grid"``: ``d = 1``: ``N`` equispaced points on ``[0, 1]`` (0 and 1 included); ``d >= 2``: the
      product grid with ``side = N^(1/d)`` points per axis (``N`` must be ``side^d``); default ``N``:
      1000 (``d = 1``), 2500 = 50 x 50 (``d = 2``), ``round(2048^(1/d))^d`` (``d >= 3``).
    * ``"sobol"``: the first ``N`` points of a scrambled Sobol sequence,
      ``scipy.stats.qmc.Sobol(d, scramble=True)`` driven by ``np.random.default_rng(candidate_seed)``
      (default ``N``: 1000 / 2500 / 2048 for ``d = 1 / 2 / >= 3``).
    * ``"uniform"``: ``np.random.default_rng(candidate_seed).random((N, d))``.
    * ``"auto"`` (default): ``"grid"`` for ``d <= 2``, ``"sobol"`` for ``d >= 3``.

    The set is public and the same for every run seed (``candidate_seed`` is a kwarg, never the run seed).
    """
    d = _as_int("d", d, 1)
    kind, n, seed = _resolve_candidates(d, candidate_set, n_candidates, candidate_seed)
    return _candidates_cached(kind, d, n, seed)


# ------------------------------------------------------------------------------- gp-interpolant
def _min_eig_ok(kernel: str, ell: float, d: int, p: int) -> bool:
    """``lambda_min(K_ZZ) > GP_INTERPOLANT_MIN_EIG`` on the ``p^d`` grid (exact test: Cholesky of
    ``K_ZZ - GP_INTERPOLANT_MIN_EIG I`` succeeds)."""
    Z = _grid(d, p)
    K = kernel_matrix(kernel, Z, Z, ell)
    K[np.diag_indices(len(Z))] -= GP_INTERPOLANT_MIN_EIG
    try:
        cholesky(K, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return False
    return True


@lru_cache(maxsize=64)
def _resolve_inducing(kernel: str, ell: float, d: int, n_inducing: int | None) -> int:
    if n_inducing is None:
        p = _PRESET_N_INDUCING.get(d, 5)
        while p > 2 and (p**d > MAX_CENTRES or not _min_eig_ok(kernel, ell, d, p)):
            p -= 1
        if p**d > MAX_CENTRES:
            raise ValueError(f"instance='gp-interpolant' needs n_inducing^d <= {MAX_CENTRES} coarse-grid points; "
                             f"even n_inducing=2 gives 2^{d} = {2**d}: use instance='rkhs-sum' for d={d}")
    else:
        p = n_inducing
        if p**d > MAX_CENTRES:
            raise ValueError(f"n_inducing={p} gives {p}^{d} = {p**d} coarse-grid points for d={d}; at most "
                             f"{MAX_CENTRES} are allowed (choose n_inducing <= {int(MAX_CENTRES ** (1 / d) + 1e-9)})")
    if not _min_eig_ok(kernel, ell, d, p):
        ok = [q for q in range(p - 1, 1, -1) if _min_eig_ok(kernel, ell, d, q)]
        hint = f"n_inducing <= {ok[0]} works" if ok else "no n_inducing >= 2 works"
        raise ValueError(
            f"n_inducing={p}: the {p}^{d} coarse grid is too ill-conditioned for kernel={kernel!r}, "
            f"lengthscale={ell:g} (smallest eigenvalue of K_ZZ <= {GP_INTERPOLANT_MIN_EIG:g}); {hint}. "
            f"Use a smaller n_inducing or lengthscale, or instance='rkhs-sum'"
        )
    return p


@lru_cache(maxsize=64)
def _inducing_factor(kernel: str, ell: float, d: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Coarse grid ``Z`` (``p^d`` points) and the lower Cholesky factor of ``K_ZZ + jitter I`` (read-only)."""
    Z = _grid(d, p)
    K = kernel_matrix(kernel, Z, Z, ell)
    K[np.diag_indices(len(Z))] += GP_INTERPOLANT_JITTER
    L = cholesky(K, lower=True, check_finite=False)
    Z.flags.writeable = False
    L.flags.writeable = False
    return Z, L


# -------------------------------------------------------------------------------- configuration
@dataclass(frozen=True)
class _Config:
    """A validated configuration (everything but the run seed)."""

    instance: str
    horizon: int
    d: int
    kernel: str
    lengthscale: float
    B: float
    action_mode: str
    candidate_kind: str
    n_candidates: int
    candidate_seed: int
    n_centres: int
    n_inducing: int | None  # None for rkhs-sum (not used)

    @property
    def discrete(self) -> bool:
        return self.action_mode == "discrete"

    @property
    def resolved_kwargs(self) -> dict[str, Any]:
        return {
            "horizon": self.horizon,
            "lengthscale": self.lengthscale,
            "n_candidates": self.n_candidates,
            "n_inducing": self.n_inducing,
        }

    @property
    def candidates(self) -> np.ndarray:
        return _candidates_cached(self.candidate_kind, self.d, self.n_candidates, self.candidate_seed)


def _make_config(
    instance: str = "rkhs-sum",
    horizon: int | None = None,
    d: int = 1,
    kernel: str = "se",
    lengthscale: float | None = None,
    B: float = 1.0,
    action_mode: str = "discrete",
    candidate_set: str = "auto",
    n_candidates: int | None = None,
    candidate_seed: int = 0,
    n_centres: int = 20,
    n_inducing: int | None = None,
) -> _Config:
    instance = _choice("instance", instance, INSTANCES)
    d = _as_int("d", d, 1)
    T = _PRESET_HORIZON.get(d, 200) if horizon is None else _as_int("horizon", horizon, 1)
    kernel = _choice("kernel", kernel, KERNELS)
    if lengthscale is None:
        ell = 0.1 if d == 1 else 0.2
    else:
        if isinstance(lengthscale, (bool, np.bool_)) or not isinstance(lengthscale, (int, float, np.integer, np.floating)):
            raise ValueError(f"lengthscale must be None or a positive finite number, got {lengthscale!r}")
        ell = _check_lengthscale(lengthscale)
    B = _as_positive("B", B)
    action_mode = _choice("action_mode", action_mode, ACTION_MODES)
    kind, n, cseed = _resolve_candidates(d, candidate_set, n_candidates, candidate_seed)
    J = _as_int("n_centres", n_centres, 1, MAX_CENTRES)
    p = None if n_inducing is None else _as_int("n_inducing", n_inducing, 2)
    if instance == "gp-interpolant":
        p = _resolve_inducing(kernel, ell, d, p)
    else:
        p = None  # not used by rkhs-sum
    return _Config(instance, T, d, kernel, ell, B, action_mode, kind, n, cseed, J, p)


def _obs_space(B: float, shape: tuple[int, ...]) -> spaces.Box:
    """``|f(x)| <= ||f||_k sqrt(k(x, x)) = B`` (Cauchy-Schwarz, ``k(x, x) = 1``); the bound is widened by
    ``1e-9`` relative so that the round-off of ``||f||_k = B`` can never put an observation outside."""
    b = float(B) * (1.0 + 1e-9)
    return spaces.Box(-b, b, shape, np.float64)


def _problem(cfg: _Config) -> ProblemSpec:
    C = cfg.candidates
    if cfg.discrete:
        action_space: gym.Space = spaces.Discrete(len(C))
    else:
        action_space = spaces.Box(0.0, 1.0, (cfg.d,), np.float64)
    return ProblemSpec(
        env_id=ENV_ID,
        action_space=action_space,
        observation_space=_obs_space(cfg.B, (1,)),
        horizon=cfg.horizon,
        params={"d": cfg.d, "kernel": cfg.kernel, "lengthscale": cfg.lengthscale, "B": cfg.B,
                "candidates": C, "action_mode": cfg.action_mode},
    )


def make_problem(
    d: int = 1,
    kernel: str = "se",
    lengthscale: float | None = None,
    B: float = 1.0,
    horizon: int | None = None,
    action_mode: str = "discrete",
    candidate_set: str = "auto",
    n_candidates: int | None = None,
    candidate_seed: int = 0,
) -> ProblemSpec:
    """The public :class:`~papergym.envs.spec.ProblemSpec` of NoiseFreeGPBandit-v0 (what an agent may
    know): spaces, ``horizon`` and ``params = {d, kernel, lengthscale, B, candidates, action_mode}``.
    ``None`` defaults are resolved as in :class:`NoiseFreeGPBanditEnv`; the same for every seed."""
    cfg = _make_config(horizon=horizon, d=d, kernel=kernel, lengthscale=lengthscale, B=B, action_mode=action_mode,
                       candidate_set=candidate_set, n_candidates=n_candidates, candidate_seed=candidate_seed)
    return _problem(cfg)


# ---------------------------------------------------------------------------- kernel expansions
def _expansion(kernel: str, ell: float, X: np.ndarray, Z: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``f(x_i) = sum_j a_j k(x_i, z_j)`` for the rows of ``X`` (``(m, d)``): one function (``Z (J, d)``,
    ``a (J,)``) or one per row (``Z (m, J, d)``, ``a (m, J)``).

    The one evaluator of every reward, mean and regret: elementwise numpy arithmetic and reductions over
    the last (contiguous) axis only, so a row's value does not depend on ``m`` or on the other rows (the
    vector env is bit-identical to the single env, and ``f`` at a candidate's coordinates equals
    ``f_candidates``)."""
    m, d = X.shape
    J = Z.shape[-2]
    out = np.empty(m)
    step = max(1, _CHUNK // (J * d))
    per_row = Z.ndim == 3
    for s in range(0, m, step):
        e = min(m, s + step)
        diff = X[s:e, None, :] - (Z[s:e] if per_row else Z)
        r = np.sqrt(np.sum(diff * diff, axis=-1))
        out[s:e] = np.sum(kernel_from_distance(kernel, r, ell) * (a[s:e] if per_row else a), axis=-1)
    return out


def _expansion_fast(kernel: str, ell: float, X: np.ndarray, Z: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Same values as :func:`_expansion` up to round-off, faster on large ``X`` (``cdist`` + BLAS);
    used only to scan the continuous-mode oracle grid."""
    out = np.empty(len(X))
    step = max(1, _CHUNK // len(Z))
    for s in range(0, len(X), step):
        out[s:s + step] = kernel_matrix(kernel, X[s:s + step], Z, ell) @ a
    return out


def _value_and_grad(kernel: str, ell: float, Z: np.ndarray, a: np.ndarray):
    """``x -> (-f(x), -grad f(x))`` for L-BFGS-B; ``grad f(x) = sum_j a_j (k'(r_j)/r_j) (x - z_j)`` with
    ``k'(r)/r``: SE ``-k/l^2``; Matern-1.5 ``-(3/l^2) e^{-s}`` (``s = sqrt3 r/l``); Matern-2.5
    ``-(5/(3 l^2)) (1 + s) e^{-s}`` (``s = sqrt5 r/l``); all finite at ``r = 0``. Matern-0.5 has a kink
    at every centre: ``None`` is returned (finite differences)."""
    if kernel == "matern-0.5":
        return None
    il2 = 1.0 / (ell * ell)

    def fg(x: np.ndarray):
        diff = x[None, :] - Z
        r = np.sqrt(np.sum(diff * diff, axis=-1))
        if kernel == "se":
            k = np.exp(-0.5 * r * r * il2)
            c = -k * il2
        elif kernel == "matern-1.5":
            s = _SQRT3 * r / ell
            e = np.exp(-s)
            k = (1.0 + s) * e
            c = -3.0 * il2 * e
        else:  # matern-2.5
            s = _SQRT5 * r / ell
            e = np.exp(-s)
            k = (1.0 + s + s * s / 3.0) * e
            c = -(5.0 / 3.0) * il2 * (1.0 + s) * e
        return -float(k @ a), -((a * c) @ diff)

    return fg


@lru_cache(maxsize=8)
def _dense_set(d: int) -> tuple[np.ndarray, int, float]:
    """Continuous-mode oracle point set: ``(points, side, covering radius)``; ``side = 0`` and radius NaN
    for the ``d >= 4`` Sobol set (no deterministic covering radius)."""
    if d in _DENSE_GRID_SIDE:
        m = _DENSE_GRID_SIDE[d]
        P = _grid(d, m)
        h = math.sqrt(d) / (2.0 * (m - 1))  # l2 distance from any x to its nearest grid point
    else:
        P, m, h = _sobol(d, 2**_DENSE_SOBOL_LOG2, _DENSE_SOBOL_SEED), 0, float("nan")
    P.flags.writeable = False
    return P, m, h


def _grid_local_maxima(v: np.ndarray, d: int, m: int) -> np.ndarray:
    """Indices of the grid points whose value is >= both axis neighbours along every axis."""
    V = v.reshape((m,) * d)
    mask = np.ones(V.shape, dtype=bool)
    for ax in range(d):
        dv = np.diff(V, axis=ax)
        up = [slice(None)] * d
        lo = [slice(None)] * d
        up[ax] = slice(1, None)
        lo[ax] = slice(None, -1)
        mask[tuple(up)] &= dv >= 0.0  # >= left neighbour
        mask[tuple(lo)] &= dv <= 0.0  # >= right neighbour
    return np.flatnonzero(mask.ravel())


# ----------------------------------------------------------------------------------- instances
@dataclass(frozen=True)
class _Instance:
    """One run's function ``f = sum_j a_j k(., z_j)`` and its precomputed oracle facts (read-only arrays)."""

    Z: np.ndarray  # (J, d) centres
    a: np.ndarray  # (J,) coefficients, sqrt(a^T K_ZZ a) = B
    f_candidates: np.ndarray  # (N,)
    f_star: float
    maximiser: np.ndarray  # (d,)
    best_index: int  # argmax over the candidates
    certificate: float  # upper bound on sup f - f_star (0 in discrete mode)


def _ro(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float64)
    x.flags.writeable = False
    return x


def _draw_function(cfg: _Config, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(Z, a)`` of run ``seed``, randomness only from ``run_seeds(seed).instance``."""
    rng = np.random.default_rng(run_seeds(seed).instance)
    if cfg.instance == "rkhs-sum":
        # z_j ~ U[0,1]^d (J x d draws), then a ~ N(0, I_J)
        Z = rng.random((cfg.n_centres, cfg.d))
        a = rng.standard_normal(cfg.n_centres)
    else:
        # y = L u ~ N(0, K_ZZ) (L L^T = K_ZZ + jitter I), a = (K_ZZ + jitter I)^{-1} y = L^{-T} u
        Z, L = _inducing_factor(cfg.kernel, cfg.lengthscale, cfg.d, cfg.n_inducing)
        u = rng.standard_normal(len(Z))
        a = solve_triangular(L, u, lower=True, trans="T", check_finite=False)
    K = kernel_matrix(cfg.kernel, Z, Z, cfg.lengthscale)
    q = float(a @ (K @ a))  # ||f||_k^2 = a^T K_ZZ a
    if not (math.isfinite(q) and q > 0.0):  # a ~ N(0, I) is a.s. not in the null space
        raise RuntimeError(f"{ENV_ID}: degenerate draw (a^T K a = {q!r}) for seed {seed}")
    a = a * (cfg.B / math.sqrt(q))  # ||f||_k = B
    return _ro(Z), _ro(a)


def _build_instance(cfg: _Config, seed: int) -> _Instance:
    Z, a = _draw_function(cfg, seed)
    C = cfg.candidates
    fc = _ro(_expansion(cfg.kernel, cfg.lengthscale, C, Z, a))
    best = int(np.argmax(fc))
    if cfg.discrete:  # f* = max over the candidates
        return _Instance(Z, a, fc, float(fc[best]), _ro(C[best]), best, 0.0)
    f_star, x_star, cert = _continuous_optimum(cfg, Z, a, C[best], float(fc[best]))
    return _Instance(Z, a, fc, f_star, _ro(x_star), best, cert)


def _continuous_optimum(cfg: _Config, Z: np.ndarray, a: np.ndarray, c_best: np.ndarray, f_cbest: float):
    """``(f*, x*, certificate)`` over ``[0, 1]^d``: dense set scan, L-BFGS-B polish (bounds
    ``[0, 1]^d``) from its 10 best local maxima, final values by :func:`_expansion`; see the module
    docstring for the certificate."""
    from scipy.optimize import minimize

    kernel, ell, d = cfg.kernel, cfg.lengthscale, cfg.d
    P, m, h = _dense_set(d)
    v = _expansion_fast(kernel, ell, P, Z, a)
    if m:
        idx = _grid_local_maxima(v, d, m)
        idx = idx[np.argsort(-v[idx], kind="stable")[:_N_POLISH]]
    else:
        idx = np.argsort(-v, kind="stable")[:_N_POLISH]
    fg = _value_and_grad(kernel, ell, Z, a)
    pts = [P[idx], Z]  # the starts themselves and the centres (Matern-0.5 peaks sit on centres)
    bounds = [(0.0, 1.0)] * d
    for x0 in P[idx]:
        if fg is None:
            res = minimize(lambda x: -float(_expansion_fast(kernel, ell, x[None, :], Z, a)[0]), x0,
                           method="L-BFGS-B", bounds=bounds, options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 500})
        else:
            res = minimize(fg, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                           options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 500})
        pts.append(np.clip(res.x, 0.0, 1.0)[None, :])
    X = np.concatenate(pts)
    fx = _expansion(kernel, ell, X, Z, a)
    j = int(np.argmax(fx))
    if fx[j] >= f_cbest:
        f_star, x_star = float(fx[j]), X[j].copy()
    else:
        f_star, x_star = f_cbest, c_best.copy()
    if m:
        cert = max(0.0, float(v.max()) + _grid_gap_bound(kernel, ell, cfg.B, h) - f_star)
    else:
        cert = float("nan")
    return f_star, x_star, cert


def _grid_gap_bound(kernel: str, ell: float, B: float, h: float) -> float:
    """Upper bound on ``sup f - max_grid f`` for ``||f||_k <= B`` and a grid (including the faces of the
    cube) of covering radius ``h``; see the module docstring (certificate)."""
    bound = B * kernel_lipschitz_profile(kernel, ell, h)  # first order, every kernel
    if kernel in _PHI4:  # C^4 profile: B sqrt(phi''''(0)) h^2 / 2
        bound = min(bound, 0.5 * B * math.sqrt(_PHI4[kernel]) * (h / ell) ** 2)
    elif kernel == "matern-1.5":  # C^2 profile: (2/3) B sqrt(12 sqrt3) (h / l)^{3/2}
        bound = min(bound, (2.0 / 3.0) * B * math.sqrt(12.0 * _SQRT3) * (h / ell) ** 1.5)
    return bound


_INSTANCE_CACHE_MAX_N = 65536  # instances with larger candidate sets are not cached


@lru_cache(maxsize=64)
def _instance_cached(cfg: _Config, seed: int) -> _Instance:
    return _build_instance(cfg, seed)


def _instance(cfg: _Config, seed: int) -> _Instance:
    """The instance of run ``seed`` (immutable; recent ones are cached, so the agents of one seed share
    the continuous-mode optimisation)."""
    if cfg.n_candidates <= _INSTANCE_CACHE_MAX_N:
        return _instance_cached(cfg, seed)
    return _build_instance(cfg, seed)


# ------------------------------------------------------------------------------------- actions
def _bad(rule: str, msg: str) -> InvalidActionError:
    return InvalidActionError(f"{ENV_ID}: rule '{rule}' broken: {msg}")


def _as_index(action: Any, N: int) -> int:
    """A candidate index in ``[0, N)`` from a Python int, a NumPy integer, or an integer array of shape
    ``()`` or ``(1,)``; anything else raises :class:`InvalidActionError` (rules dtype, finite, shape, range)."""
    if type(action) is int or isinstance(action, np.integer):
        i = int(action)
    else:
        if isinstance(action, (bool, np.bool_)):
            raise _bad("dtype", f"a candidate index must be an integer, not a bool; got {action!r}")
        try:
            arr = np.asarray(action)
        except (TypeError, ValueError) as e:
            raise _bad("shape", f"a candidate index must be an integer scalar; {e}") from None
        kind = arr.dtype.kind
        if kind == "b":
            raise _bad("dtype", f"a candidate index must be an integer, not a bool; got {action!r}")
        if kind == "f" and not np.all(np.isfinite(arr)):
            raise _bad("finite", f"a candidate index must be a finite integer; got {action!r}")
        if kind not in "iu":
            raise _bad("dtype", f"a candidate index must be an integer (int, NumPy integer, or an integer array of "
                                f"shape () or (1,)); got {type(action).__name__} {action!r} (dtype {arr.dtype})")
        if arr.shape not in ((), (1,)):
            raise _bad("shape", f"a candidate index must be a scalar (shape () or (1,)), got shape {arr.shape}")
        i = int(arr.reshape(-1)[0])
    if not 0 <= i < N:
        raise _bad("range", f"a candidate index must lie in [0, {N}), got {i}")
    return i


def _as_indices(actions: Any, shape: tuple[int, ...], N: int) -> np.ndarray:
    try:
        arr = np.asarray(actions)
    except (TypeError, ValueError) as e:
        raise _bad("shape", f"actions must be an integer array of shape {shape}; {e}") from None
    kind = arr.dtype.kind
    if kind == "f" and not np.all(np.isfinite(arr)):
        raise _bad("finite", "candidate indices must be finite integers (no NaN or inf)")
    if kind not in "iu":
        raise _bad("dtype", f"candidate indices must have an integer dtype (not bool or float), got dtype {arr.dtype}")
    if arr.shape != shape:
        raise _bad("shape", f"actions must have shape {shape}, got {arr.shape}")
    if arr.size and not (arr.min() >= 0 and arr.max() < N):
        bad = arr[(arr < 0) | (arr >= N)].ravel()[0]
        raise _bad("range", f"candidate indices must lie in [0, {N}), got {int(bad)}")
    return arr.astype(np.intp, copy=False)


def _as_points(action: Any, shape: tuple[int, ...], what: str = "action") -> np.ndarray:
    """Float64 C-contiguous array of ``shape`` with every coordinate in ``[0, 1]``, or
    :class:`InvalidActionError` (rules dtype, shape, finite, bounds)."""
    if type(action) is np.ndarray:
        a = action
    else:
        try:
            a = np.asarray(action)
        except (TypeError, ValueError) as e:
            raise _bad("shape", f"{what} must be an array of shape {shape}; {e}") from None
    if a.dtype.kind not in "fiu":
        raise _bad("dtype", f"{what} must hold real numbers (float or integer dtype), got dtype {a.dtype}")
    if a.shape != shape:
        raise _bad("shape", f"{what} must have shape {shape}, got {a.shape}")
    if a.dtype != np.float64 or not a.flags.c_contiguous:
        a = np.ascontiguousarray(a, dtype=np.float64)
    if not (np.all(a >= 0.0) and np.all(a <= 1.0)):
        if not np.all(np.isfinite(a)):
            bad = np.argwhere(~np.isfinite(a))[0]
            raise _bad("finite", f"every coordinate must be finite (no NaN or inf); got {a[tuple(bad)]!r} "
                                 f"at index {tuple(int(i) for i in bad)}")
        bad = np.argwhere((a < 0.0) | (a > 1.0))[0]
        raise _bad("bounds", f"every coordinate must lie in [0, 1]; got {a[tuple(bad)]!r} at index "
                             f"{tuple(int(i) for i in bad)}")
    return a


def _check_round(t: Any, T: int) -> int:
    if type(t) is int and 1 <= t <= T:
        return t
    if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, np.integer)) or not 1 <= t <= T:
        raise ValueError(f"t must be an integer round in 1..{T}, got {t!r}")
    return int(t)


# ---------------------------------------------------------------------------------------- oracle
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

    def __init__(self, cfg: _Config, inst: _Instance, seed: int):
        self._cfg = cfg
        self._inst = inst
        self.seed = seed
        self.d = cfg.d
        self.horizon = cfg.horizon
        self.action_mode = cfg.action_mode
        self.N = cfg.n_candidates
        self._discrete = cfg.discrete

    def __repr__(self) -> str:
        return (f"NoiseFreeGPOracle(seed={self.seed}, instance={self._cfg.instance!r}, kernel={self._cfg.kernel!r}, "
                f"f*={self._inst.f_star:.6g})")

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
        """Upper bound on ``sup_{[0,1]^d} f - f*`` in continuous mode (NaN for ``d >= 4``, see the module
        docstring); 0 in discrete mode (``f*`` is then exact over the action set)."""
        return self._inst.certificate

    def values(self, X: Any) -> np.ndarray:
        """``f`` at the rows of ``X`` (``(m, d)``, any finite points) -> ``(m,)``."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.d:
            raise ValueError(f"X must have shape (m, {self.d}), got {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X must be finite")
        return _expansion(self._cfg.kernel, self._cfg.lengthscale, X, self._inst.Z, self._inst.a)

    def rkhs_norm(self) -> float:
        """``||f||_k = sqrt(a^T K_ZZ a)``, recomputed from ``(Z, a)`` (``= B`` up to round-off)."""
        Z, a = self._inst.Z, self._inst.a
        return math.sqrt(float(a @ (kernel_matrix(self._cfg.kernel, Z, Z, self._cfg.lengthscale) @ a)))

    def _f(self, action: Any) -> float:
        if self._discrete:
            return float(self._inst.f_candidates[_as_index(action, self.N)])
        x = _as_points(action, (self.d,))
        return float(_expansion(self._cfg.kernel, self._cfg.lengthscale, x[None, :], self._inst.Z, self._inst.a)[0])

    # ------------------------------------------------------------------------ oracle protocol
    def mean_reward(self, action: Any, t: int) -> float:
        """``f(x_action)`` (the reward is exact)."""
        _check_round(t, self.horizon)
        return self._f(action)

    def optimal_value(self, t: int) -> float:
        """``f*``: the maximum over the candidates (discrete) or over ``[0, 1]^d`` (continuous, certified
        to within :attr:`certificate`)."""
        _check_round(t, self.horizon)
        return self._inst.f_star

    def regret(self, action: Any, t: int) -> float:
        """``f* - f(x_action) >= 0`` (continuous mode: ``max(f* - f(x), 0)``; the clip can only act on
        points better than ``f*``, i.e. by at most :attr:`certificate`)."""
        _check_round(t, self.horizon)
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
                idx = _as_indices(actions, actions.shape, self.N)
            else:
                idx = np.array([_as_index(a, self.N) for a in actions], dtype=np.intp)
            if idx.size == 0:
                raise ValueError("simple_regret needs at least one action")
            best = float(self._inst.f_candidates[idx].max())
        else:
            X = np.asarray(actions)
            if X.ndim != 2 or X.shape[0] == 0:
                raise ValueError(f"simple_regret needs a (k, {self.d}) array of points with k >= 1, got shape {X.shape}")
            X = _as_points(X, (X.shape[0], self.d), "actions")
            best = float(_expansion(self._cfg.kernel, self._cfg.lengthscale, X, self._inst.Z, self._inst.a).max())
        g = self._inst.f_star - best
        return g if g > 0.0 else 0.0


class BatchedNoiseFreeGPOracle:
    """Oracle of :class:`NoiseFreeGPBanditVectorEnv`: one function per row, vectorised over rows.

    ``mean_reward(actions, t)``, ``optimal_value(t)``, ``regret(actions, t)`` return ``(n,)`` (actions:
    ``(n,)`` indices or ``(n, d)`` points); ``simple_regret(history)`` takes the actions played so far
    stacked over time (``(k, n)`` or ``(k, n, d)``); row ``i`` equals ``oracles[i]`` bit for bit.
    """

    TRACK_SIMPLE_REGRET = True

    def __init__(self, cfg: _Config, oracles: list[NoiseFreeGPOracle]):
        self._cfg = cfg
        self.oracles = oracles
        self.n = len(oracles)
        self.d = cfg.d
        self.horizon = cfg.horizon
        self.N = cfg.n_candidates
        self._discrete = cfg.discrete
        insts = [o._inst for o in oracles]
        self.f_star = _ro(np.array([i.f_star for i in insts]))
        self._rows = np.arange(self.n)
        if self._discrete:
            self._F = np.stack([i.f_candidates for i in insts])  # (n, N): a step is a lookup
        else:
            self._Zs = np.stack([i.Z for i in insts])  # (n, J, d)
            self._A = np.stack([i.a for i in insts])  # (n, J)

    def _f(self, actions: Any) -> np.ndarray:
        if self._discrete:
            return self._F[self._rows, _as_indices(actions, (self.n,), self.N)]
        X = _as_points(actions, (self.n, self.d), "actions")
        return _expansion(self._cfg.kernel, self._cfg.lengthscale, X, self._Zs, self._A)

    @property
    def maximiser(self) -> np.ndarray:
        return np.stack([o.maximiser for o in self.oracles])

    @property
    def certificate(self) -> np.ndarray:
        return np.array([o.certificate for o in self.oracles])

    def mean_reward(self, actions: Any, t: int) -> np.ndarray:
        _check_round(t, self.horizon)
        return self._f(actions)

    def optimal_value(self, t: int) -> np.ndarray:
        _check_round(t, self.horizon)
        return self.f_star.copy()

    def regret(self, actions: Any, t: int) -> np.ndarray:
        _check_round(t, self.horizon)
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
            idx = _as_indices(H, (H.shape[0], self.n), self.N)
            best = self._F[self._rows[None, :], idx].max(axis=0)
        else:
            k = H.shape[0]
            X = _as_points(H, (k, self.n, self.d), "actions")
            best = np.max([_expansion(self._cfg.kernel, self._cfg.lengthscale, X[s], self._Zs, self._A)
                           for s in range(k)], axis=0)
        return np.maximum(self.f_star - best, 0.0)


# -------------------------------------------------------------------------------------- envs


class NoiseFreeGPBanditEnv(gym.Env):
    """Noise-free Gaussian-process bandit on ``[0, 1]^d`` (``NoiseFreeGPBandit-v0``).

    ## Description

    An unknown function ``f : [0, 1]^d -> R`` lies in the RKHS of a known stationary kernel ``k``
    (``k(x, x) = 1``) with known norm bound ``||f||_k <= B``. At round ``t`` the agent queries ``x_t`` and
    observes ``f(x_t)`` exactly (no noise). Every instance is a kernel expansion
    ``f = sum_j a_j k(., z_j)`` whose RKHS norm ``sqrt(a^T K_ZZ a)`` is exactly ``B`` ([design]):

    * ``rkhs-sum`` (default): ``J = n_centres`` centres ``z_j ~ U[0, 1]^d``, ``a ~ N(0, I_J)``, rescaled
      ``a <- a B / sqrt(a^T K_zz a)``.
    * ``gp-interpolant`` (GP sample path): ``y ~ N(0, K_ZZ)`` on the coarse grid ``Z`` with ``n_inducing``
      points per axis, ``f = k_Z(.)^T K_ZZ^{-1} y`` (the interpolant of the sample), rescaled to norm ``B``.

    ## Action Space

    ``action_mode="discrete"`` (default): ``Discrete(N)``, an index into the public candidate set
    ``problem.candidates`` (``N x d``). A Python int, a NumPy integer, or an integer array of shape ``()``
    or ``(1,)`` is accepted; a bool, a float (even integral, or NaN), another shape or an index outside
    ``[0, N)`` raises :class:`~papergym.envs.InvalidActionError` (rules ``dtype``, ``finite``, ``shape``,
    ``range``). ``action_mode="continuous"``: ``Box(0, 1, (d,), float64)``, any point (float or integer
    array of shape ``(d,)``, float32 included; rules ``dtype``, ``shape``, ``finite``, ``bounds``); float64
    because noise-free regrets reach ``1e-10``, far below float32's resolution. An invalid action leaves
    the env unchanged (:meth:`validate_action`).

    ## Observation Space

    ``Box(-B, B, (1,), float64)`` (widened by ``1e-9`` relative for round-off): ``f(x_t)`` (``0`` after
    ``reset``); ``|f(x)| <= ||f||_k sqrt(k(x, x)) = B``.

    ## Rewards

    ``f(x_t)`` exactly [paper]. In discrete mode ``f`` is precomputed on the candidates at ``reset`` and a
    step is a lookup.

    ## Starting State

    ``reset(seed=s)`` draws the function from ``run_seeds(s).instance`` only (same seed, same function, bit
    for bit); the candidate set and the ``ProblemSpec`` do not depend on the seed. ``reset()`` without a
    seed draws the run seed from ``self.np_random`` (fresh entropy if the env was never seeded).

    ## Episode End

    Never terminated; truncated at ``t = T`` (``horizon``). Stepping after that (or before ``reset``) raises
    :class:`gymnasium.error.ResetNeeded`. ``info = {"t": t}`` (rounds played); nothing privileged.

    ## Arguments

    * ``instance`` (``"rkhs-sum"`` | ``"gp-interpolant"``, default ``"rkhs-sum"``).
    * ``horizon`` (int or None): ``T``; None -> 60 (``d = 1``), 150 (``d = 2``), 200 (``d >= 3``) [design].
    * ``d`` (int, default 1): dimension of the domain ``[0, 1]^d``.
    * ``kernel`` (default ``"se"``): one of :data:`KERNELS` (``se``, ``matern-0.5``, ``matern-1.5``,
      ``matern-2.5``).
    * ``lengthscale`` (float or None): ``l``; None -> 0.1 (``d = 1``), 0.2 (``d >= 2``) [design].
    * ``B`` (float, default 1.0): the RKHS norm of ``f`` (exact) and the bound published to agents.
    * ``action_mode`` (``"discrete"`` | ``"continuous"``, default ``"discrete"``).
    * ``candidate_set`` (``"auto"`` | ``"grid"`` | ``"sobol"`` | ``"uniform"``), ``n_candidates`` (int or
      None), ``candidate_seed`` (int, default 0): see :func:`make_candidates`. Defaults: 1000 equispaced
      points (``d = 1``), a 50 x 50 grid (``d = 2``), 2048 scrambled Sobol points (``d >= 3``) [design].
    * ``n_centres`` (int, default 20): ``J`` of ``rkhs-sum`` [design]; ignored by ``gp-interpolant``.
    * ``n_inducing`` (int or None): points per axis of the ``gp-interpolant`` grid; None -> 15 / 7 / 5 for
      ``d = 1 / 2 / >= 3`` [design], lowered until ``K_ZZ`` is well conditioned (module docstring);
      ignored by ``rkhs-sum``.

    ``resolved_kwargs`` gives the values used for the None defaults (``horizon``, ``lengthscale``,
    ``n_candidates``, ``n_inducing``; the latter None for ``rkhs-sum``).

    ## Oracle and regret

    ``env.unwrapped.oracle`` (:class:`NoiseFreeGPOracle`, valid after ``reset``): ``mean_reward(a, t) =
    f(x_a)``, ``optimal_value(t) = f*``, ``regret(a, t) = f* - f(x_a) >= 0``, ``simple_regret(actions)``
    (best observed point), ``values(X)``, ``f_candidates``, ``best_action()``, ``maximiser``,
    ``rkhs_norm()`` (``= B``), ``certificate``. Discrete mode: ``f*`` is the maximum over the candidates
    (exact). Continuous mode: ``f*`` from a dense grid and an L-BFGS-B polish, with a certified bound
    ``certificate >= sup f - f*`` (module docstring). Cumulative regret ``R_T = sum_t f* - f(x_t)`` is
    computed from ``f``, never from observations (:class:`~papergym.envs.wrappers.RegretRecorder`).
    ``env.unwrapped.problem`` is the public :class:`~papergym.envs.spec.ProblemSpec`: ``d``, ``kernel``,
    ``lengthscale``, ``B``, ``candidates``, ``action_mode`` and the horizon -- never the family.

    ## Paper

    S. Iwazaki, *Gaussian Process Upper Confidence Bound Achieves Nearly-Optimal Regret in Noise-Free
    Gaussian Process Bandits*, arXiv 2502.19006, NeurIPS 2025 (no code released). GP-UCB with the constant
    width ``beta^{1/2} = B`` has ``R_T = O(1)`` for SE and Matern ``d < nu``, ``O(ln^2 T)`` for ``d = nu``,
    ``O~(T^{(d - nu)/d})`` for ``d > nu``.

    ## Version History

    * v0: initial version.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}

    def __init__(
        self,
        instance: str = "rkhs-sum",
        horizon: int | None = None,
        d: int = 1,
        kernel: str = "se",
        lengthscale: float | None = None,
        B: float = 1.0,
        action_mode: str = "discrete",
        candidate_set: str = "auto",
        n_candidates: int | None = None,
        candidate_seed: int = 0,
        n_centres: int = 20,
        n_inducing: int | None = None,
        render_mode: str | None = None,
    ):
        if render_mode is not None:
            raise ValueError(f"render_mode must be None ({ENV_ID} has no render modes), got {render_mode!r}")
        self.cfg = _make_config(instance, horizon, d, kernel, lengthscale, B, action_mode, candidate_set,
                                n_candidates, candidate_seed, n_centres, n_inducing)
        self.problem = _problem(self.cfg)
        self.action_space = self.problem.action_space
        self.observation_space = self.problem.observation_space
        self.horizon = self.cfg.horizon
        self.d = self.cfg.d
        self.candidates = self.cfg.candidates
        self._discrete = self.cfg.discrete
        self._N = self.cfg.n_candidates
        self._inst: _Instance | None = None
        self._oracle: NoiseFreeGPOracle | None = None
        self._t = 0
        self.run_seed: int | None = None

    @property
    def resolved_kwargs(self) -> dict[str, Any]:
        """Values used for the None defaults: ``horizon``, ``lengthscale``, ``n_candidates``,
        ``n_inducing`` (None for ``rkhs-sum``, which does not use it)."""
        return self.cfg.resolved_kwargs

    @property
    def t(self) -> int:
        """Rounds played since the last ``reset`` (0 before round 1)."""
        return self._t

    @property
    def oracle(self) -> NoiseFreeGPOracle:
        if self._oracle is None:
            raise ResetNeeded(f"{ENV_ID}: the oracle is built by reset(); call env.reset() first")
        return self._oracle

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if options:
            raise ValueError(f"{ENV_ID}: reset takes no options, got {sorted(options)}")
        if seed is not None:
            seed = _check_seed(seed)
        super().reset(seed=seed)
        run_seed = seed if seed is not None else _draw_run_seeds(self.np_random, 1)[0]
        self._inst = _instance(self.cfg, run_seed)
        self._oracle = NoiseFreeGPOracle(self.cfg, self._inst, run_seed)
        self._t = 0
        self.run_seed = run_seed
        return np.zeros(1), {"t": 0}

    def validate_action(self, action: Any) -> int | np.ndarray:
        """The action as a candidate index (discrete) or a float64 ``(d,)`` point (continuous), or raise
        :class:`InvalidActionError` naming the rule broken. Does not change the env."""
        if self._discrete:
            return _as_index(action, self._N)
        return _as_points(action, (self.d,))

    def step(self, action: Any):
        inst = self._inst
        if inst is None:
            raise ResetNeeded(f"{ENV_ID}: call reset() before step()")
        if self._t >= self.horizon:
            raise ResetNeeded(f"{ENV_ID}: the episode is over (t = T = {self.horizon}); call reset()")
        if self._discrete:
            f = float(inst.f_candidates[_as_index(action, self._N)])
        else:
            x = _as_points(action, (self.d,))
            f = float(_expansion(self.cfg.kernel, self.cfg.lengthscale, x[None, :], inst.Z, inst.a)[0])
        self._t += 1
        t = self._t
        return np.array([f]), f, False, t >= self.horizon, {"t": t}

    def render(self) -> None:
        return None


class NoiseFreeGPBanditVectorEnv(VectorEnv):
    """``num_envs`` independent runs of :class:`NoiseFreeGPBanditEnv` stepped together in numpy.

    ``reset(seed=[s_0, .., s_{n-1}])`` (or an int ``s`` -> ``s, s+1, ..``; ``None`` -> seeds drawn from
    ``self.np_random``); ``step(actions)`` with ``(n,)`` candidate indices (discrete) or ``(n, d)`` points
    (continuous) -> observations ``(n, 1)``, rewards ``(n,)``, terminations ``(n,)`` (always False),
    truncations ``(n,)`` (True at ``t = T``), ``info = {"t": (n,) ints, "_t": mask}``. Row ``i`` is
    bit-identical to the single env reset with seed ``s_i``. ``.oracle`` is a
    :class:`BatchedNoiseFreeGPOracle`, ``.oracles`` the per-run oracles, ``.problem`` the ``ProblemSpec``
    of one run, ``.t`` the rounds played. No autoreset (``AutoresetMode.DISABLED``). Kwargs as
    :class:`NoiseFreeGPBanditEnv`.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}

    def __init__(
        self,
        num_envs: int = 1,
        instance: str = "rkhs-sum",
        horizon: int | None = None,
        d: int = 1,
        kernel: str = "se",
        lengthscale: float | None = None,
        B: float = 1.0,
        action_mode: str = "discrete",
        candidate_set: str = "auto",
        n_candidates: int | None = None,
        candidate_seed: int = 0,
        n_centres: int = 20,
        n_inducing: int | None = None,
        render_mode: str | None = None,
    ):
        if render_mode is not None:
            raise ValueError(f"render_mode must be None ({ENV_ID} has no render modes), got {render_mode!r}")
        self.num_envs = _as_int("num_envs", num_envs, 1)
        self.cfg = _make_config(instance, horizon, d, kernel, lengthscale, B, action_mode, candidate_set,
                                n_candidates, candidate_seed, n_centres, n_inducing)
        self.problem = _problem(self.cfg)
        self.horizon = self.cfg.horizon
        self.d = self.cfg.d
        self.candidates = self.cfg.candidates
        self._discrete = self.cfg.discrete
        self.single_action_space = self.problem.action_space
        self.single_observation_space = self.problem.observation_space
        n = self.num_envs
        N = self.cfg.n_candidates
        if self._discrete:
            self.action_space = spaces.MultiDiscrete(np.full(n, N, dtype=np.int64))
        else:
            self.action_space = spaces.Box(0.0, 1.0, (n, self.d), np.float64)
        self.observation_space = _obs_space(self.cfg.B, (n, 1))
        self._oracle: BatchedNoiseFreeGPOracle | None = None
        self._t = 0
        self.seeds: list[int] | None = None
        self._mask = np.ones(n, dtype=bool)

    @property
    def resolved_kwargs(self) -> dict[str, Any]:
        return self.cfg.resolved_kwargs

    @property
    def t(self) -> int:
        return self._t

    @property
    def oracle(self) -> BatchedNoiseFreeGPOracle:
        if self._oracle is None:
            raise ResetNeeded(f"{ENV_ID}: the oracle is built by reset(); call reset() first")
        return self._oracle

    @property
    def oracles(self) -> list[NoiseFreeGPOracle]:
        return self.oracle.oracles

    def _seed_list(self, seed: Any) -> list[int]:
        return vector_run_seeds(self, seed)

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        if options:
            raise ValueError(f"{ENV_ID}: reset takes no options, got {sorted(options)}")
        seeds = self._seed_list(seed)
        oracles = [NoiseFreeGPOracle(self.cfg, _instance(self.cfg, s), s) for s in seeds]
        self._oracle = BatchedNoiseFreeGPOracle(self.cfg, oracles)
        self.seeds = seeds
        self._t = 0
        n = self.num_envs
        return np.zeros((n, 1)), {"t": np.zeros(n, np.int64), "_t": self._mask.copy()}

    def validate_action(self, actions: Any) -> np.ndarray:
        """``(n,)`` indices or float64 ``(n, d)`` points, or :class:`InvalidActionError` (state unchanged)."""
        if self._discrete:
            return _as_indices(actions, (self.num_envs,), self.cfg.n_candidates)
        return _as_points(actions, (self.num_envs, self.d), "actions")

    def step(self, actions: Any):
        orc = self._oracle
        if orc is None:
            raise ResetNeeded(f"{ENV_ID}: call reset() before step()")
        if self._t >= self.horizon:
            raise ResetNeeded(f"{ENV_ID}: the episode is over (t = T = {self.horizon}); call reset()")
        r = orc._f(actions)
        self._t += 1
        t = self._t
        n = self.num_envs
        return (
            r.reshape(n, 1).copy(),
            r,
            np.zeros(n, dtype=bool),
            np.full(n, t >= self.horizon),
            {"t": np.full(n, t, np.int64), "_t": self._mask.copy()},
        )

    def render(self) -> None:
        return None
