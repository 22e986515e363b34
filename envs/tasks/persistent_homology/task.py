"""``PointCloudPH-v0``: persistent homology of large point clouds, the task of *The Flood Complex: Large-Scale
Persistent Homology on Millions of Points* (Graf et al., NeurIPS 2025, arXiv:2509.22432;
``docs/papers/flood.md``; tags: see docs/conventions.md).

Generators (seeded, vectorised numpy; every array float64):

* ``cheese``: ``k`` non-overlapping spherical voids in the unit cube, radii ``U(r_lo, r_hi)``, sequential
  placement (centre in ``[r + 0.02, 1 − r − 0.02]³``, gap ``≥ 0.02``); points uniform in the cube outside the
  voids. True signal: ``k`` prominent H2 bars.
* ``torus``: major radius 1, minor 0.4, area-uniform (accept with ``(1 + 0.4 cos φ)/1.4``), noise
  ``N(0, 0.02²)``. β1 = 2, β2 = 1.
* ``annulus``: 2-D, radii 0.5–1, area-uniform, noise 0.02. β1 = 1.
* ``figure-eight``: 2-D, two unit circles touching at the origin, noise 0.02. β1 = 2.

Families: ``fidelity`` — every shape of ``shapes`` (default cheese k = 6, radii U(0.1, 0.2), and the
torus) at every ``fidelity_n`` (default 10⁴, 3·10⁴; 10⁵ is a kwarg away); ``scale`` — swiss cheese
k = 6 at every ``scale_n`` (default 3·10⁵, the CPU default; paper-scale 10⁶, 10⁷ are kwargs; ``points =
[…]`` selects it with the Alpha reference at every size); ``classify`` (``subtask =
"swiss-cheese-classification"``) — one set of 3 × 20 swiss-cheese clouds of 10⁴ points per seed, class = number
of voids ∈ {4, 6, 8} (:mod:`~papergym.envs.tasks.persistent_homology.classify`). Only ``fidelity`` runs by
default (``families``), so that the default bench takes minutes on 2 cores; ``scale`` instances above
``reference_max_n = 10⁵`` have no Alpha reference. Dev seeds 0–4 per (family, shape, N) (0–2 for ``classify``
and ``points``), test: 5 HMAC seeds. The seed drives void placement, radii, points and noise.

Public problem (:class:`PHProblem`): ``points`` (N, d), ``max_dim`` (2 in 3-D, 1 in 2-D), ``units =
"radius"``, ``family``, ``shape``, ``N``, ``d``; for ``classify`` (:class:`PHClassifyProblem`) ``clouds`` (a
tuple of (N, 3) arrays, labels private) instead of ``points``. Solvers run on each cloud with
:func:`solve_clouds`.

Solution: ``[D_0, …, D_max_dim]`` or ``{"diagrams": [D_0, …], "meta": {"n_simplices": …, "n_landmarks": …}}``
(``classify``: one such list per cloud, in order);
each ``D_k`` an ``(n_k, 2)`` array of (birth, death) in radius units, births finite, deaths ``≥`` births or
``+inf``.

Reference: gudhi's Alpha diagrams in radius units (``AlphaComplex(points).create_simplex_tree(
output_squared_values=False)``), computed by the evaluator's ``prepare()`` before the solver's clock starts and
cached in memory per instance (:func:`alpha_reference`, an ``lru_cache``), and for dev instances with
``N ≥ 5·10⁴`` also on disk next to the bench's cell cache (:func:`cached_reference`), so that pool workers and
later runs share it; skipped for ``N > reference_max_n`` (distance metrics NaN).

Metrics (direction in :attr:`PHTask.metrics`):

* ``par2_seconds`` (primary, min): wall seconds of the solve if ``status == "ok"`` and ``valid``, else
  ``2 × max_seconds`` (:meth:`PHTask.finalize`).
* ``time_s`` (min): the solve's wall seconds, uncensored (NaN if the solve failed).
* ``valid`` (max): ``void_recovery == 1`` and (where the reference exists) ``bottleneck_max ≤ tol``. [design;
  checking H2 only would let a submission skip H0 and H1.] ``classify``: 1 for a well-formed
  solution.
* ``bottleneck_h0 … h{max_dim}`` (min): bottleneck distance to the Alpha diagram of that dimension (below,
  ``gudhi.bottleneck_distance`` with additive error ``e = 1e-8``: its exact mode ``e = 0`` needs memory
  quadratic in the diagram sizes, 16 GB at 10⁵ points); ``bottleneck_max`` (min): their maximum.
* ``w1_h1 … w1_h{max_dim}`` (min): 1-Wasserstein distance to the Alpha diagram (:func:`wasserstein1`; ``wasserstein
  = False`` skips it; NaN above ``wasserstein_max_n = 10⁵`` points: Hera's auction takes about 20 s per
  solution at 10⁵ points and well over 15 minutes at 10⁶). It sums over all bars, so it is dominated by the tens of
  thousands of short Alpha bars that a landmark complex does not have: it measures the small-scale topology lost, the
  bottleneck the largest single error.
* ``peak_rss_mb`` (min): the process' resident-memory high-water mark during the solve, ``solve_rss_mb`` what
  the solve added (``measure_memory``, :mod:`papergym.leaderboard.runner.bench`; a pool worker keeps memory from
  earlier solves, so ``benchmarks/bench_ph.py`` runs each cell in a fresh process for clean figures).
* ``accuracy``, ``accuracy_ci95`` (``classify``): mean test accuracy over ``n_splits`` random 72/28 splits of
  the fixed feature pipeline and its Student-t 95 % half-width.
* ``void_recovery`` (max): cheese: 1 if the number of H2 bars with persistence ``> prominence`` equals
  ``k_ref`` (the Alpha reference's own count where it exists, else ``k``); other shapes: 1 if the
  prominent-bar counts equal the reference's (else the true Betti signal) in every dimension ``≥ 1``.
* ``n_paired_simplices``, ``n_landmarks`` (min): measured by the evaluator from the diagrams
  (:func:`complex_counts`), never taken from the solution's ``meta`` (a solver's declared ``n_simplices`` is
  checked for type and not published): ``n_landmarks`` = the number of H0 bars (the complex's vertices),
  ``n_paired_simplices`` = 2 per finite bar + 1 per essential bar (a lower bound on the complex size: pairs of
  zero persistence leave no bar; ``benchmarks/bench_ph.py`` counts the full filtrations).

Infinite bars: the bottleneck distance is the maximum of the finite parts' distance
(``gudhi.bottleneck_distance``) and of the essential parts': ``inf`` if the numbers of infinite bars differ,
else the largest difference of their sorted births. The kwargs ``tol`` (default 0.3) and ``prominence``
(default 0.5) are in units of ``r_lo``: ``tol = 0.3·r_lo``, prominence threshold ``0.5·r_lo`` [design]; for
the torus, annulus and figure-eight ``r_lo`` stands for 0.4 (the torus' minor
radius).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from papergym.envs.tasks.base import (
    Budget,
    BudgetExceeded,
    InstanceRef,
    check_floats,
    check_ints,
    check_names,
    instance_params,
    register_task,
    split_instances,
)
from papergym.envs.tasks.persistent_homology.classify import FEATURES, classify_set, features, split_accuracy
from papergym.envs.tasks.persistent_homology.clouds import (
    GAP,
    SHAPES,
    annulus,
    figure_eight,
    generate,
    noisy_torus,
    swiss_cheese,
)

__all__ = [
    "PHTask",
    "PHProblem",
    "PHEvaluator",
    "PHClassifyProblem",
    "PHClassifyEvaluator",
    "clouds_of",
    "solve_clouds",
    "wasserstein1",
    "swiss_cheese",
    "noisy_torus",
    "annulus",
    "figure_eight",
    "generate",
    "alpha_reference",
    "bottleneck",
    "check_diagrams",
    "FAMILIES",
    "SHAPES",
]

TASK_ID = "PointCloudPH-v0"
FAMILIES = ("fidelity", "scale", "classify")
N_TEST_SEEDS = 5
BOTTLENECK_E = 1e-8  # additive error of gudhi.bottleneck_distance: the exact mode (e=0) needs O(n*m) memory
SHAPE_SCALE = 0.4  # r_lo stand-in for the non-cheese shapes [design]


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
        raise ValueError(
            f"diagrams must be a list [D_0, ..., D_{max_dim}] of (k, 2) arrays, got {type(solution).__name__}"
        )
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
        fin = float(gudhi.bottleneck_distance(A.reshape(-1, 2), B.reshape(-1, 2), BOTTLENECK_E))
    return max(fin, inf_part)


def wasserstein1(a: np.ndarray, b: np.ndarray) -> float:
    """1-Wasserstein distance (ℓ∞ ground metric, gudhi's Hera, relative error ≤ 1 %) between the finite parts,
    plus the sum of the sorted essential births' differences; ``inf`` if the numbers of infinite bars differ."""
    import gudhi.hera

    fa, fb = np.isfinite(a[:, 1]), np.isfinite(b[:, 1])
    ia, ib = np.sort(a[~fa, 0]), np.sort(b[~fb, 0])
    if len(ia) != len(ib):
        return math.inf
    inf_part = float(np.sum(np.abs(ia - ib)))
    A, B = a[fa], b[fb]
    if A.shape == B.shape and np.array_equal(A[np.lexsort(A.T[::-1])], B[np.lexsort(B.T[::-1])]):
        return inf_part
    return (
        float(gudhi.hera.wasserstein_distance(A.reshape(-1, 2), B.reshape(-1, 2), order=1, internal_p=np.inf))
        + inf_part
    )


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


DISK_CACHE_MIN_N = 50_000  # dev references at least this large are also kept on disk (Alpha: ~4 min at 1e6)


def reference_file(key: tuple) -> Any:
    """Disk location of a cached Alpha reference: ``<cell cache>/_ph_alpha/<instance>-gudhi<version>.npz``."""
    import gudhi

    from papergym.leaderboard.runner.compare import default_cache_dir

    shape, n, seed, k, r_lo, r_hi = key
    return (
        default_cache_dir() / "_ph_alpha" / f"{shape}-N{n}-s{seed}-k{k}-{r_lo:g}-{r_hi:g}-gudhi{gudhi.__version__}.npz"
    )


@functools.lru_cache(maxsize=16)
def cached_reference(key: tuple) -> tuple[np.ndarray, ...]:
    """:func:`alpha_reference`, shared across processes and runs through a file (public dev instances only: the
    hidden test instances' references are never written). Written atomically; a corrupt file is recomputed."""
    import os
    import tempfile

    path = reference_file(key)
    try:
        with np.load(path) as z:
            out = tuple(z[f"H{i}"] for i in range(len(z.files)))
        for a in out:
            a.setflags(write=False)
        return out
    except (OSError, ValueError, KeyError):
        pass
    out = alpha_reference(*key)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **{f"H{i}": a for i, a in enumerate(out)})
        os.replace(tmp, path)
    except OSError:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out


