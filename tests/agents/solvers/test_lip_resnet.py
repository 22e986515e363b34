"""lip-resnet (LipschitzApprox-v0): certified exports (h re-clamped with the exact norm, ‖Q‖₂ ≤ 1, ‖M_l‖₂ ≤ 1),
the code's constraints are not certified, export fidelity, power iteration, OneCycle step counts, determinism,
the time budget and the hyperparameter checks."""

from __future__ import annotations

import numpy as np
import pytest

from papergym_tests import require  # the helper of tests/conftest.py

torch = require("torch", "torch")

from papergym.agents.base import list_solvers, make_solver
from papergym.agents.solvers.lip_resnet import (
    LipResNet,
    count_lip_resnet,
    onecycle_total_steps,
    power_iteration,
    spectral_norm,
)
from papergym.envs.tasks.base import Budget, make_task
from papergym.envs.tasks.lipschitz_approx import parse_network

TASK = "LipschitzApprox-v0"
FAST = {"power_iters_init": 300}


@pytest.fixture(scope="module")
def inst():
    task = make_task(
        TASK,
        families=["approx", "robust"],
        dims=[1, 5],
        targets=["f3"],
        seeds=[0],
        n_train=512,
        emp_points=1000,
        emp_steps=10,
        grid_1d=1000,
        n_test_uniform=5000,
    )
    return {r.name.rsplit("/", 1)[0]: task.make(r) for r in task.instances()}


def test_registered_as_the_paper_method():
    info = {s.name: s for s in list_solvers(TASK)}["lip-resnet"]
    assert info.role == "paper" and info.requires == ("torch",)
    assert {"arch", "official_constraints", "onecycle_bug_compat", "output_norm", "depth"} <= set(info.hyperparameters)


@pytest.mark.parametrize("arch", ["G", "G_hat"])
@pytest.mark.parametrize("config", ["approx/d=5/f3", "robust/moons"])
def test_exports_are_certified_and_reported(inst, arch, config):
    problem, ev = inst[config]
    reports = []
    sol = make_solver("lip-resnet", TASK, seed=0, arch=arch, depth=3, **FAST).solve(
        problem, Budget(max_seconds=60, max_iterations=3), lambda s, **k: reports.append((k, ev.evaluate(s)))
    )
    assert [k["iteration"] for k, _ in reports] == [1, 2, 3]
    assert [k["work"] for k, _ in reports] == [2, 4, 6] if config.startswith("approx") else [12, 24, 36]
    for _, m in reports:
        assert m["cert_bound"] <= 1 + 1e-6 and m["certified"] == 1.0
        assert m["emp_lip"] <= m["cert_bound"] + 1e-9
    net = parse_network(sol, problem.d)
    bounds = net.layer_bounds()
    layers = sol["layers"]
    assert layers[0]["type"] == "Linear"
    if arch == "G":
        assert max(bounds) <= 1 + 1e-9  # every layer: ‖Q‖₂ ≤ 1, h ≤ 2/‖W‖², ‖c v‖ ≤ 1
        assert spectral_norm(layers[0]["A"]) <= 1 + 1e-12
    else:  # Ĝ's own norm: unit upper lifting rows, ‖Q_{4:}‖₂ ≤ 1 (certified by the mixed-norm composition)
        assert np.all(np.linalg.norm(layers[0]["A"][:3], axis=1) <= 1 + 1e-12)
        assert spectral_norm(layers[0]["A"][3:]) <= 1 + 1e-12
    if arch == "G":
        assert sol["meta"]["width"] == 16 and len(layers) == 1 + 3 + 1
        for L in layers[1:4]:
            assert L["type"] == "GradStep" and np.max(L["h"]) * spectral_norm(L["W"]) ** 2 <= 2 + 1e-9
    else:
        w = problem.d + 3
        assert sol["meta"]["width"] == w and [L["type"] for L in layers[1:3]] == ["BlockDiag", "Linear"]
        sort = layers[1]["nets"][0][0]
        np.testing.assert_array_equal(sort["W"], [[-1.0, 1.0, 0.0]])
        assert layers[1]["split"] == 3 and layers[2]["A"].shape == (w, w)
        M = layers[2]["A"]
        assert np.all(np.abs(M[:3, :3]).sum(1) + np.linalg.norm(M[:3, 3:], axis=1) <= 1 + 1e-6)
        np.testing.assert_allclose(M[3:, 3:].T @ M[3:, 3:], np.eye(problem.d), atol=1e-5)
        np.testing.assert_allclose(M[3:, :3], 0.0)
    assert sol["meta"]["n_trainable"] == count_lip_resnet(arch, problem.d, sol["meta"]["width"], 3)
    assert layers[-1]["type"] == "Output" and np.linalg.norm(layers[-1]["v"]) <= 1 + 1e-9 and layers[-1]["c"] == 0.0


