"""Tests of the ``flood`` numerical core (``agents/solvers/flood.py``; ``docs/papers/flood.md``).

Known answers: closed-form values on an equilateral triangle and a regular tetrahedron, the grid sizes,
the covering-radius bound of the barycentric grid (brute force), Flood = Alpha diagrams with all points as
landmarks (within the implemented sampling bound, and converging as the grid refines), monotone values,
a noisy circle (one H1 bar dying near the radius), a sphere (one H2 bar), a torus (β1 = 2, β2 = 1),
exact farthest-point sampling against brute force, and input validation.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from papergym_tests import require  # the helper of tests/conftest.py

gudhi = require("gudhi", "tda")

from papergym.agents.solvers.flood import (
    alpha_persistence,
    barycentric_grid,
    farthest_point_sampling,
    flood_filtration,
    flood_persistence,
    sampling_error_bound,
)


def _finite(dgm):
    return dgm[np.isfinite(dgm[:, 1])]


def _n_inf(dgm):
    return int(np.isinf(dgm[:, 1]).sum())


def _prominent(dgm, thr):
    """Finite bars with persistence > thr (essential bars are counted by ``_n_inf``)."""
    fin = _finite(dgm)
    return int(((fin[:, 1] - fin[:, 0]) > thr).sum())


def _max_bound(points, filt, p):
    return max(sampling_error_bound(points, s, p).max() for s in filt.simplices[1:])


# ------------------------------------------------------------------------------- closed forms
def test_equilateral_triangle_values():
    x = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, math.sqrt(3) / 2]])
    f = flood_filtration(x, 3, points_per_edge=7)  # M = 6: midpoints and centroid on the grid
    np.testing.assert_array_equal(f.values[0], 0.0)
    np.testing.assert_allclose(f.values[1], 0.5, atol=1e-12)  # half the edge
    np.testing.assert_allclose(f.values[2], 1 / math.sqrt(3), atol=1e-12)  # circumradius (centroid)
    assert f.n_queries == 3 * 5 + 10  # interior grid points: 5 per edge, C(5, 2) in the triangle


def test_regular_tetrahedron_values():
    x = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], dtype=float)  # edge 2√2
    f = flood_filtration(x, 4, points_per_edge=13)  # M = 12: divisible by 2, 3, 4
    np.testing.assert_allclose(f.values[1], math.sqrt(2), atol=1e-12)
    np.testing.assert_allclose(f.values[2], 2 * math.sqrt(2) / math.sqrt(3), atol=1e-12)
    np.testing.assert_allclose(f.values[3], math.sqrt(3), atol=1e-12)  # centre to vertex


def test_barycentric_grid_sizes_and_faces():
    for k, p in [(1, 8), (2, 8), (3, 8), (3, 30), (2, 2)]:
        m = p - 1
        full, inner = barycentric_grid(k, p), barycentric_grid(k, p, interior=True)
        assert full.shape == (math.comb(m + k, k), k + 1)
        assert inner.shape == (math.comb(m - 1, k) if m >= k + 1 else 0, k + 1)
        np.testing.assert_allclose(full.sum(axis=1), 1.0)
        assert np.all(full >= 0) and np.all(inner > 0)
        assert len({tuple(np.round(r * m).astype(int)) for r in full}) == len(full)
    assert barycentric_grid(3, 30).shape[0] == 4960  # C(29 + 3, 3) grid points


def test_covering_radius_bound_brute_force():
    rng = np.random.default_rng(0)
    for k, p in [(1, 5), (2, 4), (2, 7), (3, 4), (3, 6)]:
        verts = rng.standard_normal((k + 1, 3))
        grid = barycentric_grid(k, p) @ verts
        lam = rng.dirichlet(np.ones(k + 1), size=20000)
        lam = np.vstack([lam, barycentric_grid(k, 6 * (p - 1) + 1)])  # fine grid: worst cases included
        y = lam @ verts
        rho = np.sqrt(((y[:, None, :] - grid[None]) ** 2).sum(-1)).min(axis=1).max()
        bound = sampling_error_bound(verts, np.arange(k + 1)[None], p)[0]
        assert rho <= bound + 1e-12, (k, p, rho, bound)


# ------------------------------------------------------------------------------- Flood = Alpha
@pytest.mark.parametrize("d,n,seed", [(2, 150, 0), (2, 80, 1), (3, 120, 2), (3, 60, 3)])
def test_all_landmarks_match_alpha(d, n, seed):
    x = np.random.default_rng(seed).random((n, d))
    ref = alpha_persistence(x)
    errs = []
    for p in (5, 33):
        dgms, filt = flood_persistence(x, n, points_per_edge=p, return_filtration=True)
        assert len(filt.landmarks) == n and len(dgms) == d
        bound = _max_bound(x, filt, p)
        err = 0.0
        for k in range(d):
            assert _n_inf(dgms[k]) == _n_inf(ref[k]) == (1 if k == 0 else 0)
            b = gudhi.bottleneck_distance(_finite(dgms[k]), _finite(ref[k]))
            assert b <= bound + 1e-9, (k, p, b, bound)
            err = max(err, b)
        errs.append(err)
    assert errs[1] < 0.5 * errs[0]  # converges as the grid refines (bound ∝ 1/(p − 1))
    assert errs[1] < 0.01


def test_monotone_and_vertices_zero():
    rng = np.random.default_rng(4)
    x = rng.random((3000, 3))
    filt = flood_filtration(x, 200, points_per_edge=6, seed=1)
    np.testing.assert_array_equal(filt.values[0], 0.0)
    assert len(filt.simplices) == 4
    for k in range(1, 4):
        s, v = filt.simplices[k], filt.values[k]
        assert np.all(np.isfinite(v)) and np.all(v > 0)
        lookup = {tuple(r): val for r, val in zip(filt.simplices[k - 1].tolist(), filt.values[k - 1])}
        for i in range(k + 1):
            faces = np.delete(s, i, axis=1)
            fv = np.array([lookup[tuple(r)] for r in faces.tolist()])
            assert np.all(fv <= v)
    # every value is a true lower bound, within the sampling bound of a much finer grid
    fine = flood_filtration(x, filt.landmarks, points_per_edge=31)
    for k in range(1, 4):
        assert np.all(fine.simplices[k] == filt.simplices[k])
        gap = fine.values[k] - filt.values[k]
        assert np.all(gap >= -1e-12)
        assert np.all(gap <= sampling_error_bound(x, filt.simplices[k], 6) + 1e-12)


def test_max_dim_truncates_complex():
    x = np.random.default_rng(5).random((500, 3))
    dgms, filt = flood_persistence(x, 50, max_dim=0, return_filtration=True)
    assert len(dgms) == 1 and len(filt.simplices) == 2 and _n_inf(dgms[0]) == 1
    dgms = flood_persistence(x[:, :2], 50, max_dim=2)  # H2 of a planar complex is empty
    assert len(dgms) == 3 and dgms[2].shape == (0, 2)


def test_batching_does_not_change_values():
    x = np.random.default_rng(6).random((2000, 3))
    a = flood_filtration(x, 100, points_per_edge=6, batch_points=1 << 16)
    b = flood_filtration(x, 100, points_per_edge=6, batch_points=7, workers=1)
    for va, vb in zip(a.values, b.values):
        np.testing.assert_array_equal(va, vb)


@pytest.mark.parametrize(
    ("d", "n", "n_lm", "ppe", "cloud"),
    [
        (3, 20_000, 120, 30, "cube"),
        (3, 8_000, 60, 17, "sphere"),
        (2, 5_000, 80, 40, "cube"),
        (3, 6_000, 50, 30, "clusters"),
        (4, 3_000, 40, 12, "cube"),
    ],
)
def test_pruning_gives_the_same_values_with_fewer_queries(d, n, n_lm, ppe, cloud):
    # The Lipschitz pruning skips only grid points whose distance provably cannot raise the maximum, so every
    # filtration value must equal the unpruned one bit for bit, on uniform, surface and clustered clouds.
    rng = np.random.default_rng(d * 1000 + ppe)
    if cloud == "sphere":
        x = rng.normal(size=(n, d))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
    elif cloud == "clusters":
        x = np.concatenate([c + 0.02 * rng.normal(size=(n // 5, d)) for c in rng.random((5, d))])
        x = np.concatenate([x, rng.random((n // 10, d))])  # sparse background between the clusters
    else:
        x = rng.random((n, d))
    a = flood_filtration(x, n_lm, points_per_edge=ppe, prune=True, batch_points=1 << 12)
    b = flood_filtration(x, n_lm, points_per_edge=ppe, prune=False)
    for va, vb in zip(a.values, b.values, strict=True):
        np.testing.assert_array_equal(va, vb)
    assert a.n_queries < b.n_queries / 2  # about 8x fewer at 30 points per edge in 3-D


def test_pruning_plan_covers_the_interior_grid():
    from papergym.agents.solvers.flood import _pruning_plan, barycentric_grid, coarse_stride

    for k, p in [(1, 30), (2, 30), (3, 30), (3, 9), (2, 100)]:
        w, coarse, fine, nbr = _pruning_plan(k, p)
        np.testing.assert_array_equal(w, barycentric_grid(k, p, interior=True))
        assert np.array_equal(np.sort(np.concatenate([coarse, fine])), np.arange(w.shape[0]))
        a = np.rint(w * (p - 1)).astype(int)
        s = coarse_stride(p)
        for f in range(0, fine.size, max(1, fine.size // 50)):  # neighbours are coarse points at most s away
            nb = nbr[f][nbr[f] >= 0]
            assert nb.size and np.abs(a[coarse[nb]] - a[fine[f]]).max() <= s


# ------------------------------------------------------------------------------- shapes
def test_noisy_circle_one_prominent_h1():
    rng = np.random.default_rng(7)
    th = rng.uniform(0, 2 * np.pi, 400)
    x = np.c_[np.cos(th), np.sin(th)] + 0.02 * rng.standard_normal((400, 2))
    p = 25
    dgms, filt = flood_persistence(x, 100, points_per_edge=p, seed=0, return_filtration=True)
    h1 = dgms[1]
    assert _prominent(h1, 0.5) == 1 and _prominent(h1, 0.1) == 1
    birth, death = h1[np.argmax(np.where(np.isfinite(h1[:, 1]), h1[:, 1] - h1[:, 0], -1))]
    assert birth < 0.1  # landmark spacing 2π/100 ≈ 0.063 → birth ≈ half of it
    bound = _max_bound(x, filt, p)
    assert 1.0 - 0.06 - bound <= death <= 1.0 + 0.06  # the centre is ≈ 1 from the cloud
    assert death > 0.9
    assert _n_inf(dgms[0]) == 1 and _prominent(dgms[0], 0.1) == 0


def test_sphere_one_prominent_h2():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2000, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x += 0.01 * rng.standard_normal(x.shape)
    dgms = flood_persistence(x, 300, points_per_edge=13, seed=0)
    assert _prominent(dgms[1], 0.3) == 0 and _prominent(dgms[2], 0.3) == 1
    assert _prominent(dgms[0], 0.3) == 0
    h2 = dgms[2][np.argmax(dgms[2][:, 1] - dgms[2][:, 0])]
    assert h2[0] < 0.2 and 0.85 <= h2[1] <= 1.05


def test_torus_betti_numbers():
    rng = np.random.default_rng(9)
    chunks, n = [], 0
    while n < 4000:  # area-uniform: accept with probability (1 + 0.4 cos φ)/1.4
        u = rng.uniform(0, 2 * np.pi, (8000, 2))
        u = u[rng.random(8000) < (1 + 0.4 * np.cos(u[:, 1])) / 1.4]
        chunks.append(u)
        n += len(u)
    th, ph = np.concatenate(chunks)[:4000].T
    x = np.c_[(1 + 0.4 * np.cos(ph)) * np.cos(th), (1 + 0.4 * np.cos(ph)) * np.sin(th), 0.4 * np.sin(ph)]
    x += 0.02 * rng.standard_normal(x.shape)
    dgms = flood_persistence(x, 1000, points_per_edge=8, seed=0)
    thr = 0.5 * 0.4  # the task's prominence threshold (r_lo → minor radius)
    assert [_prominent(d, thr) for d in dgms] == [0, 2, 1]
    assert [_n_inf(d) for d in dgms] == [1, 0, 0]


# ------------------------------------------------------------------------------- FPS
def _fps_brute(x, k, start):
    idx = [start]
    for _ in range(1, k):
        dmin = np.min(np.linalg.norm(x[:, None, :] - x[idx][None], axis=-1), axis=1)
        idx.append(int(np.argmax(dmin)))
    return np.array(idx)


@pytest.mark.parametrize("d", [1, 2, 3, 5])
def test_fps_matches_brute_force(d):
    x = np.random.default_rng(10 + d).standard_normal((300, d))
    for seed in (None, 0, 123):
        idx = farthest_point_sampling(x, 40, seed=seed)
        start = 0 if seed is None else int(np.random.default_rng(seed).integers(300))
        assert idx[0] == start
        np.testing.assert_array_equal(idx, _fps_brute(x, 40, start))
        np.testing.assert_array_equal(idx, farthest_point_sampling(x, 40, seed=seed))  # deterministic
        assert len(set(idx.tolist())) == 40
    # the covering radius is non-increasing along the sequence
    idx = farthest_point_sampling(x, 40)
    dm = [np.min(np.linalg.norm(x[idx[:i]][None] - x[idx[i]][None, None], axis=-1)) for i in range(1, 40)]
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(dm))


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_blocked_fps_equals_brute_force(d):
    """The pruned blocked FPS returns exactly the brute-force sequence (same ties, same floating point)."""
    rng = np.random.default_rng(20 + d)
    for x in (rng.standard_normal((3000, d)), rng.random((2500, d)) ** 3):
        for seed in (None, 5):
            np.testing.assert_array_equal(
                farthest_point_sampling(x, 200, seed=seed, method="blocked"),
                farthest_point_sampling(x, 200, seed=seed, method="brute"),
            )


def test_blocked_fps_ties_and_duplicates():
    # an integer grid has many equal distances: ties must go to the lowest index, as numpy.argmax does
    g = np.stack(np.meshgrid(np.arange(12.0), np.arange(12.0), np.arange(6.0), indexing="ij"), -1).reshape(-1, 3)
    x = np.concatenate([g, g[:100]])  # duplicates too
    perm = np.random.default_rng(3).permutation(len(x))
    x = x[perm]
    for k in (50, 864):  # 864 = the number of distinct points
        np.testing.assert_array_equal(
            farthest_point_sampling(x, k, method="blocked"), farthest_point_sampling(x, k, method="brute")
        )
    with pytest.raises(ValueError, match="distinct"):
        farthest_point_sampling(x, 865, method="blocked")
    with pytest.raises(ValueError, match="method"):
        farthest_point_sampling(x, 5, method="quick")


def test_bucket_fps_option():
    fpsample = require("fpsample", "tda")
    assert fpsample is not None
    from papergym.agents.solvers.flood import bucket_fps

    x = np.random.default_rng(4).random((5000, 3))
    idx = bucket_fps(x, 100)
    assert len(np.unique(idx)) == 100 and idx.min() >= 0 and idx.max() < 5000
    # exact FPS is a 2-approximation of the optimal covering radius, so the two radii are within a factor 2
    from scipy.spatial import cKDTree

    exact = farthest_point_sampling(x, 100)
    cov = [cKDTree(x[i]).query(x)[0].max() for i in (idx, exact)]
    assert cov[1] <= 2 * cov[0] and cov[0] <= 2 * cov[1]
    f = flood_filtration(x, 100, fps="bucket")
    np.testing.assert_array_equal(f.landmarks, idx)
    with pytest.raises(ValueError, match="fps"):
        flood_filtration(x, 100, fps="random")


def test_fps_seed_changes_start_and_first_landmark_in_flood():
    x = np.random.default_rng(11).random((500, 2))
    a, b = farthest_point_sampling(x, 10, seed=1), farthest_point_sampling(x, 10, seed=2)
    assert a[0] != b[0]
    f = flood_filtration(x, 10, seed=1)
    np.testing.assert_array_equal(f.landmarks, a)


# ------------------------------------------------------------------------------- validation
def test_bad_inputs_raise():
    x = np.random.default_rng(12).random((50, 3))
    bad = x.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="points"):
        flood_persistence(bad, 10)
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match="points"):
        farthest_point_sampling(bad, 10)
    with pytest.raises(ValueError, match="points"):
        flood_persistence(x[:, 0], 10)  # ndim 1
    with pytest.raises(ValueError, match="points"):
        flood_persistence(x[None], 10)  # ndim 3
    with pytest.raises(ValueError, match="n_landmarks"):
        flood_persistence(x, 51)
    with pytest.raises(ValueError, match="n_landmarks"):
        flood_persistence(x, 3)  # < d + 1
    with pytest.raises(ValueError, match="n_landmarks"):
        flood_filtration(x, 2)
    with pytest.raises(ValueError, match="k"):
        farthest_point_sampling(x, 0)
    with pytest.raises(ValueError, match="points_per_edge"):
        flood_persistence(x, 10, points_per_edge=1)
    with pytest.raises(ValueError, match="max_dim"):
        flood_persistence(x, 10, max_dim=-1)
    with pytest.raises(ValueError, match="landmarks"):
        flood_filtration(x, np.array([0, 1, 2]))  # < d + 1 indices
    with pytest.raises(ValueError, match="landmarks"):
        flood_filtration(x, np.array([0, 1, 2, 2]))  # repeated
    with pytest.raises(ValueError, match="landmarks"):
        flood_filtration(np.c_[x[:, :2], np.zeros(50)], 10)  # coplanar landmarks
    dup = np.vstack([x[:5], x[:5]])
    with pytest.raises(ValueError, match="k=6"):
        farthest_point_sampling(dup, 6)  # only 5 distinct points
