"""Baselines of LipschitzApprox-v0 and the all-solvers contract: every registered solver runs on every family, its
exported network is certified (bound ≤ 1 + 1e−6; not for the uncertified reference) and never beaten by the
empirical Lipschitz estimate; parameter budgets match lip-resnet's within ±20 %; the exports compute what was
trained; Björck, AOL and SLL numerics against their closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from papergym_tests import require  # the helper of tests/conftest.py

torch = require("torch", "torch")

from papergym.agents.base import list_solvers, make_solver
from papergym.agents.solvers.lip_resnet import count_lip_resnet
from papergym.baselines.solvers.lipschitz_nets import (
    AOL,
    CPL,
    SLL,
    SNMLP,
    GroupSortBjorck,
    PlainMLP,
    aol_np,
    bjorck_np,
    count_params,
    matched_width,
)
from papergym.envs.tasks.base import Budget, make_task
from papergym.envs.tasks.lipschitz_approx import parse_network

TASK = "LipschitzApprox-v0"
BASELINES = ("sn-mlp", "groupsort-bjorck", "aol", "sll", "cpl", "mlp-unconstrained")
FAST = {"lip-resnet": {"power_iters_init": 300}, "cpl": {"power_iters_init": 300}}


@pytest.fixture(scope="module")
def instances():
    task = make_task(
        TASK,
        families=["approx", "robust", "digits"],
        dims=[2],
        targets=["f4"],
        seeds=[0],
        n_train=512,
        emp_points=500,
        emp_steps=5,
        grid_2d=50,
    )
    return {r.name.split("/")[0]: task.make(r) for r in task.instances()}


def test_registered_roles():
    roles = {s.name: s.role for s in list_solvers(TASK)}
    assert roles == {
        "lip-resnet": "paper",
        "sn-mlp": "baseline",
        "groupsort-bjorck": "baseline",
        "aol": "baseline",
        "sll": "baseline",
        "cpl": "baseline",
        "mlp-unconstrained": "reference",
    }


def test_importing_the_baselines_does_not_import_torch():
    import subprocess
    import sys

    code = (
        "import sys, papergym.baselines.solvers, papergym.agents.solvers; sys.exit(1 if 'torch' in sys.modules else 0)"
    )
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]  # the repository root (never /tmp: a folder there shadows the package)
    assert subprocess.run([sys.executable, "-c", code], cwd=root, check=False).returncode == 0


@pytest.mark.parametrize("family", ["approx", "robust", "digits"])
def test_every_solver_runs_on_every_family_and_is_certified(instances, family):
    problem, ev = instances[family]
    configs = [("lip-resnet", {"arch": "G"}), ("lip-resnet", {"arch": "G_hat"})] + [(b, {}) for b in BASELINES]
    for name, hp in configs:
        reports = []
        sol = make_solver(name, TASK, seed=0, depth=2, **hp, **FAST.get(name, {})).solve(
            problem, Budget(max_seconds=60, max_iterations=2), lambda s, **k: reports.append(ev.evaluate(s))
        )
        m = ev.evaluate(sol)
        assert len(reports) == 2, name
        for r in reports + [m]:
            assert r["emp_lip"] <= r["cert_bound"] * (1 + 1e-9), (name, hp, r)
            if name != "mlp-unconstrained":
                assert r["cert_bound"] <= 1 + 1e-6 and r["certified"] == 1.0, (name, hp, r)
        assert np.isfinite(m["error"]) and 0 <= m["error"] <= (1.0 if family != "approx" else 10.0)
        if family != "approx":
            assert 0 <= m["cert_acc@0.1"] <= m["clean_acc"] <= 1


def test_the_uncertified_reference_scores_one():
    task = make_task(
        TASK,
        families="approx",
        dims=[5],
        targets=["f2"],
        seeds=[0],
        n_train=512,
        emp_points=300,
        emp_steps=3,
        n_test_uniform=2000,
    )
    problem, ev = task.make(task.instances()[0])
    # lr 1e-3 (the shared schedule's peak of 0.1 kills a deep plain ReLU MLP): it learns, uncertified
    sol = make_solver("mlp-unconstrained", TASK, seed=0, depth=3, width=64, lr_min=1e-3, lr_max=1e-3).solve(
        problem, Budget(max_iterations=30), None
    )
    m = ev.evaluate(sol)
    prod = np.prod([np.linalg.norm(L["A"], 2) for L in sol["layers"] if L["type"] == "Linear"]) * np.linalg.norm(
        sol["layers"][-1]["v"]
    )
    assert m["cert_bound"] == pytest.approx(prod, rel=1e-9) and m["cert_bound"] > 1 + 1e-6
    assert m["error"] == 1.0 and m["certified"] == 0.0 and m["rel_rmse"] < 0.9


@pytest.mark.parametrize("kind", ["sn", "bjorck", "aol", "plain", "sll", "cpl"])
@pytest.mark.parametrize("d,out_dim", [(1, 1), (2, 1), (5, 1), (64, 10)])
def test_parameter_budget_matches_lip_resnet(kind, d, out_dim):
    for depth in (2, 8, 16):
        m = matched_width(kind, d, depth, out_dim, even=kind == "bjorck")
        ref = count_lip_resnet("G", d, 16, depth, out_dim)
        assert abs(count_params(kind, d, m, depth, out_dim) - ref) <= 0.2 * ref, (kind, d, depth, m)
        assert kind != "bjorck" or m % 2 == 0


@pytest.mark.parametrize(
    "cls,hp",
    [
        (SNMLP, {"sn_power_iters_init": 5000}),
        (GroupSortBjorck, {}),
        (AOL, {}),
        (PlainMLP, {}),
        (SLL, {}),
        (CPL, {"power_iters_init": 5000}),
    ],
)
@pytest.mark.parametrize("family", ["approx", "digits"])
def test_the_export_computes_what_was_trained(instances, cls, hp, family):
    """Float64 model at construction vs its vocabulary export on random inputs; the trainable count is the
    closed form."""
    problem, _ = instances[family]
    solver = cls(seed=2, depth=3, dtype="float64", **hp)
    model = solver.build(torch, problem, np.random.default_rng(2), torch.float64)
    X = np.random.default_rng(0).uniform(0 if family == "digits" else -1, 1, (32, problem.d))
    with torch.no_grad():
        f_t = model.forward(torch.tensor(X)).numpy()
    f_v = parse_network(model.export(), problem.d, problem.out_dim)(X)
    np.testing.assert_allclose(f_v, f_t, rtol=1e-7, atol=1e-9)
    n = sum(p.numel() for p in model.params)
    assert n == count_params(solver.kind, problem.d, solver._width(problem), 3, problem.out_dim)


def test_bjorck_orthonormalises_from_the_scaled_start_and_diverges_unscaled():
    rng = np.random.default_rng(4)
    for shape in ((6, 6), (9, 4), (1, 7)):
        W = rng.standard_normal(shape) * 3
        s = np.linalg.svd(bjorck_np(W, iters=40), compute_uv=False)
        assert np.all(s <= 1 + 1e-12) and np.allclose(s, 1.0, atol=1e-9)
        s15 = np.linalg.svd(bjorck_np(W, iters=15), compute_uv=False)
        assert np.all(s15 <= 1 + 1e-12)  # 1.5 s - 0.5 s^3 never leaves [0, 1]
    W = np.diag([2.5, 0.5])  # > sqrt(5): the unscaled iteration diverges
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(15):
            W = 1.5 * W - 0.5 * W @ W.T @ W
    assert not np.all(np.isfinite(W)) or np.abs(W).max() > 1e6


def test_aol_rescaling_is_1_lipschitz_and_tight_for_orthogonal_and_rank_one():
    rng = np.random.default_rng(5)
    for shape in ((8, 8), (16, 3), (3, 16)):
        for _ in range(20):
            assert np.linalg.norm(aol_np(rng.standard_normal(shape)), 2) <= 1 + 1e-12
    Q = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    np.testing.assert_allclose(aol_np(Q), Q, atol=1e-12)  # |QᵀQ| = I: unchanged
    v = rng.standard_normal((1, 9))
    assert np.linalg.norm(aol_np(v), 2) == pytest.approx(1.0)


def test_sll_layers_certify_at_one_and_h_of_cpl_is_the_limit(instances):
    problem, ev = instances["approx"]
    sol = make_solver("sll", TASK, seed=0, depth=2).solve(problem, Budget(max_iterations=1), None)
    sll_layers = [L for L in sol["layers"] if L["type"] == "SLL"]
    assert len(sll_layers) == 2 and all(np.all(L["q"] > 0) for L in sll_layers)
    for L in sll_layers:  # T ⪰ WᵀW for the recomputed T
        T = (np.abs(L["W"].T @ L["W"]) @ L["q"]) / L["q"]
        assert np.linalg.eigvalsh(np.diag(T) - L["W"].T @ L["W"]).min() >= -1e-10
    sol = make_solver("cpl", TASK, seed=0, depth=2, power_iters_init=300).solve(problem, Budget(max_iterations=1), None)
    for L in sol["layers"]:
        if L["type"] == "GradStep":
            assert np.max(L["h"]) * np.linalg.norm(L["W"], 2) ** 2 == pytest.approx(2.0, rel=1e-12)


@pytest.mark.parametrize(
    "name,hp,msg",
    [
        ("sn-mlp", {"width": 0}, "width"),
        ("aol", {"depth": 0}, "depth"),
        ("groupsort-bjorck", {"bjorck_iters": 0}, "bjorck_iters"),
        ("cpl", {"power_iters_init": 0}, "power_iters_init"),
        ("sll", {"lr_min": -1}, "lr_min"),
        ("sll", {"ref_width": 0}, "ref_width"),
    ],
)
def test_bad_hyperparameters(name, hp, msg):
    with pytest.raises(ValueError, match=msg):
        make_solver(name, TASK, **hp)


def test_baselines_are_deterministic(instances):
    problem, _ = instances["robust"]
    a = make_solver("aol", TASK, seed=3, depth=2).solve(problem, Budget(max_iterations=1), None)
    b = make_solver("aol", TASK, seed=3, depth=2).solve(problem, Budget(max_iterations=1), None)
    for la, lb in zip(a["layers"], b["layers"]):
        for k in la:
            if k != "type":
                np.testing.assert_array_equal(la[k], lb[k])
