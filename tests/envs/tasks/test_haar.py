"""envs/tasks/haar.py: the one Haar sampler of the task generators (orthogonality, the QR sign
correction, and bit-identity with the per-task formulas it replaced)."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

from papergym.envs.tasks.haar import haar, orthonormalize


def _former_square(d, rng):  # distributed_regression._haar
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def _former_thin(m, k, rng):  # low_rank._haar(k, m, rng), simple_bilevel._haar_columns
    q, r = np.linalg.qr(rng.standard_normal((m, k)))
    return q * np.sign(np.diag(r))


def _former_square_cut(m, k, rng):  # subspace_disentangle._haar_columns
    q, r = np.linalg.qr(rng.standard_normal((m, m)))
    return (q * np.sign(np.diag(r)))[:, :k]


@pytest.mark.parametrize(("n", "k"), [(1, 1), (2, 2), (5, 5), (7, 3), (16, 4), (40, 1), (30, 30)])
def test_orthonormal_columns(n, k):
    Q = haar(np.random.default_rng(n * 100 + k), n, k)
    assert Q.shape == (n, k)
    np.testing.assert_allclose(Q.T @ Q, np.eye(k), atol=1e-12)
    if k == n:
        np.testing.assert_allclose(Q @ Q.T, np.eye(n), atol=1e-12)
    assert haar(np.random.default_rng(0), 6).shape == (6, 6)  # k=None: square


def test_sign_correction():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((9, 4))
    Q = orthonormalize(A)
    R = Q.T @ A  # A = Q R with R upper triangular and a positive diagonal
    assert np.all(np.diag(R) > 0)
    np.testing.assert_allclose(np.tril(R, -1), 0.0, atol=1e-12)
    np.testing.assert_allclose(Q @ R, A, atol=1e-12)
    # a zero pivot keeps its column (numpy's np.sign would zero it)
    B = np.array([[1.0, 2.0], [0.0, 0.0], [0.0, 0.0]])
    assert np.all(np.linalg.norm(orthonormalize(B), axis=0) == 1.0)


def test_haar_distributed():
    """On O(2) the Haar rotation angle is uniform; numpy's QR alone is not (its R has a fixed sign
    convention, which the sign correction removes): Kolmogorov-Smirnov distance of 4,000 angles."""
    rng = np.random.default_rng(11)
    angles = np.sort([math.atan2(Q[1, 0], Q[0, 0]) for Q in (haar(rng, 2) for _ in range(4000))])
    u = (angles + math.pi) / (2 * math.pi)
    ks = np.max(np.abs(u - (np.arange(1, len(u) + 1) / len(u))))
    assert ks < 1.63 / math.sqrt(len(u))  # 1 % level
    rng = np.random.default_rng(11)
    raw = np.sort(
        [math.atan2(q[1, 0], q[0, 0]) for q in (np.linalg.qr(rng.standard_normal((2, 2)))[0] for _ in range(4000))]
    )
    u_raw = (raw + math.pi) / (2 * math.pi)
    assert np.max(np.abs(u_raw - (np.arange(1, len(u_raw) + 1) / len(u_raw)))) > 0.2  # the uncorrected QR fails


@pytest.mark.parametrize("seed", [0, 1, 12345])
@pytest.mark.parametrize(("n", "k"), [(1, 1), (3, 2), (8, 8), (16, 4), (25, 6)])
def test_bit_identical_with_former_formulas(seed, n, k):
    def pair(former, new):
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        a, b = former(r1), new(r2)
        assert a.shape == b.shape and a.tobytes() == b.tobytes()
        assert r1.bit_generator.state == r2.bit_generator.state  # the same numbers were drawn

    pair(lambda r: _former_square(n, r), lambda r: haar(r, n))
    pair(lambda r: _former_thin(n, k, r), lambda r: haar(r, n, k))
    pair(lambda r: _former_square_cut(n, k, r), lambda r: haar(r, n, k, square_draw=True))


def _h(*arrs):
    m = hashlib.sha256()
    for a in arrs:
        m.update(np.ascontiguousarray(a).tobytes())
    return m.hexdigest()[:16]


def test_task_instances_unchanged():
    """Digests of instances measured with the per-task formulas, before the sampler was shared."""
    from papergym.envs.tasks.distributed_regression import task as DR
    from papergym.envs.tasks.low_rank import task as LR
    from papergym.envs.tasks.simple_bilevel import task as SB
    from papergym.envs.tasks.subspace_disentangle import task as SD

    d = DR.DistributedInstance(6, 3, 0.5, 1.0, 0.1, 3)
    assert _h(np.zeros(1), *[v for _, v in sorted(vars(d).items()) if isinstance(v, np.ndarray)]) == "113280afe2552d72"
    s1 = LR.LowRankInstance("sensing", 5, 4, 2, 10.0, 10.0, 1)
    assert _h(s1.X_star, s1.A) == "3ec43cd32682482d"
    s2 = LR.LowRankInstance("regression", 5, 4, 2, 10.0, 10.0, 2)
    assert _h(s2.X_star, s2.L2, s2.R2) == "3af6eb9285dab0c4"
    f = SB.FactorisationInstance(7, 3, 4)
    assert _h(f.P, f.Q, f.M) == "e0cac20c64409318"
    t = SD.make_lsgmm(5, 30.0)
    assert _h(*[np.asarray(v) for v in vars(t).values() if isinstance(v, np.ndarray)]) == "4e4254104053c099"


def test_bad_shape():
    with pytest.raises(ValueError, match="need 0 <= k <= n"):
        haar(np.random.default_rng(0), 3, 4)
