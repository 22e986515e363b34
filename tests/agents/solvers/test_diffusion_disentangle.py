"""diffusion-disentangle: the VP schedule, the DDIM transfer keeps the content coordinates, the Stiefel frame is
orthonormal, runs are seeded and respect the budget; slow: it beats PCA on the subspace error at default settings."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym_tests import require  # the helper of tests/conftest.py

require("torch", "torch")

from papergym.agents.base import make_solver
from papergym.agents.solvers.diffusion_disentangle import VPSchedule, ddim_transfer
from papergym.envs.tasks.base import Budget, make_task

TASK = "SubspaceDisentangle-v0"
TINY = {"steps": 30, "ddim_steps": 4, "report_every": 0, "batch_size": 64}


def _make(**kw):
    args = {"supervision": "labels", "n": 300, "seeds": [0]}
    args.update(kw)
    task = make_task(TASK, **args)
    return task.make(task.instances()[0])


def test_vp_schedule():
    s = VPSchedule()
    t = np.linspace(0, 1, 11)
    np.testing.assert_allclose(s.alpha(t) ** 2 + s.sigma(t) ** 2, 1.0, atol=1e-12)
    assert s.alpha(0.0) == 1.0 and s.sigma(0.0) == 0.0
    assert s.alpha(1.0) == pytest.approx(math.exp(-0.5 * (0.1 + 0.5 * 19.9)))
    assert np.all(np.diff(s.alpha(t)) < 0)


def test_ddim_keeps_the_content_and_inverts_a_gaussian():
    rng = np.random.default_rng(0)
    U, _ = np.linalg.qr(rng.standard_normal((16, 2)))
    x = rng.standard_normal((50, 16))
    s = VPSchedule()
    out = ddim_transfer(lambda xt, t: rng.standard_normal(xt.shape), x, U, s, 0.6, 10, np.random.default_rng(1))
    np.testing.assert_allclose(out @ U, x @ U, atol=1e-12)
    # data N(0, I): the exact noise prediction is σ_t x_t and the probability-flow ODE is the identity, so DDIM
    # returns (nearly) the noised start
    z = np.random.default_rng(5).standard_normal((200, 16))
    start = s.alpha(0.6) * z + s.sigma(0.6) * np.random.default_rng(7).standard_normal(z.shape)
    out = ddim_transfer(
        lambda xt, t: float(s.sigma(t)) * xt, z, np.zeros((16, 0)), s, 0.6, 400, np.random.default_rng(7)
    )
    assert np.abs(out - start).max() < 0.02


@pytest.mark.parametrize(
    "sup,extra",
    [
        ("labels", {}),
        ("views", {}),
        ("labels", {"content_sees_style": True}),
        ("views", {"content_sees_style": True}),
        ("labels", {"architecture": "full"}),
        ("labels", {"init": "random"}),
    ],
)
def test_solution_is_valid_and_seeded(sup, extra):
    pb, ev = _make(supervision=sup)
    a = make_solver("diffusion-disentangle", TASK, seed=3, **TINY, **extra).solve(pb, Budget(), lambda *a, **k: None)
    b = make_solver("diffusion-disentangle", TASK, seed=3, **TINY, **extra).solve(pb, Budget(), lambda *a, **k: None)
    c = make_solver("diffusion-disentangle", TASK, seed=4, **TINY, **extra).solve(pb, Budget(), lambda *a, **k: None)
    np.testing.assert_allclose(a["U_hat"].T @ a["U_hat"], np.eye(2), atol=1e-10)
    np.testing.assert_array_equal(a["U_hat"], b["U_hat"])
    np.testing.assert_array_equal(a["transfer"], b["transfer"])
    assert not np.array_equal(a["transfer"], c["transfer"])
    m = ev.evaluate(a)
    assert 0.0 <= m["disentangle_score"] <= 1.0
    # the transfer keeps the content coordinates along its own U_hat
    np.testing.assert_allclose(a["transfer"] @ a["U_hat"], pb.query_source @ a["U_hat"], atol=1e-8)


def test_reports_and_budget():
    pb, ev = _make()
    its = []
    sol = make_solver("diffusion-disentangle", TASK, seed=0, steps=25, ddim_steps=2, report_every=10).solve(
        pb, Budget(), lambda s, iteration=None, work=None: its.append((iteration, ev.evaluate(s)))
    )
    assert [i for i, _ in its] == [10, 20, 25] and sol["meta"]["steps"] == 25
    sol = make_solver("diffusion-disentangle", TASK, seed=0, steps=25, ddim_steps=2, report_every=0).solve(
        pb, Budget(max_iterations=7), lambda *a, **k: None
    )
    assert sol["meta"]["steps"] == 7 and sol["meta"]["stopped"] == "steps"
    sol = make_solver("diffusion-disentangle", TASK, seed=0, steps=10_000, ddim_steps=2, report_every=0).solve(
        pb, Budget(max_seconds=0.5), lambda *a, **k: None
    )
    assert sol["meta"]["stopped"] == "max_seconds" and sol["meta"]["steps"] < 10_000


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"steps": 0}, "steps"),
        ({"lr": -1.0}, "lr"),
        ({"p_uncond": 1.0}, "p_uncond"),
        ({"architecture": "unet"}, "architecture"),
        ({"t_start": 0.0}, "t_start"),
        ({"content_sees_style": "yes"}, "content_sees_style"),
        ({"init": "lda"}, "init"),
        ({"guidance": float("nan")}, "guidance"),
    ],
)
def test_bad_hyperparameters(kw, msg):
    with pytest.raises(ValueError, match=msg):
        make_solver("diffusion-disentangle", TASK, **kw)


@pytest.mark.slow
def test_beats_pca_on_the_subspace_error_at_default_settings():
    task = make_task(TASK, supervision="labels", seeds=[0])
    pb, ev = task.make(task.instances()[0])
    sol = make_solver("diffusion-disentangle", TASK, seed=0).solve(pb, task.default_budget, lambda *a, **k: None)
    pca = make_solver("pca", TASK, seed=0).solve(pb, task.default_budget, lambda *a, **k: None)
    m, p = ev.evaluate(sol), ev.evaluate(pca)
    assert p["subspace_error"] > 0.9
    assert m["subspace_error"] < 0.1 and m["disentangle_score"] > 0.9