@pytest.mark.parametrize("arch", ["G", "G_hat"])
def test_official_constraints_leave_the_lifting_uncertified(inst, arch):
    """d = 5: the code's unnormalised lower lifting (U(±1/√5) entries, or orthogonal for Ĝ next to row-normalised
    upper rows) has ‖Q‖₂ > 1; the gym's SVD fix keeps it at ≤ 1 (same seed, same initial values)."""
    problem, ev = inst["approx/d=5/f3"]
    norms = {}
    for official in (True, False):
        extra = {"ghat_norm": "l2"} if arch == "G_hat" else {}  # the whole-lifting SVD fix
        sol = make_solver(
            "lip-resnet", TASK, seed=0, arch=arch, depth=2, official_constraints=official, **FAST, **extra
        ).solve(problem, Budget(max_iterations=1), None)
        norms[official] = spectral_norm(sol["layers"][0]["A"])
        m = ev.evaluate(sol)
        assert m["emp_lip"] <= m["cert_bound"] + 1e-9
        assert m["error"] == (1.0 if m["cert_bound"] > 1 + 1e-6 else m["rel_rmse"])
    assert norms[True] > 1.05 and norms[False] <= 1 + 1e-12


def test_the_export_computes_what_was_trained(inst):
    """In float64 with converged power iterations, the vocabulary network equals the torch model."""
    problem, _ = inst["approx/d=5/f3"]
    X = np.random.default_rng(0).uniform(-1, 1, (64, 5))
    for arch in ("G", "G_hat"):
        s = LipResNet(seed=1, arch=arch, depth=3, dtype="float64")
        model = s.build(torch, problem, np.random.default_rng(1), torch.float64)
        with torch.no_grad():
            f_t = model.forward(torch.tensor(X)).numpy()[:, 0]
        f_v = parse_network(model.export(), 5)(X)[:, 0]
        np.testing.assert_allclose(f_v, f_t, rtol=1e-9, atol=1e-12)


def test_power_iteration_is_a_lower_estimate_that_converges():
    rng = np.random.default_rng(3)
    W = rng.standard_normal((7, 7))
    exact = np.linalg.norm(W, 2)
    s1, u = power_iteration(W, None, 1, rng)
    assert s1 <= exact * (1 + 1e-12)
    s, u = power_iteration(W, u, 2000, rng)
    assert s == pytest.approx(exact, rel=1e-10)
    s2, _ = power_iteration(W, u, 1, rng)  # warm start: one more step stays converged
    assert s2 == pytest.approx(exact, rel=1e-10)


def test_onecycle_step_count_and_the_code_bug(inst):
    assert onecycle_total_steps(200, 4096, 16, False) == 3200
    assert onecycle_total_steps(200, 4096, 16, True) == 200 * 4096
    problem, _ = inst["approx/d=1/f3"]
    lrs = {}
    for compat in (False, True):
        seen = []
        orig = torch.optim.lr_scheduler.OneCycleLR.step

        def spy(self, *a, **k):
            orig(self, *a, **k)
            seen.append(self.optimizer.param_groups[0]["lr"])

        torch.optim.lr_scheduler.OneCycleLR.step = spy
        try:
            make_solver("lip-resnet", TASK, seed=0, depth=1, onecycle_bug_compat=compat, **FAST).solve(
                problem, Budget(max_iterations=4), None
            )
        finally:
            torch.optim.lr_scheduler.OneCycleLR.step = orig
        lrs[compat] = np.array(seen[:-1])  # the lr set before each optimiser step (the last one is never used)
    assert len(lrs[False]) == 4 * 2 and lrs[False][0] == pytest.approx(5e-3)
    assert lrs[False][3] == pytest.approx(0.1, rel=1e-6)  # the peak at pct_start = 0.5
    assert lrs[False][-1] == pytest.approx(5e-3 / 1e4, rel=1e-6)  # annealed to lr_min / final_div_factor
    assert lrs[True].max() < 5.1e-3  # the code's count: the schedule never leaves warm-up


