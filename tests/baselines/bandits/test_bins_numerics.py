"""Shared grid numerics of the bin-based baselines (baselines/bandits/bins.py): known answers."""

import math

import numpy as np
import pytest

from papergym.baselines.bandits.bins import (
    bin_index,
    binning_bins,
    cell_midpoints,
    int_root_ceil,
    int_root_floor,
    inverse_cdf,
    midpoints,
    sliding_bins,
)


def test_integer_roots_exact_at_perfect_powers():
    assert int_root_floor(27, 3) == 3
    assert int_root_floor(26.999, 3) == 2
    assert int_root_floor(64, 3) == 4 and int_root_floor(63.9, 3) == 3
    assert int_root_ceil(32768, 3) == 32 and int_root_ceil(32769, 3) == 33
    assert int_root_ceil(1, 4) == 1 and int_root_floor(0.5, 3) == 0
    rng = np.random.default_rng(0)
    for x in rng.uniform(0, 1e6, 200):
        for p in (3, 4, 5):
            k = int_root_floor(x, p)
            assert k**p <= x < (k + 1) ** p
            k = int_root_ceil(x, p)
            assert (k - 1) ** p < x <= k**p


@pytest.mark.parametrize(
    "T, d, expected",
    [
        (2**15, 1, 14),  # (32768 / ln 32768)^(1/3) = 14.66
        (100_000, 1, 20),  # (1e5 / ln 1e5)^(1/3) = 20.56
        (1000, 1, 5),  # (1000 / 6.908)^(1/3) = 5.25
        (2**15, 2, 7),  # (32768 / ln 32768)^(1/4) = 7.49
        (1, 1, 1),  # phase of one round: max(1, .)
        (2, 1, 1),
    ],
)
def test_binning_bins_formula(T, d, expected):
    assert binning_bins(T, d) == expected
    assert expected == max(1, math.floor((T / math.log(max(T, 2))) ** (1 / (d + 2)) + 1e-12))


@pytest.mark.parametrize("T, d, expected", [(2**15, 1, 32), (100_000, 1, 47), (1000, 1, 10), (2**15, 2, 14), (1, 1, 1)])
def test_sliding_bins_formula(T, d, expected):
    assert sliding_bins(T, d) == expected


def test_bin_index_and_midpoints_1d():
    K = 4
    assert bin_index([[0.0], [0.2499], [0.25], [0.5], [0.99], [1.0]], K).tolist() == [0, 0, 1, 2, 3, 3]
    mids = midpoints(K, 1)
    np.testing.assert_array_equal(mids[:, 0], [0.125, 0.375, 0.625, 0.875])
    np.testing.assert_array_equal(bin_index(mids, K), np.arange(K))


def test_grid_row_major_2d():
    K = 3
    mids = midpoints(K, 2)
    assert mids.shape == (9, 2)
    # flat index j = 3 i0 + i1
    np.testing.assert_allclose(mids[5], [(1 + 0.5) / 3, (2 + 0.5) / 3])
    np.testing.assert_array_equal(bin_index(mids, K), np.arange(9))
    assert bin_index([[1.0, 0.0]], K).tolist() == [6]
    # per-run K
    out = cell_midpoints(np.array([3, 3]), np.array([2, 4]), 2)
    np.testing.assert_allclose(out, [[0.75, 0.75], [0.125, 0.875]])


def test_inverse_cdf_first_index_with_cumsum_above_u():
    p = np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 0.0, 1.0 - 1e-12]])
    u = np.array([0.3, 0.0, 0.999999999999999])
    out = inverse_cdf(p, u, np.empty(3, dtype=np.int64))
    # row 0: cumsum 0.1, 0.3(0.30000000000000004 > 0.3), ... ; row 2: rounding leaves u >= sum -> last
    expect = [int(np.argmax(np.cumsum(p[i]) > u[i])) if np.cumsum(p[i])[-1] > u[i] else 3 for i in range(3)]
    assert out.tolist() == expect
    assert out[1] == 0 and out[2] == 3
