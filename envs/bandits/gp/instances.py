"""Instances of ``NoiseFreeGPBandit-v0``: each run's hidden function and its optimum (what the oracle knows).

Environment of S. Iwazaki, *Gaussian Process Upper Confidence Bound Achieves Nearly-Optimal Regret in
Noise-Free Gaussian Process Bandits* (arXiv 2502.19006, NeurIPS 2025); see docs/papers/noise-free-gp.md.
Everything here is [design] (tags: see docs/conventions.md).

* Functions: ``f = sum_j a_j k(., z_j)`` with ``||f||_k = sqrt(a^T K_ZZ a) = B`` exactly (rescaled after the
  draw; the oracle keeps ``(Z, a)``). Randomness only from ``run_seeds(seed).instance``: ``rkhs-sum`` draws
  ``Z`` (``J x d`` uniforms) then ``a ~ N(0, I_J)``; ``gp-interpolant`` draws ``u ~ N(0, I)`` on the fixed
  coarse grid ``Z`` and sets ``y = L u ~ N(0, K_ZZ)``, ``a = (K_ZZ + eps I)^{-1} y = L^{-T} u`` with ``L L^T =
  K_ZZ + eps I``, ``eps = 1e-10`` (:data:`~papergym.envs.bandits.gp.config.GP_INTERPOLANT_JITTER`). So ``f``
  interpolates the GP sample ``y`` up to ``eps |a|``; its norm is recomputed from ``(Z, a)`` with the
  unjittered ``K_ZZ`` before rescaling.
* Discrete mode (default): ``f`` is evaluated on the candidates at ``reset``; ``f* = max`` over them (exact
  over the action set), ``certificate = 0``.
* Continuous mode: ``f*`` = the best value among (a) the candidates, (b) a dense oracle set -- a grid with
  10001 (``d = 1``), 301^2 (``d = 2``), 61^3 (``d = 3``) points, or 2^17 scrambled Sobol points with fixed
  seed 0 for ``d >= 4`` -- (c) L-BFGS-B (bounds ``[0, 1]^d``, ``ftol = 1e-15``) polished from the 10 best
  *local maxima* of the grid (the 10 best points of the Sobol set), and (d) the centres ``z_j`` (Matern-0.5
  peaks sit on them). Local maxima rather than the 10 best points avoid ten starts on one peak. Gradients
  are analytic for SE and Matern-1.5/2.5 and finite differences for Matern-0.5.
* ``certificate`` (continuous mode) ``= max(0, max_grid f + G(h) - f*) >= sup f - f*`` with ``h = sqrt(d) /
  (2 (side - 1))`` the grid's covering radius (the grid includes every face of the cube;
  :func:`~papergym.envs.bandits.gp.kernels.kernel_grid_gap_bound`):

  - every kernel: ``G(h) = B sqrt(2 (1 - k(h)))`` (``|f(x) - f(x')| <= B ||k(x, .) - k(x', .)||_k``);
  - a maximiser ``x*`` lies in the relative interior of some face ``F`` where the gradient of ``f|_F``
    vanishes, and the grid restricted to ``F`` covers it within ``h``; with ``phi(s) = k(s u)``:
    ``f(x*) - f(g) <= B |g - x*| int_0^1 sqrt(2 (phi''(tau |g - x*|) - phi''(0))) dtau``, which gives
    ``G(h) = B sqrt(phi''''(0)) h^2 / 2`` for SE (``phi''''(0) = 3 / l^4``) and Matern-2.5 (``25 / l^4``),
    and ``G(h) = (2/3) B sqrt(12 sqrt3) (h / l)^{3/2}`` for Matern-1.5 (``phi''(s) - phi''(0) <= (3 / l^2)
    2 sqrt3 s / l``); the smaller bound is used.

  For the ``d >= 4`` Sobol set no deterministic covering radius is available: ``certificate = NaN``.
  Matern-0.5 certificates are loose (``O(sqrt(h))``) even where ``f*`` itself is accurate. Continuous
  regret is ``max(f* - f(x), 0)``: the clip can only act on points better than ``f*``, i.e. by at most
  ``certificate``. Rounding errors (~1e-15) are ignored.
* Instances are cached per ``(configuration, seed)`` (64 most recent, candidate sets up to 65536 points;
  :func:`cached_instance`), so the agents of one seed share the continuous-mode optimisation within a
  process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.linalg import cholesky, solve_triangular

from papergym.envs.bandits.gp.config import ENV_ID, GP_INTERPOLANT_JITTER, Config, sobol_points, unit_grid
from papergym.envs.bandits.gp.kernels import (
    kernel_expansion,
    kernel_expansion_fast,
    kernel_expansion_value_and_grad,
    kernel_grid_gap_bound,
    kernel_matrix,
)
from papergym.envs.spec import run_seeds

_DENSE_GRID_SIDE = {1: 10001, 2: 301, 3: 61}  # continuous-mode oracle grid; d >= 4: 2^17 Sobol points
_DENSE_SOBOL_LOG2 = 17
_DENSE_SOBOL_SEED = 0  # fixed (public) seed of the d >= 4 oracle point set [design]
_N_POLISH = 10  # L-BFGS-B starts


@dataclass(frozen=True)
class Instance:
    """One run's function ``f = sum_j a_j k(., z_j)`` and its precomputed oracle facts (read-only arrays)."""

    Z: np.ndarray  # (J, d) centres
    a: np.ndarray  # (J,) coefficients, sqrt(a^T K_ZZ a) = B
    f_candidates: np.ndarray  # (N,)
    f_star: float
    maximiser: np.ndarray  # (d,)
    best_index: int  # argmax over the candidates
    certificate: float  # upper bound on sup f - f_star (0 in discrete mode)


