"""FeatureStaircase-v0 as a task: AGF's closed forms on linear networks (Saxe et al.'s singular-mode order and
timing) and its agreement with simulated gradient descent, the ground-truth cache, the splits, every solver on
every setting, hostile solutions and the CLI."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.agents.base import make_solver
from papergym.agents.solvers.agf import agf_linear, linear_rescale
from papergym.baselines.solvers.staircase import independent_modes_linear, one_jump_linear
from papergym.envs.tasks import base
from papergym.envs.tasks.base import MissingSecretError, make_task
from papergym.envs.tasks.staircase import (
    TASK_ID,
    StaircaseProblem,
    compute_ground_truth,
    extract_staircase,
    gd_linear,
    ground_truth,
    linear_init,
    linear_instance,
    linear_modes,
    linear_stats,
    parse_steps,
    score_staircase,
)

SOLVERS = ("agf", "pesme-flammarion", "greedy-memoryless", "independent-modes", "one-jump")
SMALL = {
    "setting": ["diagonal-linear", "linear"],
    "d": 5,
    "a": 1.0,
    "alpha": [1e-4, 1e-8],
    "horizon": 40_000,
    "linear_d": 4,
    "linear_horizon": 150_000,
    "seeds": [0],
}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE", str(tmp_path / "cache"))
    from papergym.envs.tasks.staircase import task as staircase

    staircase._GT_MEMO.clear()


def _aligned(s, lam, rng):
    """Population statistics of y = Bx with B = U diag(s) Vᵀ and Σ_xx = V diag(lam) Vᵀ (aligned modes)."""
    d = len(s)
    U = np.linalg.qr(rng.standard_normal((d, d)))[0]
    V = np.linalg.qr(rng.standard_normal((d, d)))[0]
    B = U @ np.diag(s) @ V.T
    Sxx = V @ np.diag(lam) @ V.T
    Syx = B @ Sxx
    return Sxx, Syx, float(np.trace(B @ Sxx @ B.T)), U


def test_agf_linear_closed_form_aligned_modes():
    """Aligned (and whitened) inputs: mode j jumps at log(1/(√2·init))/(σ_j lr) with σ_j = s_j λ_j, in decreasing
    σ order, and the loss after k modes is ½ Σ_{j>k} μ_j with μ_j = s_j² λ_j (Saxe et al. 2014)."""
    rng = np.random.default_rng(3)
    s, lam = np.array([4.0, 2.0, 1.0, 0.5]), np.array([1.0, 0.5, 1 / 3, 0.25])
    Sxx, Syx, syy, U = _aligned(s, lam, rng)
    init, lr = 1e-6, 1e-3
    steps = agf_linear(Sxx, Syx, syy, init, lr)
    sig, mu = s * lam, s**2 * lam
    order = np.argsort(-sig)
    assert [st.feature for st in steps] == list(np.argsort(-mu))  # features index the modes by decreasing μ
    for k, (st, j) in enumerate(zip(steps, order)):
        assert st.t == pytest.approx(linear_rescale(init) / sig[j] / lr, rel=1e-9)
        assert st.level == pytest.approx(0.5 * mu[order[k + 1 :]].sum(), abs=1e-9)
    # the decoupled baseline is exact here too; one jump keeps only the first time
    ind = independent_modes_linear(Sxx, Syx, syy, init, lr)
    assert [round(a.t, 6) for a in ind] == [round(b.t, 6) for b in steps]
    oj = one_jump_linear(Sxx, Syx, syy, init, lr)
    assert len(oj) == 1 and oj[0].t == pytest.approx(steps[0].t) and oj[0].level == pytest.approx(0, abs=1e-9)
    # whitened: σ_j = s_j, so the order is the singular-value order
    Sxx, Syx, syy, _ = _aligned(np.array([0.3, 3.0, 1.0]), np.ones(3), rng)
    assert [round(st.t * lr / linear_rescale(init), 9) for st in agf_linear(Sxx, Syx, syy, init, lr)] == [
        round(1 / 3.0, 9),
        1.0,
        round(1 / 0.3, 9),
    ]


def test_agf_linear_memory_matters_when_modes_are_not_aligned():
    rng = np.random.default_rng(0)
    d = 4
    A = rng.standard_normal((d, d))
    Sxx = A @ A.T / d + 0.1 * np.eye(d)
    Syx = rng.standard_normal((d, d)) @ Sxx
    syy = float(np.trace(np.linalg.solve(Sxx, Syx.T).T @ Syx.T)) + 1.0
    mem, nomem = agf_linear(Sxx, Syx, syy, 1e-8, 1.0), agf_linear(Sxx, Syx, syy, 1e-8, 1.0, memory=False)
    assert nomem[0].t == pytest.approx(mem[0].t)
    assert all(b.t >= a.t - 1e-9 for a, b in zip(mem, nomem)) and nomem[-1].t > mem[-1].t
    assert [a.level for a in mem] == pytest.approx([b.level for b in nomem])
    assert mem[-1].level == pytest.approx(0.5, rel=1e-6)  # the least-squares floor: ½ (syy − tr M) = 0.5


def test_agf_linear_matches_gradient_descent():
    X, Y, _ = linear_instance(4, 1000, 0)
    Sxx, Syx, syy = linear_stats(X, Y)
    W1, W2 = linear_init(4, 4, 4, 1e-8, 0)
    steps = agf_linear(Sxx, Syx, syy, 1e-8, 1e-3)
    L, M = gd_linear(Sxx, Syx, syy, W1, W2, 1e-3, int(1.3 * steps[-1].t))
    emp = extract_staircase(L, M)[1:]
    assert [e[2] for e in emp] == [s.feature for s in steps] == [0, 1, 2, 3]  # singular modes, decreasing order
    for e, s in zip(emp, steps):
        assert s.t == pytest.approx(e[0], rel=0.15)
        assert max(s.level, 1e-6 * L[0]) == pytest.approx(e[1], rel=0.05)
    mu, _ = linear_modes(Sxx, Syx)  # sampled inputs are only nearly aligned: the levels are nearly ½ Σ_{j>k} μ_j
    assert steps[0].level == pytest.approx(0.5 * mu[1:].sum(), rel=1e-3)


def test_instances_splits_and_public_problem(monkeypatch):
    task = make_task(TASK_ID, **SMALL)
    refs = task.instances("dev")
    assert [r.name for r in refs] == [
        "diagonal-linear/d=5,a=1,alpha=0.0001/s0",
        "diagonal-linear/d=5,a=1,alpha=1e-08/s0",
        "linear/d=4,init=1e-08/s0",
    ]
    monkeypatch.delenv(base.SECRET_ENV, raising=False)
    with pytest.raises(MissingSecretError):
        task.instances("test")
    monkeypatch.setenv(base.SECRET_ENV, "s3cret")
    test = task.instances("test")
    assert len(test) == 15 and {r.seed for r in test}.isdisjoint({0})
    p1, _ = task.make(refs[0])
    p2, _ = task.make(refs[0])
    assert isinstance(p1, StaircaseProblem) and np.array_equal(p1.X, p2.X) and np.array_equal(p1.y, p2.y)
    assert p1.setting == "diagonal-linear" and p1.init["u"] == pytest.approx(np.full(5, math.sqrt(2) * 1e-4))
    assert p1.l0 == pytest.approx(0.5 * np.mean(p1.y**2)) and not p1.X.flags.writeable
    pt, _ = task.make(test[0])
    assert not np.array_equal(pt.X, p1.X)
    pl, _ = task.make(refs[2])
    assert pl.y.shape == (1000, 4) and pl.init["W1"].shape == (4, 4) and pl.width == 4


def test_every_solver_runs_on_every_setting_and_agf_scores_best():
    task = make_task(TASK_ID, **SMALL)
    for ref in task.instances("dev"):
        problem, ev = task.make(ref)
        ev.prepare()
        scores = {}
        for name in SOLVERS:
            slv = make_solver(name, TASK_ID)
            if name == "pesme-flammarion" and problem.setting == "linear":
                with pytest.raises(base.NotApplicable, match="diagonal linear networks"):
                    slv.solve(problem, task.default_budget, lambda *a, **k: None)
                continue
            sol = slv.solve(problem, task.default_budget, lambda *a, **k: None)
            m = ev.evaluate(sol)
            assert m["staircase_error"] >= 0 and m["gd_seconds"] > 0 and m["n_measured"] >= 1
            scores[name] = m["staircase_error"]
        assert scores["agf"] <= min(scores.values()) + 1e-12, (ref.name, scores)
        assert scores["one-jump"] > scores["agf"] + 1.0


def test_hostile_solutions_are_named():
    task = make_task(TASK_ID, setting="diagonal-linear", d=5, a=1.0, alpha=1e-8, horizon=20_000, seeds=[0])
    _, ev = task.make(task.instances("dev")[0])
    for bad, word in (
        ([], "at least one"),
        ({"stairs": []}, "'steps'"),
        (np.zeros((2, 4)), r"\(K, 2\)"),
        ([(1.0, -1.0, 0)], "t must be"),
        ([(-1.0, 1.0)], "t must be"),
        ([(5.0, 1.0), (3.0, 0.5)], "non-decreasing"),
        ([(5.0, 1.0, True)], "feature"),
        ([(5.0, 1.0, 1.5)], "feature"),
        ([("x", 1.0)], "numbers"),
        ("steps", "list"),
        ([(1.0,)], "expected"),
    ):
        with pytest.raises(ValueError, match=word):
            ev.evaluate(bad)
    arr = np.array([[1000.0, 10.0, 2], [5000.0, 1.0, -1]])
    assert parse_steps(arr) == [(1000.0, 10.0, 2), (5000.0, 1.0, None)]
    assert parse_steps({"steps": [{"t": 3, "level": 1.0, "feature": 1}]}) == [(3.0, 1.0, 1)]


def test_ground_truth_cache_dev_only(tmp_path):
    from papergym.envs.tasks.staircase import task as staircase

    task = make_task(TASK_ID, setting="diagonal-linear", d=5, a=1.0, alpha=[1e-4, 1e-8], horizon=20_000, seeds=[1])
    ref = task.instances("dev")[0]
    p = dict(ref.params)
    a = ground_truth(p, ref.seed, disk=True)
    files = list((tmp_path / "cache" / "_staircase").glob("*.npz"))
    assert len(files) == 1
    staircase._GT_MEMO.clear()
    b = ground_truth(p, ref.seed, disk=True)  # read back
    for al in (1e-4, 1e-8):
        assert np.array_equal(a[al]["steps"], b[al]["steps"]) and a[al]["l0"] == b[al]["l0"]
    files[0].write_bytes(b"garbage")
    staircase._GT_MEMO.clear()
    c = ground_truth(p, ref.seed, disk=True)  # a corrupt file is recomputed
    assert np.array_equal(a[1e-8]["steps"], c[1e-8]["steps"])
    ground_truth({**p, "horizon": 20_001}, ref.seed, disk=False)  # hidden instances are never written
    assert len(list((tmp_path / "cache" / "_staircase").glob("*.npz"))) == 1


def test_flow_ground_truth_agrees_with_gd():
    p = {"setting": "diagonal-linear", "d": 5, "n": 20, "a": 1.0, "alphas": [1e-8], "lr": 1e-3, "horizon": 60_000}
    gd = compute_ground_truth(p, 2, "gd")[1e-8]["steps"]
    fl = compute_ground_truth(p, 2, "flow")[1e-8]["steps"]
    assert gd.shape == fl.shape and np.array_equal(gd[:, 2], fl[:, 2])
    assert fl[:, 0] == pytest.approx(gd[:, 0], rel=0.02) and fl[:, 1] == pytest.approx(gd[:, 1], rel=0.02)
    with pytest.raises(ValueError, match="flow"):
        make_task(TASK_ID, setting="linear", ground_truth="flow")


def test_finalize_and_bad_kwargs():
    task = make_task(TASK_ID)
    out = task.finalize({"gd_seconds": 4.0, "staircase_error": 0.3}, 0.002, "ok")
    assert out["cost_ratio"] == pytest.approx(5e-4) and out["time_s"] == 0.002
    assert math.isnan(task.finalize({"gd_seconds": 4.0}, None, "timeout")["cost_ratio"])
    for kw, word in (
        ({"setting": "relu"}, "setting"),
        ({"alpha": 0.9}, "alpha"),
        ({"d": 0}, "d"),
        ({"ground_truth": "sde"}, "ground_truth"),
        ({"paper_scale": "yes"}, "paper_scale"),
        ({"horizon": 5}, "horizon"),
    ):
        with pytest.raises(ValueError, match=word):
            make_task(TASK_ID, **kw)
    ps = make_task(TASK_ID, paper_scale=True)
    assert ps.alpha == (0.5, 0.1, 1e-2, 1e-4, 1e-8, 1e-16) and ps.d == (5,)


def test_score_of_a_perfect_prediction_of_the_measured_staircase():
    task = make_task(TASK_ID, setting="diagonal-linear", d=5, a=1.0, alpha=1e-8, horizon=40_000, seeds=[0])
    _, ev = task.make(task.instances("dev")[0])
    assert ev.evaluate(ev.empirical())["staircase_error"] == pytest.approx(0.0, abs=1e-12)
    # a last plateau on the floor ε = 1e-6 ℓ0: an exact prediction of 0 is not charged (levels compare floored)
    emp = [(100, 10.0, 0), (1_000, 1e-4, 1)]
    exact = score_staircase([(100, 10.0, 0), (1_000, 0.0, 1)], emp, 1e4, 100.0)
    assert exact["level_error"] == pytest.approx(0, abs=1e-12)
    assert score_staircase([(100, 10.0, 0), (1_000, 1e-3, 1)], emp, 1e4, 100.0)["level_error"] == pytest.approx(
        math.log(10) / 2
    )


def test_cli_bench_table_and_overlay(tmp_path):
    from papergym.leaderboard.cli import main

    rc = main(
        [
            "bench",
            TASK_ID,
            "--setting",
            "diagonal-linear,linear",
            "--d",
            "5",
            "--a",
            "1",
            "--alpha",
            "1e-8",
            "--horizon",
            "40000",
            "--linear-d",
            "4",
            "--linear-horizon",
            "150000",
            "--seeds",
            "0",
            "--backend",
            "serial",
            "--out",
            str(tmp_path / "b"),
            "--no-cache",
        ]
    )
    assert rc == 0
    txt = (tmp_path / "b" / "table.txt").read_text()
    assert "cost/GD" in txt and "linear" in txt and "agf" in txt
    lines = [ln for ln in txt.splitlines() if ln.startswith("linear ") and "pesme-flammarion" in ln]
    assert lines == []  # not applicable to linear nets: no row, no failure
    assert (tmp_path / "b" / "staircase_overlay.png").exists()
