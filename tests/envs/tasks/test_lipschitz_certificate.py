"""LipschitzApprox-v0: the mixed-norm certificate is a true upper bound (adversarial empirical Lipschitz estimates
on random and trained networks), never looser than the ℓ2 product, and certifies the paper's Ĝ at 1."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from papergym.envs.tasks.lipschitz_approx.task import (
    _matrix_bound,
    certified_bound,
    empirical_lipschitz,
    mixed_norm_bound,
    parse_network,
)

SORT = {"type": "GradStep", "W": np.array([[-1.0, 1.0, 0.0]]), "b": np.zeros(1), "h": np.ones(1)}


def lin(A, c=None):
    A = np.asarray(A, float)
    return {"type": "Linear", "A": A, "c": np.zeros(len(A)) if c is None else np.asarray(c, float)}


def gradstep(rng, n, k, scale=1.0):
    W = rng.standard_normal((k, n))
    return {
        "type": "GradStep",
        "W": W,
        "b": rng.standard_normal(k),
        "h": rng.uniform(0.0, scale * 2.0 / np.linalg.norm(W, 2) ** 2, k),
    }


def mixed_rows(rng, m, n, split=3):
    """Rows with Σ_{j<split} |a_j| + ‖a_{split:}‖₂ = 1 (Ĝ's top rows)."""
    R = rng.standard_normal((m, n))
    return R / (np.abs(R[:, :split]).sum(1) + np.linalg.norm(R[:, split:], axis=1))[:, None]


def orth(rng, n):
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return q


def ghat_like(rng, d, depth, lower_k=None):
    """A random network of Ĝ's structure under the paper's constraints (unit upper lifting rows, ‖Q_low‖₂ ≤ 1, top
    rows of the inter-block maps in the dual mixed norm, orthogonal lower block, mixed-dual readout)."""
    w = d + 3
    Q = rng.standard_normal((w, d))
    Q[:3] /= np.linalg.norm(Q[:3], axis=1, keepdims=True)
    Q[3:] /= max(1.0, np.linalg.norm(Q[3:], 2))
    layers = [lin(Q, rng.standard_normal(w))]
    for _ in range(depth):
        layers.append({"type": "BlockDiag", "split": 3, "nets": [[SORT], [gradstep(rng, d, lower_k or d)]]})
        M = np.zeros((w, w))
        M[:3] = mixed_rows(rng, 3, w)
        M[3:, 3:] = orth(rng, d)
        layers.append(lin(M, rng.standard_normal(w)))
    v = mixed_rows(rng, 1, w)[0]
    layers.append({"type": "Output", "v": v, "c": 0.0})
    return parse_network(layers, d)


def adversarial(net, d, seed, starts=64):
    return empirical_lipschitz(
        net, -np.ones(d), np.ones(d), np.random.default_rng(seed), n_points=4000, steps=60, starts=starts
    )


def test_exact_abs_network_is_certified_at_one_and_the_estimate_reaches_it():
    # |x| = max(x, −x): lift (x, −x, 0 | x), sort gadget, read out coordinate 1
    layers = [
        lin([[1.0], [-1.0], [0.0], [1.0]]),
        {"type": "BlockDiag", "split": 3, "nets": [[SORT], []]},
        {"type": "Output", "v": np.array([1.0, 0, 0, 0]), "c": 0.0},
    ]
    net = parse_network(layers, 1)
    x = np.linspace(-1, 1, 101)[:, None]
    np.testing.assert_allclose(net(x)[:, 0], np.abs(x[:, 0]))
    assert net.bound() == pytest.approx(np.sqrt(3.0))  # ℓ2 product: ‖Q‖₂ = √3
    assert certified_bound(net) == pytest.approx(1.0, abs=1e-12)
    assert adversarial(net, 1, 0) == pytest.approx(1.0, rel=1e-9)


def test_matrix_bound_dominates_the_induced_norm_and_is_exact_for_l2_and_linf():
    rng = np.random.default_rng(1)
    for trial in range(30):
        n, m = rng.integers(2, 7, 2)
        P = tuple(
            int(x)
            for x in np.diff(np.r_[0, np.sort(rng.choice(np.arange(1, n), rng.integers(0, n - 1), replace=False)), n])
        )
        Q = tuple(
            int(x)
            for x in np.diff(np.r_[0, np.sort(rng.choice(np.arange(1, m), rng.integers(0, m - 1), replace=False)), m])
        )
        A = rng.standard_normal((m, n))
        b = _matrix_bound(A, P, Q)
        oP, oQ = np.r_[0, np.cumsum(P)], np.r_[0, np.cumsum(Q)]

        def N(z, off):
            return max(np.linalg.norm(z[..., off[i] : off[i + 1]], axis=-1).max() for i in range(len(off) - 1))

        # the induced norm is attained at an extreme point: every group of x a unit vector (sampled densely)
        X = rng.standard_normal((20000, n))
        for i in range(len(P)):
            X[:, oP[i] : oP[i + 1]] /= np.linalg.norm(X[:, oP[i] : oP[i + 1]], axis=1, keepdims=True)
        Y = X @ A.T
        est = max(np.linalg.norm(Y[:, oQ[g] : oQ[g + 1]], axis=1).max() for g in range(len(Q)))
        assert est <= b * (1 + 1e-12), (trial, P, Q)
        assert N(X[:1], oP) == pytest.approx(1.0)
    A = rng.standard_normal((4, 5))
    assert _matrix_bound(A, (5,), (4,)) == pytest.approx(np.linalg.norm(A, 2))
    assert _matrix_bound(A, (1,) * 5, (1,) * 4) == pytest.approx(np.abs(A).sum(1).max())


@pytest.mark.parametrize("d", [1, 2, 3])
def test_random_ghat_networks_bound_the_adversarial_estimate(d):
    rng = np.random.default_rng(10 + d)
    tighter = 0
    for trial in range(6):
        net = ghat_like(rng, d, depth=int(rng.integers(1, 5)))
        cert, prod = certified_bound(net), net.bound()
        emp = adversarial(net, d, trial)
        assert emp <= cert * (1 + 1e-9), (trial, emp, cert)
        assert cert <= prod * (1 + 1e-12) and cert <= 1 + 1e-9
        tighter += prod > 1.05
    assert tighter >= 5  # the ℓ2 product would not certify these networks


def _random_layer(rng, n):
    kind = rng.integers(6)
    if kind == 0:
        return gradstep(rng, n, int(rng.integers(1, 4)), scale=rng.uniform(0.5, 1.5))
    if kind == 1:
        return {"type": "Act", "fn": ["relu", "tanh", "abs", "maxmin"][rng.integers(4)]}
    if kind == 2:
        return lin(rng.standard_normal((n, n)) * rng.uniform(0.2, 0.8))
    if kind == 3 and n >= 3:
        s = int(rng.integers(1, n))
        return {
            "type": "BlockDiag",
            "split": s,
            "nets": [
                [gradstep(rng, s, int(rng.integers(1, 3))), {"type": "Act", "fn": "maxmin"}],
                [lin(rng.standard_normal((n - s, n - s)) * 0.7), {"type": "Act", "fn": "relu"}],
            ],
        }
    if kind == 4:
        W = rng.standard_normal((n, 3))
        return {"type": "SLL", "W": W, "b": rng.standard_normal(3), "q": rng.uniform(0.2, 2, 3)}
    M = np.zeros((n, n))
    k = min(3, n - 1) if n > 1 else 1
    M[:k] = mixed_rows(rng, k, n, split=k)
    if n > k:
        M[k:, k:] = orth(rng, n - k)
    return lin(M)


def test_random_mixed_networks_bound_the_adversarial_estimate():
    """Arbitrary vocabulary networks (GradSteps beyond the 1-Lipschitz step, maxmin across groups, SLL, nested
    BlockDiag): the certificate is never below the adversarial estimate and never above the ℓ2 product."""
    rng = np.random.default_rng(7)
    for trial in range(20):
        d = int(rng.integers(1, 4))
        n = int(rng.integers(3, 6))
        layers = [lin(rng.standard_normal((n, d)) * 0.6)]
        for _ in range(int(rng.integers(1, 5))):
            layers.append(_random_layer(rng, n))
        layers.append({"type": "Output", "v": rng.standard_normal(n), "c": 0.1})
        net = parse_network(layers, d)
        cert, prod = certified_bound(net), net.bound()
        emp = adversarial(net, d, trial, starts=32)
        assert emp <= cert * (1 + 1e-9), (trial, emp, cert)
        assert cert <= prod * (1 + 1e-12)


def test_default_architecture_G_is_certified_exactly_as_the_product():
    """Without a BlockDiag the only interface norm is ℓ2: the certificate is the product, bit for bit."""
    rng = np.random.default_rng(3)
    for d, w in itertools.product((1, 2, 5), (8, 16)):
        Q = rng.standard_normal((w, d))
        layers = [lin(Q / np.linalg.norm(Q, 2))] + [gradstep(rng, w, w) for _ in range(8)]
        layers.append({"type": "Output", "v": rng.standard_normal(w) / np.sqrt(w), "c": 0.0})
        net = parse_network(layers, d)
        assert mixed_norm_bound(net) == net.bound() == certified_bound(net)


def test_a_trained_ghat_is_certified_and_bounds_its_estimate():
    from papergym_tests import require

    require("torch", "torch")
    from papergym.agents.base import make_solver
    from papergym.envs.tasks.base import Budget, make_task

    task = make_task("LipschitzApprox-v0", families=["approx"], dims=[2], targets=["f1"], seeds=[2000])
    problem, ev = task.make(task.instances("dev")[0])
    sol = make_solver("lip-resnet", "LipschitzApprox-v0", seed=0, arch="G_hat", depth=4).solve(
        problem, Budget(max_iterations=6), None
    )
    net = parse_network(sol, 2)
    m = ev.evaluate(sol)
    assert m["certified"] == 1.0 and m["cert_bound"] <= 1 + 1e-6 and m["diverged"] == 0.0
    assert net.bound() > 1.2  # not certifiable by the ℓ2 product
    assert m["emp_lip"] <= m["cert_bound"] + 1e-9
    assert adversarial(net, 2, 5) <= m["cert_bound"] * (1 + 1e-9)