def _digest(dgms: list[np.ndarray], meta: Mapping[str, Any]) -> str:
    """Content hash of checked diagrams and meta (the scoring memo's key)."""
    import hashlib

    h = hashlib.sha256(repr(sorted((str(k), repr(v)) for k, v in meta.items())).encode())
    for D in dgms:
        h.update(np.ascontiguousarray(D, dtype=np.float64).tobytes())
        h.update(b"|")
    return h.hexdigest()


def complex_counts(dgms: list[np.ndarray]) -> dict[str, float]:
    """Complex sizes measured from the diagrams themselves (a solver's declared ``meta`` counts are not used):
    ``n_landmarks`` = the number of H0 bars (every vertex of the filtered complex starts one H0 class);
    ``n_paired_simplices`` = the simplices the diagrams pair, 2 per finite bar and 1 per essential bar (a lower
    bound on the complex's size: simplices paired at zero persistence leave no bar)."""
    fin = sum(int(np.sum(np.isfinite(D[:, 1]))) for D in dgms)
    ess = sum(int(np.sum(~np.isfinite(D[:, 1]))) for D in dgms)
    return {"n_paired_simplices": float(2 * fin + ess), "n_landmarks": float(len(dgms[0]))}


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


@dataclass(frozen=True)
class PHClassifyProblem:
    """The public problem of the ``classify`` family: ``clouds`` (a tuple of (N, 3) arrays, unlabelled, in a
    seeded order); the solution holds one diagram list per cloud, in that order."""

    clouds: tuple
    max_dim: int
    units: str
    family: str
    shape: str
    N: int
    d: int
    n_clouds: int

    PRIVATE_FIELDS = ()


