"""LowRankRecovery-v0 and the manifold optimizers: the efficient retraction is the truncated SVD of the
projected step, the identity metric gives the orthogonal tangent projection, the preconditioners follow their
definitions, the oracle counts calls and records the first one within tolerance."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.agents.base import list_solvers, make_solver
from papergym.agents.solvers.radagrad import Preconditioner, retract, tangent_project
from papergym.envs.tasks.base import BudgetExceeded, make_task
from papergym.envs.tasks.low_rank import LowRankInstance, LowRankOracle, matrix_of

TASK = "LowRankRecovery-v0"
SOLVERS = ("radagrad", "radamw", "rgd", "scaled-gd", "lora-adam", "factorized-gd")


def _point(m=12, n=9, r=3, seed=0):
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.normal(size=(m, r)))
    V, _ = np.linalg.qr(rng.normal(size=(n, r)))
    s = np.sort(rng.uniform(0.5, 2.0, r))[::-1]
    return U, s, V, rng.normal(size=(m, n))


def test_registered_solvers():
    roles = {s.name: s.role for s in list_solvers(TASK)}
    assert roles == {
        "radagrad": "paper",
        "radamw": "paper",
        "rgd": "baseline",
        "scaled-gd": "baseline",
        "lora-adam": "baseline",
        "factorized-gd": "baseline",
    }


@pytest.mark.parametrize("eta", [1e-3, 0.1, 0.7])
def test_retraction_is_the_truncated_svd_of_the_projected_step(eta):
    U, s, V, D = _point()
    U2, s2, V2 = retract(U, s, V, D, eta)
    dense = (U * s) @ V.T - eta * tangent_project(U, V, D)
    Ud, sd, Vdt = np.linalg.svd(dense)
    trunc = (Ud[:, :3] * sd[:3]) @ Vdt[:3]
    np.testing.assert_allclose((U2 * s2) @ V2.T, trunc, atol=1e-10)
    np.testing.assert_allclose(s2, sd[:3], rtol=1e-10)
    assert np.linalg.matrix_rank((U2 * s2) @ V2.T, tol=1e-12) == 3
    np.testing.assert_allclose(U2.T @ U2, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(V2.T @ V2, np.eye(3), atol=1e-12)


def test_identity_metric_gives_the_orthogonal_tangent_projection():
    U, s, V, G = _point(seed=1)
    P = Preconditioner("identity", G.shape)
    D = P(G)
    xi = tangent_project(U, V, D)
    Pu, Pv = U @ U.T, V @ V.T
    np.testing.assert_allclose(xi, Pu @ G + G @ Pv - Pu @ G @ Pv, atol=1e-13)
    # an orthogonal projection: idempotent, and the residual is orthogonal to the tangent space
    np.testing.assert_allclose(tangent_project(U, V, xi), xi, atol=1e-13)
    assert abs(np.sum((G - xi) * xi)) < 1e-12


def test_preconditioners_follow_their_definitions():
    rng = np.random.default_rng(2)
    G = rng.normal(size=(5, 4))
    ada = Preconditioner("adagrad", G.shape, eps=0.01)(G)
    pl = (0.01 + np.diag(G @ G.T)) ** 0.25
    pr = (0.01 + np.diag(G.T @ G)) ** 0.25
    np.testing.assert_allclose(ada, np.diag(1 / pl) @ G @ np.diag(1 / pr), rtol=1e-13)
    acc = Preconditioner("adagrad", G.shape, accumulate=True)
    acc(G)
    G2 = rng.normal(size=(5, 4))
    d2 = acc(G2)
    pl2 = (0.01 + np.diag(G @ G.T) + np.diag(G2 @ G2.T)) ** 0.25
    pr2 = (0.01 + np.diag(G.T @ G) + np.diag(G2.T @ G2)) ** 0.25
    np.testing.assert_allclose(d2, np.diag(1 / pl2) @ G2 @ np.diag(1 / pr2), rtol=1e-13)
    adam = Preconditioner("adamw", G.shape)
    d = adam(G)
    np.testing.assert_allclose(d, 0.1 * G / (np.sqrt(0.02 * G * G) + 1e-6), rtol=1e-12)
    assert adam.state_floats == 40


def test_sensing_gradient_and_smoothness():
    inst = LowRankInstance("sensing", 8, 6, 2, 10.0, 1.0, seed=3)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 6))
    f, G = inst.loss_grad(X)
    E = rng.normal(size=(8, 6)) * 1e-6
    f2, _ = inst.loss_grad(X + E)
    assert f2 - f == pytest.approx(np.sum(G * E), rel=1e-4)
    assert inst.loss_grad(inst.X_star)[0] == pytest.approx(0.0, abs=1e-20)
    assert inst.L_smooth == pytest.approx(np.linalg.eigvalsh(inst.A.T @ inst.A).max(), rel=1e-10)
    assert np.linalg.svd(inst.X_star, compute_uv=False)[:2] == pytest.approx([1.0, 0.1])


def test_regression_hessian_condition_is_kappa_h():
    inst = LowRankInstance("regression", 6, 5, 2, 10.0, 100.0, seed=1)
    # Hessian X -> L^2 X R^2 = kron(R^2, L^2) on vec(X)
    H = np.kron(inst.R2, inst.L2)
    ev = np.linalg.eigvalsh(H)
    assert ev.max() / ev.min() == pytest.approx(100.0, rel=1e-9)
    assert inst.L_smooth == pytest.approx(ev.max(), rel=1e-9)


def test_oracle_counts_and_records_the_first_call_within_tolerance():
    inst = LowRankInstance("sensing", 8, 6, 2, 10.0, 1.0, seed=3)
    o = LowRankOracle(inst, r=2, max_calls=3)
    A = np.ones((8, 2))
    o.loss_grad((A, np.ones((6, 2))))
    assert o.hit is None
    U, s, Vt = np.linalg.svd(inst.X_star)
    o.loss_grad((U[:, :2], s[:2], Vt[:2].T))
    assert o.hit == 2 and o.calls == 2
    o.loss_grad((A, np.ones((6, 2))))
    with pytest.raises(BudgetExceeded):
        o.loss_grad((A, np.ones((6, 2))))
    with pytest.raises(ValueError, match="k <= 2"):
        matrix_of((np.ones((8, 3)), np.ones((6, 3))), 8, 6, 2)
    with pytest.raises(ValueError, match="keys"):
        matrix_of({"W": 1}, 8, 6, 2)


@pytest.mark.parametrize("name", SOLVERS)
def test_every_solver_runs_and_reports_factors(name):
    task = make_task(TASK, family="sensing", kappa=10, rank=3, m=12, n=12, seeds=[0], max_calls=300)
    problem, ev = task.make(task.instances()[0])
    pts = []
    sol = make_solver(name, TASK).solve(problem, task.default_budget, lambda s, **k: pts.append(ev.evaluate(s)))
    m = ev.evaluate(sol)
    assert m["calls"] == 300 and len(pts) == 30
    assert m["final_rel_err"] < 1.0


def test_riemannian_and_scaled_methods_are_flat_in_kappa_factorised_gd_is_not():
    """The paper's claim on the sensing family: RGD / ScaledGD need about the same oracle calls at kappa = 1 and
    kappa = 1000; plain factorised GD slows down."""
    calls = {}
    for kappa in (1, 1000):
        task = make_task(TASK, family="sensing", kappa=kappa, rank=3, m=20, n=20, seeds=[0], max_calls=2000)
        for name in ("rgd", "scaled-gd", "factorized-gd"):
            problem, ev = task.make(task.instances()[0])
            sol = make_solver(name, TASK).solve(problem, task.default_budget, lambda *a, **k: None)
            calls[(name, kappa)] = ev.evaluate(sol)["par2_iters"]
    for name in ("rgd", "scaled-gd"):
        assert calls[(name, 1000)] < 2000 and calls[(name, 1000)] <= 1.5 * calls[(name, 1)]
    assert calls[("factorized-gd", 1000)] > 2 * calls[("factorized-gd", 1)]


def test_instances_and_bad_arguments(monkeypatch):
    task = make_task(TASK)
    names = [r.name for r in task.instances()]
    assert len(names) == (4 * 2 + 4 * 2 * 2) * 5 and "regression/kappa=10,kH=100/r=5/s0" in names
    with pytest.raises(ValueError, match="rank"):
        make_task(TASK, rank=2)
    with pytest.raises(ValueError, match="kappa"):
        make_task(TASK, kappa=0.5)
    with pytest.raises(ValueError, match="family"):
        make_task(TASK, family="completion")


def test_torch_optimizer_keeps_a_low_rank_layer_on_the_manifold_and_fits(needs):
    """Drop-in torch.optim use: fine-tune a bias-free linear layer to a rank-2 teacher with RAdaGrad; the weight
    stays rank 2, the loss falls, and one step equals the numpy solver's retraction on the same gradient."""
    torch = needs("torch")
    from papergym.agents.solvers.riemannian_torch import RAdaGrad, RAdamW, RiemannianSGD

    torch.manual_seed(0)
    teacher = torch.randn(16, 2, dtype=torch.float64) @ torch.randn(2, 24, dtype=torch.float64) / 5
    layer = torch.nn.Linear(24, 16, bias=False).double()
    X = torch.randn(256, 24, dtype=torch.float64)
    Y = X @ teacher.T
    opt = RAdaGrad([layer.weight], rank=2, lr=0.05)
    losses = []
    for _ in range(300):
        opt.zero_grad()
        loss = torch.mean((layer(X) - Y) ** 2)
        loss.backward()
        losses.append(float(loss))
        opt.step()
    assert losses[-1] < 1e-3 * losses[0]
    assert np.linalg.matrix_rank(layer.weight.detach().numpy(), tol=1e-10) == 2
    # one step against the numpy reference
    W0 = layer.weight.detach().numpy().copy()
    st = opt.state[layer.weight]
    opt.zero_grad()
    torch.mean((layer(X) - Y) ** 2).backward()
    G = layer.weight.grad.numpy().copy()
    D = Preconditioner("adagrad", G.shape)(G)
    U2, s2, V2 = retract(st["U"], st["s"], st["V"], D, 0.05)
    opt.step()
    np.testing.assert_allclose(layer.weight.detach().numpy(), (U2 * s2) @ V2.T, atol=1e-12)
    assert np.abs(W0 - layer.weight.detach().numpy()).max() > 0
    for cls in (RAdamW, RiemannianSGD):
        lay = torch.nn.Linear(24, 16, bias=False).double()
        o = cls([lay.weight], rank=3, lr=1e-2)
        torch.mean((lay(X) - Y) ** 2).backward()
        o.step()
        assert np.linalg.matrix_rank(lay.weight.detach().numpy(), tol=1e-10) == 3
    with pytest.raises(ValueError, match="matrices"):
        RAdaGrad([torch.nn.Parameter(torch.zeros(3))], rank=1)


def test_bench_end_to_end(tmp_path):
    from papergym.leaderboard import bench

    res = bench(
        TASK,
        solvers=["rgd", "scaled-gd"],
        task_kwargs={
            "family": "sensing",
            "kappa": [1, 100],
            "rank": 3,
            "m": 10,
            "n": 10,
            "seeds": [0],
            "max_calls": 200,
        },
        backend="serial",
        out=tmp_path / "cells",
    )
    assert (res.runs.status == "ok").all()
    folder = res.save(tmp_path / "out")
    assert (folder / "calls_vs_kappa.png").exists()
    assert "median oracle calls" in res.extra_report()