def read_only(x: np.ndarray) -> np.ndarray:
    """A read-only C-contiguous float64 copy (or view) of ``x``."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    x.flags.writeable = False
    return x


@lru_cache(maxsize=64)
def _inducing_factor(kernel: str, ell: float, d: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Coarse grid ``Z`` (``p^d`` points) and the lower Cholesky factor of ``K_ZZ + jitter I`` (read-only)."""
    Z = unit_grid(d, p)
    K = kernel_matrix(kernel, Z, Z, ell)
    K[np.diag_indices(len(Z))] += GP_INTERPOLANT_JITTER
    L = cholesky(K, lower=True, check_finite=False)
    Z.flags.writeable = False
    L.flags.writeable = False
    return Z, L


def _draw_function(cfg: Config, seed: int) -> tuple[np.ndarray, np.ndarray]:
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
    return read_only(Z), read_only(a)


def _build_instance(cfg: Config, seed: int) -> Instance:
    Z, a = _draw_function(cfg, seed)
    C = cfg.candidates
    fc = read_only(kernel_expansion(cfg.kernel, cfg.lengthscale, C, Z, a))
    best = int(np.argmax(fc))
    if cfg.discrete:  # f* = max over the candidates
        return Instance(Z, a, fc, float(fc[best]), read_only(C[best]), best, 0.0)
    f_star, x_star, cert = _continuous_optimum(cfg, Z, a, C[best], float(fc[best]))
    return Instance(Z, a, fc, f_star, read_only(x_star), best, cert)


def _continuous_optimum(cfg: Config, Z: np.ndarray, a: np.ndarray, c_best: np.ndarray, f_cbest: float):
    """``(f*, x*, certificate)`` over ``[0, 1]^d``: dense set scan, L-BFGS-B polish (bounds
    ``[0, 1]^d``) from its 10 best local maxima, final values by :func:`kernel_expansion`; see the module
    docstring for the certificate."""
    from scipy.optimize import minimize

    kernel, ell, d = cfg.kernel, cfg.lengthscale, cfg.d
    P, m, h = _dense_set(d)
    v = kernel_expansion_fast(kernel, ell, P, Z, a)
    if m:
        idx = _grid_local_maxima(v, d, m)
        idx = idx[np.argsort(-v[idx], kind="stable")[:_N_POLISH]]
    else:
        idx = np.argsort(-v, kind="stable")[:_N_POLISH]
    fg = kernel_expansion_value_and_grad(kernel, ell, Z, a)
    pts = [P[idx], Z]  # the starts themselves and the centres (Matern-0.5 peaks sit on centres)
    bounds = [(0.0, 1.0)] * d
    for x0 in P[idx]:
        if fg is None:
            res = minimize(
                lambda x: -float(kernel_expansion_fast(kernel, ell, x[None, :], Z, a)[0]),
                x0,
                method="L-BFGS-B",
                bounds=bounds,
                options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 500},
            )
        else:
            res = minimize(
                fg,
                x0,
                jac=True,
                method="L-BFGS-B",
                bounds=bounds,
                options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 500},
            )
        pts.append(np.clip(res.x, 0.0, 1.0)[None, :])
    X = np.concatenate(pts)
    fx = kernel_expansion(kernel, ell, X, Z, a)
    j = int(np.argmax(fx))
    if fx[j] >= f_cbest:
        f_star, x_star = float(fx[j]), X[j].copy()
    else:
        f_star, x_star = f_cbest, c_best.copy()
    if m:
        cert = max(0.0, float(v.max()) + kernel_grid_gap_bound(kernel, ell, cfg.B, h) - f_star)
    else:
        cert = float("nan")
    return f_star, x_star, cert


@lru_cache(maxsize=8)
def _dense_set(d: int) -> tuple[np.ndarray, int, float]:
    """Continuous-mode oracle point set: ``(points, side, covering radius)``; ``side = 0`` and radius NaN
    for the ``d >= 4`` Sobol set (no deterministic covering radius)."""
    if d in _DENSE_GRID_SIDE:
        m = _DENSE_GRID_SIDE[d]
        P = unit_grid(d, m)
        h = math.sqrt(d) / (2.0 * (m - 1))  # l2 distance from any x to its nearest grid point
    else:
        P, m, h = sobol_points(d, 2**_DENSE_SOBOL_LOG2, _DENSE_SOBOL_SEED), 0, float("nan")
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


_INSTANCE_CACHE_MAX_N = 65536  # instances with larger candidate sets are not cached


@lru_cache(maxsize=64)
def cached_instance(cfg: Config, seed: int) -> Instance:
    """The instance of run ``seed`` under ``cfg`` (memoised; ``cached_instance.cache_clear()``
    empties the cache)."""
    return _build_instance(cfg, seed)


def get_instance(cfg: Config, seed: int) -> Instance:
    """The instance of run ``seed`` (immutable; recent ones are cached, so the agents of one seed share
    the continuous-mode optimisation)."""
    if cfg.n_candidates <= _INSTANCE_CACHE_MAX_N:
        return cached_instance(cfg, seed)
    return _build_instance(cfg, seed)