def clouds_of(problem: Any) -> list[np.ndarray]:
    """The point clouds of a problem: ``problem.clouds`` (``classify``) or ``[problem.points]``."""
    clouds = getattr(problem, "clouds", None)
    return (
        [np.asarray(c, dtype=np.float64) for c in clouds]
        if clouds is not None
        else [np.asarray(problem.points, dtype=np.float64)]
    )


def solve_clouds(problem: Any, budget: Any, one: Any) -> dict[str, Any]:
    """Run ``one(points) -> (diagrams, meta)`` on every cloud of ``problem`` and pack the solution (one diagram
    list, or one per cloud for ``classify``; numeric ``meta`` values averaged over the clouds). Raises
    :class:`~papergym.envs.tasks.base.BudgetExceeded` between clouds once ``budget.max_seconds`` is spent."""
    import time

    t0 = time.perf_counter()
    limit = getattr(budget, "max_seconds", None)
    dgms, metas = [], []
    for i, pts in enumerate(clouds_of(problem)):
        if limit is not None and i and time.perf_counter() - t0 > float(limit):
            raise BudgetExceeded(f"{i} of {getattr(problem, 'n_clouds', 1)} clouds done in {limit:g} s")
        d, m = one(pts)
        dgms.append(d)
        metas.append(m)
    meta = {k: float(np.mean([m[k] for m in metas])) for k in metas[0]} if metas else {}
    return {"diagrams": dgms if hasattr(problem, "clouds") else dgms[0], "meta": meta}


