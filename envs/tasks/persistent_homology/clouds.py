"""The point clouds of ``PointCloudPH-v0`` (``docs/papers/flood.md``): the swiss cheese (points uniform in the unit
cube outside ``k`` spherical voids), the noisy torus, annulus and figure-eight, and :func:`generate`, the instance
cloud of a seed. Used by the task (:mod:`papergym.envs.tasks.persistent_homology.task`) and by the classification
sub-task (:mod:`papergym.envs.tasks.persistent_homology.classify`).

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "SHAPES",
    "NOISE",
    "GAP",
    "CHEESE_CHUNK",
    "place_voids",
    "swiss_cheese",
    "noisy_torus",
    "annulus",
    "figure_eight",
    "generate",
]

SHAPES = ("cheese", "torus", "annulus", "figure-eight")
NOISE = 0.02
GAP = 0.02  # void margin to the cube and between voids
CHEESE_CHUNK = 1 << 20  # candidate points drawn per rejection round


# ------------------------------------------------------------------------------------------ generators
def _rng(seed: Any) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def place_voids(k: int, r_lo: float, r_hi: float, rng: Any, max_tries: int = 100_000) -> tuple[np.ndarray, np.ndarray]:
    """Sequential placement: ``(centres (k, 3), radii (k,))``; ``ValueError`` if ``k`` voids do not
    fit after ``max_tries`` draws."""
    rng = _rng(rng)
    centres, radii = np.zeros((0, 3)), np.zeros(0)
    for _ in range(max_tries):
        if len(radii) == k:
            break
        r = rng.uniform(r_lo, r_hi)
        if r + GAP >= 1 - r - GAP:
            raise ValueError(f"void radius {r:g} does not fit in the unit cube")
        c = rng.uniform(r + GAP, 1 - r - GAP, 3)
        if np.all(np.linalg.norm(centres - c, axis=1) >= radii + r + GAP):
            centres, radii = np.vstack([centres, c]), np.append(radii, r)
    if len(radii) < k:
        raise ValueError(f"could not place {k} voids with radii U({r_lo:g}, {r_hi:g}) in {max_tries} draws")
    return centres, radii


def swiss_cheese(
    n: int, k: int = 6, r_lo: float = 0.1, r_hi: float = 0.2, seed: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` points uniform in the unit cube outside ``k`` voids: ``(points (n, 3), centres (k, 3), radii (k,))``."""
    rng = _rng(seed)
    centres, radii = place_voids(k, r_lo, r_hi, rng)
    keep_frac = max(1.0 - float(np.sum(4.0 / 3.0 * math.pi * radii**3)), 0.05)
    out, have = [], 0
    while have < n:
        m = min(int((n - have) / keep_frac * 1.1) + 64, CHEESE_CHUNK)  # bounded memory at 10^7 points
        x = rng.random((m, 3))
        keep = np.ones(m, dtype=bool)
        for c, r in zip(centres, radii):
            keep &= ((x - c) ** 2).sum(-1) >= r**2
        x = x[keep]
        out.append(x)
        have += len(x)
    return np.concatenate(out)[:n], centres, radii


def noisy_torus(n: int, seed: Any = None, R: float = 1.0, r: float = 0.4, noise: float = NOISE) -> np.ndarray:
    """``n`` area-uniform points on the torus (major ``R``, minor ``r``) plus Gaussian noise: (n, 3)."""
    rng = _rng(seed)
    th, ph, have = [], [], 0
    while have < n:
        m = int((n - have) * 1.5) + 64
        t, p = rng.uniform(0, 2 * math.pi, m), rng.uniform(0, 2 * math.pi, m)
        acc = rng.random(m) < (R + r * np.cos(p)) / (R + r)
        th.append(t[acc])
        ph.append(p[acc])
        have += int(acc.sum())
    t, p = np.concatenate(th)[:n], np.concatenate(ph)[:n]
    rad = R + r * np.cos(p)
    pts = np.stack([rad * np.cos(t), rad * np.sin(t), r * np.sin(p)], axis=1)
    return pts + noise * rng.standard_normal(pts.shape)


def annulus(n: int, seed: Any = None, r_in: float = 0.5, r_out: float = 1.0, noise: float = NOISE) -> np.ndarray:
    """``n`` area-uniform points in the annulus ``r_in ≤ |x| ≤ r_out`` plus Gaussian noise: (n, 2)."""
    rng = _rng(seed)
    rad = np.sqrt(rng.uniform(r_in**2, r_out**2, n))
    t = rng.uniform(0, 2 * math.pi, n)
    pts = np.stack([rad * np.cos(t), rad * np.sin(t)], axis=1)
    return pts + noise * rng.standard_normal(pts.shape)


def figure_eight(n: int, seed: Any = None, noise: float = NOISE) -> np.ndarray:
    """``n`` points uniform on two unit circles centred at ``(∓1, 0)`` (touching at the origin) plus noise: (n, 2)."""
    rng = _rng(seed)
    side = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    t = rng.uniform(0, 2 * math.pi, n)
    pts = np.stack([side + np.cos(t), np.sin(t)], axis=1)
    return pts + noise * rng.standard_normal(pts.shape)


def generate(
    shape: str, n: int, seed: int, k: int = 6, r_lo: float = 0.1, r_hi: float = 0.2
) -> tuple[np.ndarray, dict[str, Any]]:
    """The instance cloud ``(points, truth)``; ``truth``: void ``centres``/``radii`` (cheese) and ``betti``
    (the true signal per dimension ≥ 1)."""
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(12,)))
    if shape == "cheese":
        pts, c, r = swiss_cheese(n, k, r_lo, r_hi, rng)
        return pts, {"centres": c, "radii": r, "betti": {2: k}}
    if shape == "torus":
        return noisy_torus(n, rng), {"betti": {1: 2, 2: 1}}
    if shape == "annulus":
        return annulus(n, rng), {"betti": {1: 1}}
    if shape == "figure-eight":
        return figure_eight(n, rng), {"betti": {1: 2}}
    raise ValueError(f"shape must be one of {', '.join(SHAPES)}, got {shape!r}")
