"""``PointCloudPH-v0``: persistent homology of large point clouds, the task of *The Flood Complex: Large-Scale
Persistent Homology on Millions of Points* (Graf et al., NeurIPS 2025; spec ``topology.md`` §§3, 4, 7, 8).

Generators (§3.1, seeded, vectorised numpy; every array float64):

* ``cheese``: ``k`` non-overlapping spherical voids in the unit cube, radii ``U(r_lo, r_hi)``, sequential
  placement (centre in ``[r + 0.02, 1 − r − 0.02]³``, gap ``≥ 0.02``); points uniform in the cube outside the
  voids. True signal: ``k`` prominent H2 bars.
* ``torus``: major radius 1, minor 0.4, area-uniform (accept with ``(1 + 0.4 cos φ)/1.4``), noise
  ``N(0, 0.02²)``. β1 = 2, β2 = 1.
* ``annulus``: 2-D, radii 0.5–1, area-uniform, noise 0.02. β1 = 1.
* ``figure-eight``: 2-D, two unit circles touching at the origin, noise 0.02. β1 = 2.

Families (§3.2; ``classify`` is not implemented yet): ``fidelity`` — every shape of ``shapes`` (default
cheese k = 6, radii U(0.1, 0.2), and the torus) at every ``fidelity_n`` (default 10⁴, 3·10⁴; the spec's
10⁵ is a kwarg away); ``scale`` — swiss cheese k = 6 at every ``scale_n`` (default 3·10⁵, the spec's CPU
default; paper-scale 10⁶, 10⁷ are kwargs). Only ``fidelity`` runs by default (``families``), so that the
default bench takes a few minutes on 2 cores; ``scale`` instances above ``reference_max_n = 10⁵`` have no
Alpha reference. Dev seeds 0–4 per (family, shape, N), test: 5 HMAC seeds. The seed drives void placement,
radii, points and noise.

Public problem (:class:`PHProblem`): ``points`` (N, d), ``max_dim`` (2 in 3-D, 1 in 2-D), ``units =
"radius"``, ``family``, ``shape``, ``N``, ``d``.

Solution: ``[D_0, …, D_max_dim]`` or ``{"diagrams": [D_0, …], "meta": {"n_simplices": …, "n_landmarks": …}}``;
each ``D_k`` an ``(n_k, 2)`` array of (birth, death) in radius units, births finite, deaths ``≥`` births or
``+inf``.

Reference: gudhi's Alpha diagrams in radius units (``AlphaComplex(points).create_simplex_tree(
output_squared_values=False)``), computed lazily at the first evaluation and cached in memory per instance
(:func:`alpha_reference`, an ``lru_cache``); skipped for ``N > reference_max_n`` (bottleneck metrics NaN).

Metrics (direction in :attr:`PHTask.metrics`):

* ``par2_seconds`` (primary, min): wall seconds of the solve if ``status == "ok"`` and ``valid``, else
  ``2 × max_seconds`` (:meth:`PHTask.finalize`).
* ``time_s`` (min): the solve's wall seconds, uncensored (NaN if the solve failed).
* ``valid`` (max): ``void_recovery == 1`` and (where the reference exists) ``bottleneck_h{max_dim} ≤ tol``.
* ``bottleneck_h0 … h{max_dim}`` (min): bottleneck distance to the Alpha diagram of that dimension (below);
  ``bottleneck_max`` (min): their maximum.
* ``void_recovery`` (max): cheese: 1 if the number of H2 bars with persistence ``> prominence`` equals
  ``k_ref`` (the Alpha reference's own count where it exists, else ``k``); other shapes: 1 if the
  prominent-bar counts equal the reference's (else the true Betti signal) in every dimension ``≥ 1``.
* ``n_simplices``, ``n_landmarks`` (min): declared in the solution's ``meta`` (NaN if not).

Infinite bars: the bottleneck distance is the maximum of the finite parts' distance
(``gudhi.bottleneck_distance``) and of the essential parts': ``inf`` if the numbers of infinite bars differ,
else the largest difference of their sorted births. The kwargs ``tol`` (default 0.3) and ``prominence``
(default 0.5) are in units of ``r_lo``: ``tol = 0.3·r_lo``, prominence threshold ``0.5·r_lo`` [design]; for
the torus, annulus and figure-eight ``r_lo`` stands for 0.4 (the torus' minor
radius, spec §7). ``peak_rss_mb`` (spec §7) is not measured yet.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from papergym.envs.tasks.base import (
    Budget,
    InstanceRef,
    check_floats,
    check_ints,
    check_names,
    instance_params,
    register_task,
    split_instances,
)

__all__ = ["PHTask", "PHProblem", "PHEvaluator", "swiss_cheese", "noisy_torus", "annulus", "figure_eight",
           "generate", "alpha_reference", "bottleneck", "check_diagrams", "FAMILIES", "SHAPES"]

TASK_ID = "PointCloudPH-v0"
FAMILIES = ("fidelity", "scale")
SHAPES = ("cheese", "torus", "annulus", "figure-eight")
N_TEST_SEEDS = 5
NOISE = 0.02
GAP = 0.02  # void margin to the cube and between voids (spec §3.1)
SHAPE_SCALE = 0.4  # r_lo stand-in for the non-cheese shapes (spec §7) [design]


# ------------------------------------------------------------------------------------------ generators
def _rng(seed: Any) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def place_voids(k: int, r_lo: float, r_hi: float, rng: Any, max_tries: int = 100_000) -> tuple[np.ndarray, np.ndarray]:
    """Sequential placement (spec §3.1): ``(centres (k, 3), radii (k,))``; ``ValueError`` if ``k`` voids do not
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