class PHEvaluator:
    """Private scorer of one instance: the truth (voids / Betti signal) and the lazily computed Alpha reference."""

    def __init__(
        self,
        key: tuple,
        truth: Mapping[str, Any],
        max_dim: int,
        tol: float,
        prominence: float,
        with_reference: bool,
        wasserstein: bool = True,
        disk_cache: bool = False,
    ):
        self.key, self.truth, self.max_dim = key, dict(truth), max_dim
        self.tol, self.prominence, self.with_reference = tol, prominence, with_reference
        self.wasserstein, self.disk_cache = wasserstein, disk_cache
        self._memo: tuple[str, dict[str, float]] | None = None

    @property
    def reference(self) -> tuple[np.ndarray, ...] | None:
        if not self.with_reference:
            return None
        return cached_reference(self.key) if self.disk_cache else alpha_reference(*self.key)

    def prepare(self) -> None:
        """Compute (and cache) the Alpha reference before the solver's clock starts."""
        _ = self.reference

    def evaluate(self, solution: Any) -> dict[str, float]:
        dgms, meta = check_diagrams(solution, self.max_dim)
        digest = _digest(dgms, meta)  # the distances at 10^6 points take minutes: a reported solution that is
        if self._memo is not None and self._memo[0] == digest:  # returned unchanged is not scored twice
            return dict(self._memo[1])
        out = self._score(dgms, meta)
        self._memo = (digest, dict(out))
        return out

    def _score(self, dgms: list[np.ndarray], meta: Mapping[str, Any]) -> dict[str, float]:
        ref = self.reference
        out: dict[str, float] = {}
        if ref is not None:
            bn = [bottleneck(dgms[k], ref[k]) for k in range(self.max_dim + 1)]
        else:
            bn = [math.nan] * (self.max_dim + 1)
        for k, v in enumerate(bn):
            out[f"bottleneck_h{k}"] = v
        out["bottleneck_max"] = max(bn) if ref is not None else math.nan
        for k in range(1, self.max_dim + 1):
            out[f"w1_h{k}"] = wasserstein1(dgms[k], ref[k]) if ref is not None and self.wasserstein else math.nan
        target = {
            k: (_prominent(ref[k], self.prominence) if ref is not None else int(self.truth["betti"].get(k, 0)))
            for k in range(1, self.max_dim + 1)
        }
        if "radii" in self.truth:  # cheese: H2 only
            rec = _prominent(dgms[2], self.prominence) == target[2]
        else:
            rec = all(_prominent(dgms[k], self.prominence) == target[k] for k in target)
        out["void_recovery"] = float(rec)
        ok = rec and (ref is None or max(bn) <= self.tol)  # every dimension: else H0/H1 could be skipped
        out["valid"] = float(ok)
        out.update(complex_counts(dgms))
        return out