def test_deterministic_under_a_seed(inst):
    problem, _ = inst["approx/d=1/f3"]

    def run(seed):
        return make_solver("lip-resnet", TASK, seed=seed, depth=2, **FAST).solve(
            problem, Budget(max_iterations=2), None
        )["layers"]

    a, b, c = run(5), run(5), run(6)
    for la, lb in zip(a, b):
        for k, v in la.items():
            if k != "type":
                np.testing.assert_array_equal(v, lb[k])
    assert not np.allclose(a[1]["W"], c[1]["W"])


def test_time_budget_stops_training_and_returns_a_valid_network(inst):
    problem, ev = inst["robust/moons"]
    sol = make_solver("lip-resnet", TASK, seed=0, depth=2, **FAST).solve(
        problem, Budget(max_seconds=0.3, max_iterations=10_000), None
    )
    assert sol["meta"]["stopped"] == "max_seconds" and sol["meta"]["epochs"] < 10_000
    assert sol["meta"]["train_seconds"] < 2.0
    assert ev.evaluate(sol)["certified"] == 1.0


def test_a_non_finite_loss_stops_before_stepping_and_returns_the_last_network(inst):
    import dataclasses

    problem, ev = inst["approx/d=1/f3"]
    bad = dataclasses.replace(problem, y=problem.y * 1e30)  # float32 MSE overflows at once
    sol = make_solver("lip-resnet", TASK, seed=0, depth=2, **FAST).solve(bad, Budget(max_iterations=3), None)
    assert sol["meta"]["stopped"] == "non-finite loss" and sol["meta"]["steps"] == 0
    assert ev.evaluate(sol)["certified"] == 1.0


def test_digits_head_is_a_certified_linear():
    task = make_task(TASK, families="digits", seeds=[0], emp_points=300, emp_steps=3)
    problem, ev = task.make(task.instances()[0])
    sol = make_solver("lip-resnet", TASK, seed=0, depth=2, **FAST).solve(problem, Budget(max_iterations=1), None)
    assert sol["layers"][-1]["type"] == "Linear" and sol["layers"][-1]["A"].shape == (10, 16)
    m = ev.evaluate(sol)
    assert m["cert_bound"] <= 1 + 1e-6 and m["emp_lip"] <= m["cert_bound"] + 1e-9


@pytest.mark.parametrize(
    "hp,msg",
    [
        ({"arch": "H"}, "arch"),
        ({"depth": 0}, "depth"),
        ({"width": 2}, "width"),
        ({"lr_max": 1e-4}, "lr_max must be >= lr_min"),
        ({"pct_start": 1.5}, "pct_start"),
        ({"official_constraints": 1}, "official_constraints"),
        ({"output_norm": "linf"}, "output_norm"),
        ({"dtype": "float16"}, "dtype"),
        ({"epochs": 0}, "epochs"),
        ({"onecycle_bug_compat": "no"}, "onecycle_bug_compat"),
    ],
)
def test_bad_hyperparameters(hp, msg):
    with pytest.raises(ValueError, match=msg):
        make_solver("lip-resnet", TASK, **hp)


def test_g_hat_width_is_fixed(inst):
    problem, _ = inst["approx/d=1/f3"]
    with pytest.raises(ValueError, match="fixed width d \\+ 3 = 4"):
        make_solver("lip-resnet", TASK, arch="G_hat", width=16).solve(problem, Budget(max_iterations=1), None)


@pytest.mark.slow
def test_lip_resnet_fits_abs_on_the_line():
    """200 epochs on |x| (d = 1), the default schedule. With the theorem's ‖v‖₂ ≤ 1 head (the default) the certified
    G fits well; with the code's ‖v‖₁ ≤ 1 head under the gym's ‖Q‖₂ ≤ 1 fix, the rescaling spreads v over the
    16 coordinates and the network's gain stays near 1/√16 ≈ 0.25-0.3 (measured error ≈ 0.73): certified but
    under-powered, which this test pins down so that a change of either constraint is noticed."""
    task = make_task(TASK, families="approx", dims=1, targets="f1", seeds=[0], emp_points=2000)
    problem, ev = task.make(task.instances()[0])
    m2 = ev.evaluate(make_solver("lip-resnet", TASK, seed=0).solve(problem, task.default_budget, None))
    assert m2["certified"] == 1.0 and m2["error"] < 0.2, m2
    m1 = ev.evaluate(
        make_solver("lip-resnet", TASK, seed=0, output_norm="l1").solve(problem, task.default_budget, None)
    )
    assert m1["certified"] == 1.0 and m1["cert_bound"] < 0.5 and m1["error"] > 2 * m2["error"], m1
