"""``flood`` numerical core for ``PointCloudPH-v0`` — the Flood complex of Graf, Pellizzoni, Uray, Huber &
Kwitt, *The Flood Complex: Large-Scale Persistent Homology on Millions of Points*, NeurIPS 2025
(arXiv:2509.22432; ``docs/papers/flood.md``; authors' code ``plus-rkwitt/flooder``, MIT). A CPU
numpy/scipy port; the ``flood`` solver (:class:`Flood`, registered at the bottom) wraps :func:`flood_persistence`.

Construction (radius units throughout, never squared)
------------------------------------------------------
``X ⊂ ℝ^d`` (``N`` points), landmarks ``L ⊂ X``, ``Del(L)`` the Delaunay triangulation of ``L``.

* ``δ(y) = min_{x∈X} ‖y − x‖`` (distance to the cloud; 1-Lipschitz).
* ``Flood_r(X, L) = {σ ∈ Del(L) : conv σ ⊆ ⋃_{x∈X} B_r(x)}``, i.e. the filtration value of a simplex is
  ``f(σ) = max_{y ∈ conv σ} δ(y)`` (directed Hausdorff distance from ``conv σ`` to ``X``). ``f`` is monotone
  (``τ ⊆ σ ⇒ conv τ ⊆ conv σ ⇒ f(τ) ≤ f(σ)``) and ``f(v) = 0`` for every landmark ``v ∈ L ⊂ X``.
* With ``L = X`` the Flood and Alpha filtrations have the same persistence diagrams (radius units) [paper];
  individual simplex values differ (an obtuse triangle floods before its circumcentre is reached).

Steps
-----
1. **Landmarks** — exact farthest-point sampling (FPS): ``ℓ_0`` = index 0 (``seed=None``, flooder's
   choice) or drawn uniformly by ``numpy.random.default_rng(seed)`` [design];
   ``ℓ_{i+1} = argmax_{x∈X} min_{j≤i} ‖x − ℓ_j‖`` (ties: the lowest index, ``numpy.argmax``). Brute force
   costs ``O(N·m·d)``; above ``N·m = 2·10⁷`` a pruned blocked variant returns the same indices about 8×
   faster (:func:`_fps_blocked`). Option ``fps="bucket"`` uses flooder's approximate bucket FPS
   (``fpsample.bucket_fps_kdline_sampling``, tree height 5 / 7 / 9 for ``N ≤ 8·10⁴ / ≤ 2·10⁵ / above``,
   start index 0 or the seeded one; ``fpsample`` comes with the ``flooder`` extra) [code].
2. **Delaunay** — ``scipy.spatial.Delaunay`` of the landmarks (Qhull defaults). All faces of the top
   simplices are enumerated, dimension by dimension, with ``numpy.unique``; simplices up to dimension
   ``min(d, max_dim + 1)`` are kept (enough for ``H_0 … H_max_dim``). Degenerate landmark sets (affinely
   dependent, or Qhull dropping a landmark as coplanar) raise ``ValueError``.
3. **Barycentric grid** — ``points_per_edge = p`` (default 8, a CPU default [design]; the authors use 30),
   ``M = p − 1``. The grid on a ``k``-simplex ``σ = [v_0 … v_k]`` is ``{Σ_i (a_i/M) v_i : a ∈ ℕ^{k+1}, Σ a_i = M}``
   (``C(M + k, k)`` points, ``p`` per edge, endpoints included). The grid of a face is exactly the subset of
   grid points whose weights vanish off the face, so neighbouring simplices share the grid on common faces.
   [design] Each grid point is queried **once**: a ``k``-simplex owns only its *relative-interior* grid
   points (all ``a_i ≥ 1``: ``C(M − 1, k)`` points), vertices own themselves (``δ = 0``, not queried).
4. **Distances** — ``scipy.spatial.cKDTree(X).query(Y, workers=workers)``, in batches of at most
   ``batch_points`` query points (default ``2**16``; memory ``O(batch_points · d)`` on top of the tree and the
   complex) [design; flooder batches by top simplices, 256 at a time].
5. **Filtration values** — ``g(σ)`` = max of ``δ`` over the interior grid points of ``σ`` (``−∞`` if none,
   i.e. ``p = 2`` or ``k ≥ M``), then, by increasing dimension,
   ``f̂(σ) = max(g(σ), max_{facets τ ⊂ σ} f̂(τ))``, ``f̂(v) = 0``,
   which equals the max of ``δ`` over the **whole** grid of ``σ`` (boundary included): the faces' samples are a
   subset of the coface's samples, so ``f̂`` is monotone **exactly**, by construction, not by a repair step
   (flooder repairs with ``make_filtration_non_decreasing``; that call is kept as a no-op guard).
6. **Persistence** — ``gudhi.SimplexTree``: ``insert_batch`` dimension by dimension with the values above,
   ``compute_persistence()`` (field ℤ/11, gudhi's default), ``persistence_intervals_in_dimension(k)`` for
   ``k = 0 … max_dim``; returned as ``(n_k, 2)`` float arrays (``death = inf`` for essential classes).

Error bound of the sampling (implemented in :func:`sampling_error_bound`)
--------------------------------------------------------------------------
Claim: for every ``k``-simplex ``σ`` the grid ``G_σ`` has covering radius
``ρ_σ ≤ c_k · diam(σ) / M`` with ``c_k = ⌊(k+1)/2⌋ · ⌈(k+1)/2⌉ / (k + 1)`` (``c_1 = 1/2``, ``c_2 = 2/3``,
``c_3 = 1``), hence ``f(σ) − ρ_σ ≤ f̂(σ) ≤ f(σ)``.

Proof. Let ``y = Σ λ_i v_i`` (``λ`` barycentric). Write ``Mλ_i = n_i + φ_i`` (``n_i ∈ ℕ``, ``φ_i ∈ [0, 1)``);
``Σ φ_i = r ∈ {0 … k}``. Round the ``r`` largest ``φ_i`` up and the others down: ``μ = (n + 1_up)/M`` is a grid
point ``ŷ``. The weights ``a = λ − μ`` sum to 0; with ``s = Σ_{a_i>0} a_i = Σ_{a_i<0} |a_i|``,
``y − ŷ = s (P − Q)`` with ``P, Q ∈ conv σ`` (normalised positive and negative parts), so ``‖y − ŷ‖ ≤ s·diam σ``.
If ``t`` separates the rounded-up from the rounded-down fractions, ``M s = Σ_down φ_i ≤ (k+1−r) t`` and
``M s = Σ_up (1 − φ_i) ≤ r (1 − t)``, so ``M s ≤ max_t min((k+1−r)t, r(1−t)) = r(k+1−r)/(k+1) ≤ c_k``. Since
``δ`` is 1-Lipschitz, ``δ(y) ≤ δ(ŷ) + ρ_σ``, so the sampled max is at most ``ρ_σ`` below the true max (and
never above it: grid points lie in ``conv σ``). ∎ (For ``k = 1`` this is the exact half-spacing.)

Consequently, by the stability theorem for filtrations of one complex, the bottleneck distance between
the sampled and the exact Flood diagrams is at most ``max_σ ρ_σ`` over the simplices used
(dimension ≤ ``max_dim + 1``); with ``L = X`` that bounds the bottleneck distance to the Alpha diagrams
(tested). The bound is conservative: the error is typically far smaller (``δ`` rarely peaks midway
between grid points with slope 1).

Agreement with the authors' package: with ``fps="bucket"`` (flooder's landmarks) and float64 input, the
diagrams equal ``flooder.flood_complex``'s (1.0.1, CPU path) to 1e-6 in bottleneck distance, with the same
number of simplices (tested). Differences: flooder queries the whole grid of every top simplex (boundary
points once per coface), this port each grid point once, in a k-d tree with ``workers`` threads.

Not ported (open): the ``num_rand`` random-sample option, gudhi's ``DelaunayComplex``, the
GPU/Triton kernels with bounding-ball masking.

Tags ([paper], [code], [secondary], [design]): see docs/conventions.md.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np
from scipy.spatial import Delaunay, QhullError, cKDTree

__all__ = [
    "FloodFiltration",
    "farthest_point_sampling",
    "bucket_fps",
    "flood_filtration",
    "flood_persistence",
    "sampling_error_bound",
    "barycentric_grid",
    "filtration_to_simplex_tree",
    "alpha_persistence",
]

DEFAULT_POINTS_PER_EDGE = 8  # [design] CPU default (flooder: 30)
DEFAULT_BATCH_POINTS = 1 << 16  # [design] query points per cKDTree call
DEFAULT_WORKERS = 2  # [design] the 2-core CPU budget


class FloodFiltration(NamedTuple):
    """Flood filtration of a cloud.

    ``landmarks``: (m,) indices into ``points`` (FPS order). ``simplices[k]``: (n_k, k+1) int arrays of
    **point indices** (rows sorted ascending, lexicographically unique), ``k = 0 … top_dim``.
    ``values[k]``: (n_k,) float64 filtration values in radius units. ``n_queries``: number of
    nearest-neighbour queries issued (the work unit of the cost accounting).
    """

    landmarks: np.ndarray
    simplices: list
    values: list
    n_queries: int


# ----------------------------------------------------------------------------- validation
def _check_points(points) -> np.ndarray:
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim != 2:
        raise ValueError(f"points must be a 2-D array (N, d); got ndim={pts.ndim}")
    if pts.shape[0] == 0 or pts.shape[1] == 0:
        raise ValueError(f"points must be non-empty (N, d); got shape {pts.shape}")
    if not np.all(np.isfinite(pts)):
        raise ValueError("points must be finite (found NaN or inf)")
    return np.ascontiguousarray(pts)


def _check_int(name: str, value, lo: int, hi: int | None = None) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer; got {value!r}")
    value = int(value)
    if value < lo or (hi is not None and value > hi):
        rng = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be in {rng}; got {value}")
    return value


# ----------------------------------------------------------------------------- landmarks
def _kdtree(pts: np.ndarray) -> cKDTree:
    """The k-d tree of the cloud: sliding-midpoint splits, no node compaction (half the build time of scipy's
    default at 10⁶ points; queries as fast) [design]."""
    return cKDTree(pts, balanced_tree=False, compact_nodes=False)


def farthest_point_sampling(
    points, k: int, seed: int | None = None, tree: cKDTree | None = None, method: str = "auto"
) -> np.ndarray:
    """Exact farthest-point sampling: ``k`` distinct indices into ``points`` (N, d).

    The first index is 0 if ``seed`` is None, else ``default_rng(seed).integers(N)``; every further index
    maximises the Euclidean distance to the already chosen set (ties: lowest index). Raises ``ValueError``
    if ``k`` exceeds the number of distinct points.

    ``method``: ``"brute"`` updates all ``N`` distances per landmark (``O(N·k·d)``); ``"blocked"`` prunes
    (below); ``"auto"`` (default) picks ``blocked`` once ``N·k ≥ 2·10⁷``. Both return the **same** indices:
    the pruning skips only updates that cannot change a distance and the squared distances are computed with
    the same floating-point operations in the same order. ``tree``: an optional ``cKDTree(points)`` whose
    leaf order (``tree.indices``) the blocked method reuses.
    """
    pts = _check_points(points)
    n = pts.shape[0]
    k = _check_int("k", k, 1, n)
    if method not in ("auto", "brute", "blocked"):
        raise ValueError(f"method must be 'auto', 'brute' or 'blocked'; got {method!r}")
    start = 0 if seed is None else int(np.random.default_rng(seed).integers(n))
    if method == "blocked" or (method == "auto" and n * k >= 20_000_000):
        return _fps_blocked(pts, k, start, tree)
    cols = [np.ascontiguousarray(pts[:, j]) for j in range(pts.shape[1])]  # column-wise: no (N, d) temps
    idx = np.empty(k, dtype=np.int64)
    idx[0] = start
    dist2 = np.full(n, np.inf)
    buf = np.empty(n)
    tmp = np.empty(n)
    for i in range(1, k):
        c = pts[idx[i - 1]]
        np.subtract(cols[0], c[0], out=buf)
        np.multiply(buf, buf, out=buf)
        for j in range(1, len(cols)):
            np.subtract(cols[j], c[j], out=tmp)
            np.multiply(tmp, tmp, out=tmp)
            buf += tmp
        np.minimum(dist2, buf, out=dist2)
        nxt = int(np.argmax(dist2))
        if dist2[nxt] <= 0.0:
            raise ValueError(f"k={k} exceeds the number of distinct points ({i})")
        idx[i] = nxt
    return idx


FPS_BLOCK = 256  # [design] points per block of the pruned FPS


def _fps_blocked(pts: np.ndarray, k: int, start: int, tree: cKDTree | None) -> np.ndarray:
    """Pruned exact FPS [design; a bounding-box variant of the bucket idea of fpsample / flooder].

    The points are laid out in k-d-tree leaf order and cut into blocks of ``FPS_BLOCK`` consecutive
    (spatially close) points, each with its bounding box and the maximum ``b_max`` of its current squared
    distances ``D(x)`` to the chosen set. A new landmark ``c`` can lower ``D(x)`` only if
    ``‖x − c‖² < D(x) ≤ b_max``; ``‖x − c‖² ≥ dist²(c, box)`` (also in floating point: subtraction,
    squaring of non-negatives and addition are monotone), so blocks with ``dist²(c, box) ≥ b_max`` are
    skipped. The next landmark is the lowest original index attaining ``max b_max``. Late landmarks touch
    only the few blocks around them: about 8× faster than brute force at 10⁶ points and 1,000 landmarks.
    """
    n, d = pts.shape
    order = np.asarray((tree if tree is not None else _kdtree(pts)).indices, dtype=np.int64)
    bsz = FPS_BLOCK
    nb = -(-n // bsz)
    pad = nb * bsz - n
    order_p = np.concatenate([order, np.repeat(order[-1:], pad)]) if pad else order
    blk = np.ascontiguousarray(pts[order_p].T.reshape(d, nb, bsz))  # (d, nb, B)
    lo, hi = blk.min(axis=2), blk.max(axis=2)  # (d, nb) bounding boxes
    dist2 = np.full((nb, bsz), np.inf)
    if pad:
        dist2.reshape(-1)[n:] = -np.inf  # padding never wins the argmax
    bmax = np.full(nb, np.inf)
    idx = np.empty(k, dtype=np.int64)
    idx[0] = start
    for i in range(1, k):
        c = pts[idx[i - 1]]
        t = np.maximum(np.maximum(lo[0] - c[0], c[0] - hi[0]), 0.0)
        box2 = t * t
        for j in range(1, d):
            t = np.maximum(np.maximum(lo[j] - c[j], c[j] - hi[j]), 0.0)
            box2 += t * t
        cand = np.flatnonzero(box2 < bmax)
        sub = blk[:, cand, :]
        e = sub[0] - c[0]
        dd = e * e  # the same operations, in the same order, as the brute-force update
        for j in range(1, d):
            e = sub[j] - c[j]
            dd += e * e
        nd = np.minimum(dist2[cand], dd)
        dist2[cand] = nd
        bmax[cand] = nd.max(axis=1)
        g = bmax.max()
        if g <= 0.0:
            raise ValueError(f"k={k} exceeds the number of distinct points ({i})")
        hits = np.flatnonzero(bmax == g)
        pos = np.concatenate([h * bsz + np.flatnonzero(dist2[h] == g) for h in hits])
        idx[i] = order_p[pos].min()
    return idx


def bucket_fps(points, k: int, seed: int | None = None) -> np.ndarray:
    """flooder's landmark choice: approximate bucket FPS (``fpsample.bucket_fps_kdline_sampling``) with its
    tree-height rule (module docstring); ``start_idx`` 0 (``seed=None``) or ``default_rng(seed).integers(N)``,
    passed as flooder passes it (with fpsample 1.0.2 the returned set need not contain that index)."""
    try:
        import fpsample
    except ImportError as exc:
        raise ImportError("fps='bucket' needs the fpsample package: pip install 'papergym[flooder]'") from exc
    pts = _check_points(points)
    n = pts.shape[0]
    k = _check_int("k", k, 1, n)
    start = 0 if seed is None else int(np.random.default_rng(seed).integers(n))
    h = 9 if n > 200_000 else 7 if n > 80_000 else 5
    idx = np.asarray(fpsample.bucket_fps_kdline_sampling(pts, k, h=h, start_idx=start), dtype=np.int64)
    if np.unique(idx).size != k:
        raise ValueError(f"k={k} exceeds the number of distinct points")
    return idx


# ----------------------------------------------------------------------------- grid and bound
def barycentric_grid(k: int, points_per_edge: int, interior: bool = False) -> np.ndarray:
    """Barycentric weights of the grid on a ``k``-simplex: rows ``a/M``, ``a ∈ ℕ^{k+1}``, ``Σa = M = p − 1``.

    ``interior=True`` keeps only rows with all ``a_i ≥ 1`` (the simplex's relative interior). Returns
    ``(n_w, k+1)`` float64 (``n_w = C(M+k, k)``, resp. ``C(M−1, k)``; possibly 0 rows).
    """
    k = _check_int("k", k, 0)
    m = _check_int("points_per_edge", points_per_edge, 2) - 1
    total = m - (k + 1) if interior else m
    if total < 0:
        return np.zeros((0, k + 1))
    # stars and bars: compositions of `total` into k+1 non-negative parts
    rows = []
    for bars in itertools.combinations(range(total + k), k):
        edges = (-1,) + bars + (total + k,)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(k + 1)])
    a = np.asarray(rows, dtype=np.float64).reshape(-1, k + 1)
    if interior:
        a += 1.0
    return a / m


def _grid_constant(k: int) -> float:
    return ((k + 1) // 2) * ((k + 2) // 2) / (k + 1)


def sampling_error_bound(points, simplices, points_per_edge: int) -> np.ndarray:
    """Per-simplex bound ``ρ_σ ≤ c_k diam(σ)/(p − 1)`` on ``f(σ) − f̂(σ)`` (module docstring).

    ``simplices``: (n, k+1) point indices. Returns (n,) float64 (0 for vertices).
    """
    pts = np.asarray(points, dtype=np.float64)
    s = np.asarray(simplices)
    k = s.shape[1] - 1
    m = _check_int("points_per_edge", points_per_edge, 2) - 1
    if k == 0:
        return np.zeros(s.shape[0])
    diam = np.zeros(s.shape[0])
    for i, j in itertools.combinations(range(k + 1), 2):
        diam = np.maximum(diam, np.linalg.norm(pts[s[:, i]] - pts[s[:, j]], axis=1))
    return _grid_constant(k) * diam / m


# ----------------------------------------------------------------------------- complex
def _faces_down(top: np.ndarray):
    """All faces of the (sorted-row) top simplices: lists ``simp[k]`` and ``facet_idx[k]`` ((n_k, k+1) indices
    of the facets of each k-simplex in ``simp[k-1]``; facet ``i`` drops vertex ``i``)."""
    top_dim = top.shape[1] - 1
    simp = [None] * (top_dim + 1)
    facet_idx = [None] * (top_dim + 1)
    simp[top_dim] = top
    for k in range(top_dim, 0, -1):
        s = simp[k]
        fac = np.stack([np.delete(s, i, axis=1) for i in range(k + 1)], axis=1)  # (n_k, k+1, k)
        uniq, inv = np.unique(fac.reshape(-1, k), axis=0, return_inverse=True)
        simp[k - 1] = uniq
        facet_idx[k] = inv.reshape(-1, k + 1)
    return simp, facet_idx


def _max_delta(
    tree: cKDTree, coords: np.ndarray, simp: np.ndarray, weights: np.ndarray, batch_points: int, workers: int
) -> np.ndarray:
    """``max`` of ``δ`` over ``weights @ coords[simp[s]]`` for every simplex ``s`` (batched)."""
    n, nw = simp.shape[0], weights.shape[0]
    out = np.full(n, -np.inf)
    if n == 0 or nw == 0:
        return out
    per = max(1, batch_points // nw)
    for lo in range(0, n, per):
        hi = min(n, lo + per)
        verts = coords[simp[lo:hi]]  # (b, k+1, d)
        y = np.einsum("wk,bkd->bwd", weights, verts).reshape(-1, coords.shape[1])
        dist, _ = tree.query(y, k=1, workers=workers)
        out[lo:hi] = dist.reshape(hi - lo, nw).max(axis=1)
    return out


def flood_filtration(
    points,
    landmarks,
    points_per_edge: int = DEFAULT_POINTS_PER_EDGE,
    max_dim: int | None = None,
    seed: int | None = None,
    batch_points: int = DEFAULT_BATCH_POINTS,
    workers: int = DEFAULT_WORKERS,
    tree: cKDTree | None = None,
    fps: str = "exact",
) -> FloodFiltration:
    """Sampled Flood filtration of ``points`` (N, d) on the Delaunay triangulation of its landmarks.

    ``landmarks``: an int (number of FPS landmarks, first one chosen by ``seed``; ``fps`` = ``"exact"`` or
    ``"bucket"``) or an array of distinct point indices. ``max_dim``: highest homology dimension needed (default ``d − 1``); simplices up to
    dimension ``min(d, max_dim + 1)`` are returned. ``tree``: an optional prebuilt ``cKDTree(points)``.
    Values are ``f̂(σ)`` = max of the distance to ``points`` over the barycentric grid on ``σ`` (module
    docstring), monotone over faces, 0 on vertices, within ``sampling_error_bound`` below the exact value.
    """
    pts = _check_points(points)
    n, d = pts.shape
    p = _check_int("points_per_edge", points_per_edge, 2)
    max_dim = d - 1 if max_dim is None else _check_int("max_dim", max_dim, 0)
    batch_points = _check_int("batch_points", batch_points, 1)
    if fps not in ("exact", "bucket"):
        raise ValueError(f"fps must be 'exact' or 'bucket'; got {fps!r}")
    if isinstance(landmarks, (int, np.integer)) and not isinstance(landmarks, (bool, np.bool_)):
        m = _check_int("n_landmarks", landmarks, d + 1, n)
        if fps == "bucket":
            lidx = bucket_fps(pts, m, seed=seed)
        else:
            if tree is None:
                tree = _kdtree(pts)
            lidx = farthest_point_sampling(pts, m, seed=seed, tree=tree)
    else:
        lidx = np.asarray(landmarks)
        if lidx.ndim != 1 or not np.issubdtype(lidx.dtype, np.integer):
            raise ValueError("landmarks must be an int or a 1-D integer index array")
        if lidx.size < d + 1:
            raise ValueError(f"landmarks must hold at least d+1={d + 1} indices; got {lidx.size}")
        if lidx.min() < 0 or lidx.max() >= n or np.unique(lidx).size != lidx.size:
            raise ValueError("landmarks must be distinct indices in [0, N)")
        lidx = lidx.astype(np.int64)
    lpts = pts[lidx]
    if d == 1:
        order = np.argsort(lpts[:, 0], kind="stable")
        if np.any(np.diff(lpts[order, 0]) == 0):
            raise ValueError("landmarks must be distinct points")
        top_local = np.stack([order[:-1], order[1:]], axis=1)
    else:
        try:
            tri = Delaunay(lpts)
        except QhullError as exc:
            raise ValueError(f"landmarks are degenerate (Qhull failed: {str(exc).splitlines()[0]})") from exc
        if tri.coplanar.size:
            raise ValueError(f"landmarks: Qhull dropped {len(tri.coplanar)} (near-)duplicate landmark(s)")
        top_local = tri.simplices
    top = np.sort(lidx[top_local], axis=1)  # global point indices, sorted rows
    top = np.unique(top, axis=0)
    simp, facet_idx = _faces_down(top)
    top_dim = min(d, max_dim + 1)
    simp = simp[: top_dim + 1]
    if tree is None:
        tree = _kdtree(pts)
    values = [np.zeros(simp[0].shape[0])]
    n_queries = 0
    for k in range(1, top_dim + 1):
        w = barycentric_grid(k, p, interior=True)
        g = _max_delta(tree, pts, simp[k], w, batch_points, workers)
        n_queries += simp[k].shape[0] * w.shape[0]
        f = np.maximum(g, values[k - 1][facet_idx[k]].max(axis=1))
        values.append(f)
    return FloodFiltration(lidx, simp, values, n_queries)


# ----------------------------------------------------------------------------- persistence
def filtration_to_simplex_tree(filt: FloodFiltration):
    """A ``gudhi.SimplexTree`` holding the filtration (inserted by increasing dimension)."""
    import gudhi

    st = gudhi.SimplexTree()
    for s, v in zip(filt.simplices, filt.values):
        st.insert_batch(np.ascontiguousarray(s.T, dtype=np.int32), np.ascontiguousarray(v))
    st.make_filtration_non_decreasing()  # no-op: the sampled values are monotone by construction
    return st


def flood_persistence(
    points,
    n_landmarks=1000,
    max_dim: int | None = None,
    points_per_edge: int = DEFAULT_POINTS_PER_EDGE,
    seed: int | None = None,
    batch_points: int = DEFAULT_BATCH_POINTS,
    workers: int = DEFAULT_WORKERS,
    return_filtration: bool = False,
    fps: str = "exact",
):
    """Flood persistence diagrams ``[D_0, …, D_max_dim]``, each an ``(n_k, 2)`` float64 array (birth, death)
    in radius units (``death = inf`` for essential classes). ``n_landmarks``: int (FPS) or index array;
    ``max_dim`` defaults to ``d − 1``. With ``return_filtration=True`` returns ``(diagrams, filtration)``.
    Dimensions ``≥ d`` are empty (the complex triangulates a convex set).
    """
    pts = _check_points(points)
    d = pts.shape[1]
    if max_dim is None:
        max_dim = d - 1
    max_dim = _check_int("max_dim", max_dim, 0)
    if isinstance(n_landmarks, (int, np.integer)) and not isinstance(n_landmarks, (bool, np.bool_)):
        _check_int("n_landmarks", n_landmarks, d + 1, pts.shape[0])
    filt = flood_filtration(
        pts,
        n_landmarks,
        points_per_edge=points_per_edge,
        max_dim=max_dim,
        seed=seed,
        batch_points=batch_points,
        workers=workers,
        fps=fps,
    )
    st = filtration_to_simplex_tree(filt)
    st.compute_persistence(persistence_dim_max=True)
    dgms = []
    for k in range(max_dim + 1):
        iv = np.asarray(st.persistence_intervals_in_dimension(k), dtype=np.float64).reshape(-1, 2)
        dgms.append(iv)
    return (dgms, filt) if return_filtration else dgms


def alpha_persistence(points, max_dim: int | None = None) -> list:
    """Reference: gudhi Alpha diagrams in radius units (``output_squared_values=False``), for tests."""
    import gudhi

    pts = _check_points(points)
    max_dim = pts.shape[1] - 1 if max_dim is None else max_dim
    st = gudhi.AlphaComplex(points=pts).create_simplex_tree(output_squared_values=False)
    st.compute_persistence(persistence_dim_max=True)
    return [
        np.asarray(st.persistence_intervals_in_dimension(k), dtype=np.float64).reshape(-1, 2)
        for k in range(max_dim + 1)
    ]


# ----------------------------------------------------------------------------- solver (PointCloudPH-v0)
class Flood:
    """The ``flood`` solver of ``PointCloudPH-v0``: :func:`flood_persistence` on every cloud of the problem up
    to ``problem.max_dim``; returns ``{"diagrams": …, "meta": {"n_simplices", "n_landmarks", "n_queries"}}``
    (:func:`~papergym.envs.tasks.persistent_homology.solve_clouds`).

    ``n_landmarks``: default 1,000, or 300 on the ``classify`` family's clouds [design], capped at ``N``.
    FPS starts at index 0 when ``seed`` is None, else at ``default_rng(seed).integers(N)`` (the runner passes
    its solver seed). ``fps``: ``"exact"`` (default) or ``"bucket"`` (flooder's). Work unit: one NN query.
    """

    def __init__(
        self,
        *,
        seed: int | None = None,
        n_landmarks: int | None = None,
        points_per_edge: int = DEFAULT_POINTS_PER_EDGE,
        workers: int = DEFAULT_WORKERS,
        fps: str = "exact",
    ):
        self.seed = seed
        self.n_landmarks = None if n_landmarks is None else _check_int("n_landmarks", n_landmarks, 1)
        self.points_per_edge = _check_int("points_per_edge", points_per_edge, 2)
        self.workers = _check_int("workers", workers, -1)
        if fps not in ("exact", "bucket"):
            raise ValueError(f"fps must be 'exact' or 'bucket'; got {fps!r}")
        self.fps = fps

    def solve(self, problem, budget, report):
        from papergym.envs.tasks.persistent_homology import solve_clouds

        n_lm = self.n_landmarks or (300 if getattr(problem, "family", "") == "classify" else 1000)
        queries = []

        def one(pts):
            dgms, filt = flood_persistence(
                pts,
                n_landmarks=min(n_lm, pts.shape[0]),
                max_dim=int(problem.max_dim),
                points_per_edge=self.points_per_edge,
                seed=self.seed,
                workers=self.workers,
                return_filtration=True,
                fps=self.fps,
            )
            queries.append(filt.n_queries)
            return dgms, {
                "n_simplices": int(sum(len(s) for s in filt.simplices)),
                "n_landmarks": int(len(filt.landmarks)),
                "n_queries": int(filt.n_queries),
            }

        sol = solve_clouds(problem, budget, one)
        report(sol, iteration=1, work=int(sum(queries)))
        return sol


def _flood(*, seed=None, **hp):
    return Flood(seed=seed, **hp)


def _register() -> None:
    from papergym.agents.base import register_solver

    register_solver(
        "flood",
        _flood,
        tasks=["PointCloudPH-v0"],
        role="paper",
        description="Flood complex (Graf et al. 2025): Delaunay of FPS landmarks, filtration = max "
        "distance to the cloud on a barycentric grid; CPU numpy/scipy port",
        defaults={
            "n_landmarks": None,
            "points_per_edge": DEFAULT_POINTS_PER_EDGE,
            "workers": DEFAULT_WORKERS,
            "fps": "exact",
        },
        requires=("gudhi",),
    )


_register()