class PHClassifyEvaluator:
    """Private scorer of a ``classify`` instance: the labels, the fixed features and classifier
    (:mod:`~papergym.envs.tasks.persistent_homology.classify`)."""

    def __init__(self, labels: np.ndarray, max_dim: int, features: str, n_splits: int, seed: int):
        self.labels, self.max_dim, self.features = np.asarray(labels), max_dim, features
        self.n_splits, self.seed = n_splits, seed

    def evaluate(self, solution: Any) -> dict[str, float]:

        meta: dict[str, Any] = {}
        if isinstance(solution, Mapping):
            if "diagrams" not in solution:
                raise ValueError(f"a solution mapping needs the key 'diagrams'; got {sorted(map(str, solution))}")
            meta = dict(solution.get("meta") or {})
            solution = solution["diagrams"]
        if not isinstance(solution, (list, tuple)) or len(solution) != len(self.labels):
            raise ValueError(
                f"a classify solution holds one diagram list per cloud ({len(self.labels)}), got "
                f"{len(solution) if isinstance(solution, (list, tuple)) else type(solution).__name__}"
            )
        dgms = []
        for i, s in enumerate(solution):
            try:
                dgms.append(check_diagrams(s, self.max_dim)[0])
            except ValueError as exc:
                raise ValueError(f"cloud {i}: {exc}") from None
        _, meta = check_diagrams({"diagrams": solution[0], "meta": meta}, self.max_dim)
        acc = split_accuracy(features(dgms, self.max_dim, self.features), self.labels, self.n_splits, self.seed)
        counts = [complex_counts(d) for d in dgms]
        return {
            "accuracy": acc["accuracy"],
            "accuracy_ci95": acc["accuracy_ci95"],
            "valid": 1.0,
            **{k: float(np.mean([c[k] for c in counts])) for k in ("n_paired_simplices", "n_landmarks")},
        }


def _sizes(v: Any, name: str) -> tuple[int, ...]:
    """Cloud sizes: integers >= 16; integral floats such as ``1e6`` (the CLI's ``--points 1e4,1e6``) accepted."""
    vals = list(v) if isinstance(v, (list, tuple)) else [v]
    vals = [int(x) if isinstance(x, float) and x.is_integer() else x for x in vals]
    return check_ints(vals, name, 16)


SUBTASKS = {
    "fidelity": ("fidelity",),
    "scale": ("scale",),
    "swiss-cheese-classification": ("classify",),
    "classify": ("classify",),
}


