"""Kernels of ``NoiseFreeGPBandit-v0`` and the one evaluator of kernel expansions.

Shared numerics, imported by the env and by every GP agent (one implementation):

* :data:`KERNELS`, :func:`kernel_from_distance`, :func:`kernel_matrix`: the stationary kernels of the setting
  of S. Iwazaki, *Gaussian Process Upper Confidence Bound Achieves Nearly-Optimal Regret in Noise-Free
  Gaussian Process Bandits* (arXiv 2502.19006, NeurIPS 2025), normalised to ``k(x, x) = 1``
  (``r = ||x - x'||_2``, lengthscale ``l``; [paper], tags: see docs/conventions.md):

  - ``se``:          ``exp(-r^2 / (2 l^2))``
  - ``matern-0.5``:  ``exp(-r / l)``
  - ``matern-1.5``:  ``(1 + sqrt(3) r / l) exp(-sqrt(3) r / l)``
  - ``matern-2.5``:  ``(1 + sqrt(5) r / l + 5 r^2 / (3 l^2)) exp(-sqrt(5) r / l)``

* :func:`kernel_lipschitz_profile` and :func:`kernel_grid_gap_bound`: how much an RKHS function of norm
  ``<= B`` can exceed its maximum over a grid (the continuous-mode certificate, derived in
  :mod:`papergym.envs.bandits.gp.instances`).
* :func:`kernel_expansion`: ``f(x) = sum_j a_j k(x, z_j)``, the one evaluator of every reward, mean and
  regret of the env: elementwise numpy and reductions over the last axis only, so rows of the vector env
  are bit-identical to single envs and ``f`` at a candidate's coordinates equals ``f_candidates`` exactly.
  :func:`kernel_expansion_fast` (``cdist`` + BLAS, equal up to round-off) only scans the continuous-mode
  oracle grid; :func:`kernel_expansion_value_and_grad` feeds its L-BFGS-B polish.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.spatial.distance import cdist

from papergym.validate import one_of

KERNELS: tuple[str, ...] = ("se", "matern-0.5", "matern-1.5", "matern-2.5")

_SQRT3 = math.sqrt(3.0)
_SQRT5 = math.sqrt(5.0)
_CHUNK = 1 << 20  # elements of the (m, J, d) temporaries of the evaluator
# fourth derivative at 0 of t -> k(t u) (|u| = 1), times l^4: curvature bound of the certificate
_PHI4 = {"se": 3.0, "matern-2.5": 25.0}


def check_lengthscale(lengthscale: Any) -> float:
    """``lengthscale`` as a positive finite float, else ``ValueError``."""
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
    kernel = one_of(kernel, "kernel", KERNELS)
    ell = check_lengthscale(lengthscale)
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


# ---------------------------------------------------------------------------- kernel expansions
def kernel_expansion(kernel: str, ell: float, X: np.ndarray, Z: np.ndarray, a: np.ndarray) -> np.ndarray:
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


def kernel_expansion_fast(kernel: str, ell: float, X: np.ndarray, Z: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Same values as :func:`kernel_expansion` up to round-off, faster on large ``X`` (``cdist`` + BLAS);
    used only to scan the continuous-mode oracle grid."""
    out = np.empty(len(X))
    step = max(1, _CHUNK // len(Z))
    for s in range(0, len(X), step):
        out[s : s + step] = kernel_matrix(kernel, X[s : s + step], Z, ell) @ a
    return out


def kernel_expansion_value_and_grad(kernel: str, ell: float, Z: np.ndarray, a: np.ndarray):
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


def kernel_grid_gap_bound(kernel: str, ell: float, B: float, h: float) -> float:
    """Upper bound on ``sup f - max_grid f`` for ``||f||_k <= B`` and a grid (including the faces of the
    cube) of covering radius ``h``; derived in :mod:`papergym.envs.bandits.gp.instances` (certificate)."""
    bound = B * kernel_lipschitz_profile(kernel, ell, h)  # first order, every kernel
    if kernel in _PHI4:  # C^4 profile: B sqrt(phi''''(0)) h^2 / 2
        bound = min(bound, 0.5 * B * math.sqrt(_PHI4[kernel]) * (h / ell) ** 2)
    elif kernel == "matern-1.5":  # C^2 profile: (2/3) B sqrt(12 sqrt3) (h / l)^{3/2}
        bound = min(bound, (2.0 / 3.0) * B * math.sqrt(12.0 * _SQRT3) * (h / ell) ** 1.5)
    return bound