def swiss_cheese(n: int, k: int = 6, r_lo: float = 0.1, r_hi: float = 0.2, seed: Any = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` points uniform in the unit cube outside ``k`` voids: ``(points (n, 3), centres (k, 3), radii (k,))``."""
    rng = _rng(seed)
    centres, radii = place_voids(k, r_lo, r_hi, rng)
    keep_frac = max(1.0 - float(np.sum(4.0 / 3.0 * math.pi * radii ** 3)), 0.05)
    out, have = [], 0
    while have < n:
        m = int((n - have) / keep_frac * 1.1) + 64
        x = rng.random((m, 3))
        d2 = ((x[:, None, :] - centres[None]) ** 2).sum(-1) if k else np.full((m, 1), np.inf)
        x = x[np.all(d2 >= radii ** 2, axis=1)] if k else x
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
    rad = np.sqrt(rng.uniform(r_in ** 2, r_out ** 2, n))
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


def generate(shape: str, n: int, seed: int, k: int = 6, r_lo: float = 0.1, r_hi: float = 0.2
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


# ------------------------------------------------------------------------------------------ scoring
def check_diagrams(solution: Any, max_dim: int) -> tuple[list[np.ndarray], dict[str, Any]]:
    """``(diagrams, meta)`` from a solution (module docstring); ``ValueError`` naming what is wrong."""
    meta: dict[str, Any] = {}
    if isinstance(solution, Mapping):
        if "diagrams" not in solution:
            raise ValueError(f"a solution mapping needs the key 'diagrams'; got {sorted(map(str, solution))}")
        m = solution.get("meta") or {}
        if not isinstance(m, Mapping):
            raise ValueError(f"solution['meta'] must be a mapping, got {type(m).__name__}")
        meta = dict(m)
        solution = solution["diagrams"]
    if isinstance(solution, np.ndarray) or not isinstance(solution, (list, tuple)):
        raise ValueError(f"diagrams must be a list [D_0, ..., D_{max_dim}] of (k, 2) arrays, "
                         f"got {type(solution).__name__}")
    if len(solution) != max_dim + 1:
        raise ValueError(f"diagrams must hold {max_dim + 1} dimensions (0..{max_dim}), got {len(solution)}")
    out = []
    for k, D in enumerate(solution):
        try:
            a = np.asarray(D, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"diagram of dimension {k} is not numeric: {exc}") from None
        if a.size == 0:
            a = a.reshape(0, 2)
        if a.ndim != 2 or a.shape[1] != 2:
            raise ValueError(f"diagram of dimension {k} must have shape (n, 2), got {a.shape}")
        if not np.all(np.isfinite(a[:, 0])):
            raise ValueError(f"diagram of dimension {k}: births must be finite")
        if np.any(np.isnan(a[:, 1])) or np.any(a[:, 1] == -np.inf):
            raise ValueError(f"diagram of dimension {k}: deaths must be numbers or +inf (found NaN or -inf)")
        if np.any(a[:, 1] < a[:, 0]):
            raise ValueError(f"diagram of dimension {k}: deaths must be >= births")
        out.append(a)
    for key in ("n_simplices", "n_landmarks"):
        if key in meta:
            try:
                meta[key] = float(meta[key])
            except (TypeError, ValueError):
                raise ValueError(f"meta[{key!r}] must be a number, got {meta[key]!r}") from None
    return out, meta


def bottleneck(a: np.ndarray, b: np.ndarray) -> float:
    """Bottleneck distance with infinite bars handled explicitly (module docstring)."""
    import gudhi

    fa, fb = np.isfinite(a[:, 1]), np.isfinite(b[:, 1])
    ia, ib = np.sort(a[~fa, 0]), np.sort(b[~fb, 0])
    if len(ia) != len(ib):
        return math.inf
    inf_part = float(np.max(np.abs(ia - ib))) if len(ia) else 0.0
    A, B = a[fa], b[fb]
    A, B = A[np.lexsort(A.T[::-1])], B[np.lexsort(B.T[::-1])]
    if A.shape == B.shape and np.array_equal(A, B):  # fast path (e.g. the Alpha baseline): exactly 0
        fin = 0.0
    else:
        fin = float(gudhi.bottleneck_distance(A.reshape(-1, 2), B.reshape(-1, 2)))
    return max(fin, inf_part)


@functools.lru_cache(maxsize=16)
def alpha_reference(shape: str, n: int, seed: int, k: int, r_lo: float, r_hi: float) -> tuple[np.ndarray, ...]:
    """The Alpha diagrams (radius units, dimensions 0..d−1) of the instance cloud, cached per instance."""
    import gudhi

    pts, _ = generate(shape, n, seed, k, r_lo, r_hi)
    st = gudhi.AlphaComplex(points=pts).create_simplex_tree(output_squared_values=False)
    st.compute_persistence(persistence_dim_max=True)
    out = []
    for dim in range(pts.shape[1]):
        a = np.asarray(st.persistence_intervals_in_dimension(dim), dtype=np.float64).reshape(-1, 2)
        a.setflags(write=False)
        out.append(a)
    return tuple(out)


def _prominent(D: np.ndarray, threshold: float) -> int:
    return int(np.sum(D[:, 1] - D[:, 0] > threshold))


@dataclass(frozen=True)
class PHProblem:
    """The public problem (module docstring)."""

    points: np.ndarray
    max_dim: int
    units: str
    family: str
    shape: str
    N: int
    d: int

    PRIVATE_FIELDS = ()


class PHEvaluator:
    """Private scorer of one instance: the truth (voids / Betti signal) and the lazily computed Alpha reference."""

    def __init__(self, key: tuple, truth: Mapping[str, Any], max_dim: int, tol: float, prominence: float,
                 with_reference: bool):
        self.key, self.truth, self.max_dim = key, dict(truth), max_dim
        self.tol, self.prominence, self.with_reference = tol, prominence, with_reference

    @property
    def reference(self) -> tuple[np.ndarray, ...] | None:
        return alpha_reference(*self.key) if self.with_reference else None

    def evaluate(self, solution: Any) -> dict[str, float]:
        dgms, meta = check_diagrams(solution, self.max_dim)
        ref = self.reference
        out: dict[str, float] = {}
        if ref is not None:
            bn = [bottleneck(dgms[k], ref[k]) for k in range(self.max_dim + 1)]
        else:
            bn = [math.nan] * (self.max_dim + 1)
        for k, v in enumerate(bn):
            out[f"bottleneck_h{k}"] = v
        out["bottleneck_max"] = max(bn) if ref is not None else math.nan
        target = {k: (_prominent(ref[k], self.prominence) if ref is not None else int(self.truth["betti"].get(k, 0)))
                  for k in range(1, self.max_dim + 1)}
        if "radii" in self.truth:  # cheese: H2 only (spec §7)
            rec = _prominent(dgms[2], self.prominence) == target[2]
        else:
            rec = all(_prominent(dgms[k], self.prominence) == target[k] for k in target)
        out["void_recovery"] = float(rec)
        ok = rec and (ref is None or bn[self.max_dim] <= self.tol)
        out["valid"] = float(ok)
        out["n_simplices"] = float(meta.get("n_simplices", math.nan))
        out["n_landmarks"] = float(meta.get("n_landmarks", math.nan))
        return out


class PHTask:
    """``PointCloudPH-v0`` (module docstring). Kwargs: ``families``, ``shapes`` (fidelity), ``fidelity_n``,
    ``scale_n``, ``k``, ``r_lo``, ``r_hi``, ``seeds``, ``tol``, ``prominence``, ``reference_max_n``,
    ``max_seconds`` (default 60 for fidelity only, else 120; spec §8)."""

    id = TASK_ID
    primary = "par2_seconds"
    table_metrics = ("time_s", "valid", "bottleneck_max", "void_recovery", "n_simplices", "n_landmarks")

    def __init__(self, families: Any = ("fidelity",), shapes: Any = ("cheese", "torus"),
                 fidelity_n: Any = (10_000, 30_000),
                 scale_n: Any = (300_000,), k: int = 6, r_lo: float = 0.1, r_hi: float = 0.2,
                 seeds: Any = (0, 1, 2, 3, 4), tol: float = 0.3, prominence: float = 0.5,
                 reference_max_n: int = 100_000, max_seconds: float | None = None):
        self.families = check_names(families, "families", FAMILIES)
        self.shapes = check_names(shapes, "shapes", SHAPES)
        self.fidelity_n = check_ints(fidelity_n, "fidelity_n", 16)
        self.scale_n = check_ints(scale_n, "scale_n", 16)
        self.k = check_ints(k, "k", 0)[0]
        self.r_lo = check_floats(r_lo, "r_lo", above=0.0, below=0.5)[0]
        self.r_hi = check_floats(r_hi, "r_hi", above=0.0, below=0.5 - GAP)[0]
        if self.r_hi < self.r_lo:
            raise ValueError(f"r_hi must be >= r_lo = {self.r_lo:g}, got {self.r_hi:g}")
        self.seeds = check_ints(seeds, "seeds", 0)
        self.tol = check_floats(tol, "tol", above=0.0)[0]  # in units of r_lo (or SHAPE_SCALE)
        self.prominence = check_floats(prominence, "prominence", above=0.0)[0]
        self.reference_max_n = check_ints(reference_max_n, "reference_max_n", 0)[0]
        ms = (60.0 if self.families == ("fidelity",) else 120.0) if max_seconds is None else max_seconds
        self.max_seconds = check_floats(ms, "max_seconds", above=0.0)[0]
        self.default_budget = Budget(max_seconds=self.max_seconds)
        self.metrics = {"par2_seconds": "min", "time_s": "min", "valid": "max",
                        **{f"bottleneck_h{i}": "min" for i in range(3)}, "bottleneck_max": "min",
                        "void_recovery": "max", "n_simplices": "min", "n_landmarks": "min"}

    def instances(self, split: str = "dev") -> list[InstanceRef]:
        configs = []
        for fam in self.families:
            shapes, ns = (self.shapes, self.fidelity_n) if fam == "fidelity" else (("cheese",), self.scale_n)
            for shape in shapes:
                for n in ns:
                    p: dict[str, Any] = {"family": fam, "shape": shape, "N": n}
                    if shape == "cheese":
                        p.update(k=self.k, r_lo=self.r_lo, r_hi=self.r_hi)
                    configs.append((f"{fam}/{shape}/N={n}", p))
        return split_instances(TASK_ID, split, configs, self.seeds, N_TEST_SEEDS)

    def make(self, ref: InstanceRef) -> tuple[PHProblem, PHEvaluator]:
        p = instance_params(ref, TASK_ID)
        fam = check_names(p.get("family"), "family", FAMILIES)[0]
        shape = check_names(p.get("shape"), "shape", SHAPES)[0]
        n = check_ints(p.get("N"), "N", 16)[0]
        cheese = shape == "cheese"
        k = check_ints(p.get("k", self.k), "k", 0)[0] if cheese else 0
        r_lo = check_floats(p.get("r_lo", self.r_lo), "r_lo", above=0.0)[0] if cheese else 0.0
        r_hi = check_floats(p.get("r_hi", self.r_hi), "r_hi", above=0.0)[0] if cheese else 0.0
        pts, truth = generate(shape, n, ref.seed, k, r_lo, r_hi)
        pts.setflags(write=False)
        d = pts.shape[1]
        scale = r_lo if cheese else SHAPE_SCALE
        tol, prom = self.tol * scale, self.prominence * scale  # kwargs are in units of r_lo
        key = (shape, n, int(ref.seed), k, r_lo, r_hi)
        problem = PHProblem(points=pts, max_dim=d - 1, units="radius", family=fam, shape=shape, N=n, d=d)
        return problem, PHEvaluator(key, truth, d - 1, tol, prom, n <= self.reference_max_n)

    def finalize(self, metrics: Mapping[str, float] | None, seconds: float | None, status: str,
                 budget: Budget | None = None) -> dict[str, float]:
        """``metrics`` plus ``time_s`` (the solve's seconds if ``status == "ok"``, else NaN) and ``par2_seconds``
        (``time_s`` if also ``valid``, else ``2 × max_seconds`` of ``budget`` or the default budget)."""
        out = dict(metrics or {})
        b = budget if budget is not None and budget.max_seconds is not None else self.default_budget
        ok_run = status == "ok" and seconds is not None and math.isfinite(float(seconds))
        out["time_s"] = float(seconds) if ok_run else math.nan
        ok = ok_run and float(out.get("valid", 0.0) or 0.0) >= 1.0
        out["par2_seconds"] = float(seconds) if ok else 2.0 * float(b.max_seconds)  # type: ignore[arg-type]
        return out


register_task(TASK_ID, PHTask)