class PHTask:
    """``PointCloudPH-v0`` (module docstring). Kwargs: ``subtask`` (``fidelity``, ``scale``,
    ``swiss-cheese-classification``; overrides ``families``), ``points`` (swiss-cheese sizes: the ``scale``
    family at these N, with the Alpha reference at every size and seeds 0-2 unless given), ``families``, ``shapes``
    (fidelity), ``fidelity_n``, ``scale_n``, ``k``, ``r_lo``, ``r_hi``, ``seeds``, ``tol``, ``prominence``,
    ``reference_max_n``, ``wasserstein``, ``wasserstein_max_n``, ``classify_n, ``classify_per_class``, ``classify_k``,
    ``features``, ``n_splits``, ``max_seconds`` (default 60 for fidelity only, else 120)."""

    id = TASK_ID
    primary = "par2_seconds"
    measure_memory = True  # peak_rss_mb / solve_rss_mb (leaderboard.bench)

    def __init__(
        self,
        subtask: str | None = None,
        points: Any = None,
        families: Any = ("fidelity",),
        shapes: Any = ("cheese", "torus"),
        fidelity_n: Any = (10_000, 30_000),
        scale_n: Any = (300_000,),
        k: int = 6,
        r_lo: float = 0.1,
        r_hi: float = 0.2,
        seeds: Any = None,
        tol: float = 0.3,
        prominence: float = 0.5,
        reference_max_n: int = 100_000,
        wasserstein: bool = True,
        wasserstein_max_n: int = 100_000,
        classify_n: int = 10_000,
        classify_per_class: int = 20,
        classify_k: Any = (4, 6, 8),
        features: str = "lifetimes+betti",
        n_splits: int = 10,
        max_seconds: float | None = None,
    ):

        if subtask is not None:
            families = SUBTASKS[check_names(subtask, "subtask", tuple(SUBTASKS))[0]]
        self.points = None if points is None else _sizes(points, "points")
        if self.points is not None:  # --points 1e4,1e5,1e6: swiss cheese at these N, Alpha reference at all
            if subtask is not None and families != ("scale",):
                raise ValueError(f"points selects the scale family; it cannot be combined with subtask={subtask!r}")
            families, scale_n = ("scale",), self.points
            if reference_max_n == 100_000:
                reference_max_n = max(self.points)
            if seeds is None:
                seeds = (0, 1, 2)
        self.families = check_names(families, "families", FAMILIES)
        self.shapes = check_names(shapes, "shapes", SHAPES)
        self.fidelity_n = _sizes(fidelity_n, "fidelity_n")
        self.scale_n = _sizes(scale_n, "scale_n")
        self.k = check_ints(k, "k", 0)[0]
        self.r_lo = check_floats(r_lo, "r_lo", above=0.0, below=0.5)[0]
        self.r_hi = check_floats(r_hi, "r_hi", above=0.0, below=0.5 - GAP)[0]
        if self.r_hi < self.r_lo:
            raise ValueError(f"r_hi must be >= r_lo = {self.r_lo:g}, got {self.r_hi:g}")
        if seeds is None:  # dev seeds 0-4; 0-2 for the classification set alone (60 clouds per seed)
            seeds = (0, 1, 2) if self.families == ("classify",) else (0, 1, 2, 3, 4)
        self.seeds = check_ints(seeds, "seeds", 0)
        self.tol = check_floats(tol, "tol", above=0.0)[0]  # in units of r_lo (or SHAPE_SCALE)
        self.prominence = check_floats(prominence, "prominence", above=0.0)[0]
        self.reference_max_n = check_ints(reference_max_n, "reference_max_n", 0)[0]
        if not isinstance(wasserstein, (bool, np.bool_)):
            raise ValueError(f"wasserstein must be a boolean, got {wasserstein!r}")
        self.wasserstein = bool(wasserstein)
        self.wasserstein_max_n = check_ints(wasserstein_max_n, "wasserstein_max_n", 0)[0]
        self.classify_n = _sizes(classify_n, "classify_n")[0]
        self.classify_per_class = check_ints(classify_per_class, "classify_per_class", 2)[0]
        self.classify_k = check_ints(classify_k, "classify_k", 1)
        if len(set(self.classify_k)) < 2:
            raise ValueError(f"classify_k needs at least two distinct void counts, got {self.classify_k}")
        self.features = check_names(features, "features", FEATURES)[0]
        self.n_splits = check_ints(n_splits, "n_splits", 2)[0]
        if max_seconds is None:  # 600 s once a scale cloud has >= 5e5 points (Alpha: ~200 s at 1e6)
            big = "scale" in self.families and max(self.scale_n) >= 500_000
            max_seconds = 600.0 if big else 60.0 if self.families == ("fidelity",) else 120.0
        ms = max_seconds
        self.max_seconds = check_floats(ms, "max_seconds", above=0.0)[0]
        self.default_budget = Budget(max_seconds=self.max_seconds)
        self.metrics = {
            "par2_seconds": "min",
            "time_s": "min",
            "valid": "max",
            **{f"bottleneck_h{i}": "min" for i in range(3)},
            "bottleneck_max": "min",
            "w1_h1": "min",
            "w1_h2": "min",
            "void_recovery": "max",
            "n_paired_simplices": "min",
            "n_landmarks": "min",
            "peak_rss_mb": "min",
            "solve_rss_mb": "min",
            "accuracy": "max",
            "accuracy_ci95": "min",
        }
        cls = self.families == ("classify",)
        self.table_metrics = (
            ("time_s", "accuracy", "accuracy_ci95", "n_paired_simplices", "peak_rss_mb")
            if cls
            else ("time_s", "valid", "bottleneck_max", "w1_h2", "void_recovery", "n_paired_simplices", "peak_rss_mb")
        )

    def instances(self, split: str = "dev") -> list[InstanceRef]:
        configs = []
        for fam in self.families:
            if fam == "classify":
                configs.append(
                    (
                        f"classify/cheese/N={self.classify_n}",
                        {
                            "family": fam,
                            "shape": "cheese",
                            "N": self.classify_n,
                            "per_class": self.classify_per_class,
                            "ks": list(self.classify_k),
                        },
                    )
                )
                continue
            shapes, ns = (self.shapes, self.fidelity_n) if fam == "fidelity" else (("cheese",), self.scale_n)
            for shape in shapes:
                for n in ns:
                    p: dict[str, Any] = {"family": fam, "shape": shape, "N": n}
                    if shape == "cheese":
                        p.update(k=self.k, r_lo=self.r_lo, r_hi=self.r_hi)
                    configs.append((f"{fam}/{shape}/N={n}", p))
        return split_instances(TASK_ID, split, configs, self.seeds, N_TEST_SEEDS)

    def make(self, ref: InstanceRef) -> tuple[Any, Any]:
        p = instance_params(ref, TASK_ID)
        fam = check_names(p.get("family"), "family", FAMILIES)[0]
        shape = check_names(p.get("shape"), "shape", SHAPES)[0]
        n = check_ints(p.get("N"), "N", 16)[0]
        if fam == "classify":
            per = check_ints(p.get("per_class", self.classify_per_class), "per_class", 2)[0]
            ks = check_ints(p.get("ks", self.classify_k), "ks", 1)
            clouds, labels = classify_set(ref.seed, n, per, ks)
            problem = PHClassifyProblem(
                clouds=tuple(clouds),
                max_dim=2,
                units="radius",
                family=fam,
                shape="cheese",
                N=n,
                d=3,
                n_clouds=len(clouds),
            )
            return problem, PHClassifyEvaluator(labels, 2, self.features, self.n_splits, int(ref.seed))
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
        disk = ref.split == "dev" and n >= DISK_CACHE_MIN_N
        w1 = self.wasserstein and n <= self.wasserstein_max_n
        return problem, PHEvaluator(key, truth, d - 1, tol, prom, n <= self.reference_max_n, w1, disk)

    def finalize(
        self, metrics: Mapping[str, float] | None, seconds: float | None, status: str, budget: Budget | None = None
    ) -> dict[str, float]:
        """``metrics`` plus ``time_s`` (the solve's seconds if ``status == "ok"``, else NaN) and ``par2_seconds``
        (``time_s`` if also ``valid``, else ``2 × max_seconds`` of ``budget`` or the default budget)."""
        out = dict(metrics or {})
        b = budget if budget is not None and budget.max_seconds is not None else self.default_budget
        ok_run = status == "ok" and seconds is not None and math.isfinite(float(seconds))
        out["time_s"] = float(seconds) if ok_run else math.nan
        ok = ok_run and float(out.get("valid", 0.0) or 0.0) >= 1.0
        out["par2_seconds"] = float(seconds) if ok else 2.0 * float(b.max_seconds)  # type: ignore[arg-type]
        return out

    def report(self, runs: Any) -> str:
        from papergym.envs.tasks.persistent_homology.report import report_table

        return report_table(runs)

    def figures(self, runs: Any, folder: Any) -> list[Any]:
        from papergym.envs.tasks.persistent_homology.report import diagram_figure, time_figure

        return [f for f in (time_figure(runs, folder), diagram_figure(self, runs, folder)) if f is not None]


register_task(TASK_ID, PHTask)
