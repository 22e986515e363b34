"""SubspaceDisentangle-v0: the generator's subspaces are recovered exactly by an oracle projection, the subspace error
has the principal-angle closed form and the right invariances, the exact GMM score is the gradient of the
log-density, instances are seeded, hostile solutions are rejected naming the field, splits need the secret."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.envs.tasks.base import MissingSecretError, make_task
from papergym.envs.tasks.subspace_disentangle.task import (
    TINTS,
    gmm_logpdf,
    gmm_score,
    make_lsgmm,
    subspace_error,
    tint_images,
)

TASK = "SubspaceDisentangle-v0"


def _make(**kw):
    args = {"supervision": "labels", "n": 400, "seeds": [0]}
    args.update(kw)
    task = make_task(TASK, **args)
    return task.make(task.instances()[0])


def _true_transfer(problem, truth):
    """Keep the source's content coordinates (true U), replace the rest by the target style's mean (true V)."""
    Xq = problem.query_source
    if problem.supervision == "labels":
        target = problem.query_style
    else:
        target = truth.nearest_style(problem.query_ref)
    z, _ = truth.coordinates(Xq)
    return z @ truth.U.T + truth.style_means[target] @ truth.V.T


@pytest.mark.parametrize("sup", ["labels", "views"])
@pytest.mark.parametrize("angle", [0.0, 30.0])
def test_oracle_projection_scores_one(sup, angle):
    pb, ev = _make(supervision=sup, angle=angle)
    truth = ev.truth
    m = ev.evaluate({"U_hat": truth.U, "transfer": _true_transfer(pb, truth)})
    assert m["subspace_error"] == pytest.approx(0.0, abs=1e-12)
    assert m["content_acc"] >= 0.99 and m["style_acc"] >= 0.99
    assert m["disentangle_score"] >= 0.99
    assert math.isnan(m["digit_acc"]) and math.isnan(m["recolor_mse"])


def test_angle_rotates_the_style_subspace_towards_the_content():
    for a in (0.0, 30.0, 60.0):
        t = make_lsgmm(3, a)
        np.testing.assert_allclose(t.U.T @ t.U, np.eye(2), atol=1e-12)
        np.testing.assert_allclose(t.V.T @ t.V, np.eye(2), atol=1e-12)
        np.testing.assert_allclose(t.U.T @ t.V, math.sin(math.radians(a)) * np.eye(2), atol=1e-12)
    # with the angle, the identity-free coordinates are the least-squares ones: exact on noise-free points
    t = make_lsgmm(3, 30.0)
    z, g = np.array([[1.0, -2.0]]), np.array([[0.5, 3.0]])
    zz, gg = t.coordinates(z @ t.U.T + g @ t.V.T)
    np.testing.assert_allclose(zz, z, atol=1e-12)
    np.testing.assert_allclose(gg, g, atol=1e-12)


def test_subspace_error_invariances_and_principal_angle_closed_form():
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((16, 6)))
    U, W = Q[:, :2], Q[:, 2:4]
    th = 0.7
    R = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
    assert subspace_error(U @ R, U) == pytest.approx(0.0, abs=1e-12)  # rotation within the subspace
    assert subspace_error(U @ np.diag([1.0, -1.0]), U) == pytest.approx(0.0, abs=1e-12)
    assert subspace_error(W, U) == pytest.approx(1.0)  # an orthogonal complement
    for t1, t2 in [(0.3, 0.0), (0.4, 1.1), (math.pi / 2, 0.2)]:
        Uh = np.stack(
            [math.cos(t1) * U[:, 0] + math.sin(t1) * W[:, 0], math.cos(t2) * U[:, 1] + math.sin(t2) * W[:, 1]], axis=1
        )
        expect = math.sqrt((math.sin(t1) ** 2 + math.sin(t2) ** 2) / 2)
        assert subspace_error(Uh, U) == pytest.approx(expect, rel=1e-12)
        assert subspace_error(Uh @ R, U) == pytest.approx(expect, rel=1e-12)


def test_evaluator_rotation_invariance_and_complement():
    pb, ev = _make()
    truth = ev.truth
    T = _true_transfer(pb, truth)
    R, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((2, 2)))
    assert ev.evaluate({"U_hat": truth.U @ R, "transfer": T})["subspace_error"] == pytest.approx(0.0, abs=1e-12)
    m = ev.evaluate({"U_hat": truth.V, "transfer": pb.query_source})
    assert m["subspace_error"] == pytest.approx(1.0)
    assert m["style_acc"] == 0.0  # the source's style is never the target


@pytest.mark.parametrize("style", [None, 1])
def test_gmm_score_is_the_gradient_of_the_log_density(style):
    t = make_lsgmm(5, 30.0)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((4, 16)) * 2
    for alpha, sigma in [(1.0, 0.0), (0.6, 0.8)]:
        s = gmm_score(t, X, alpha, sigma, style=style)
        h = 1e-5
        fd = np.empty_like(X)
        for j in range(16):
            e = np.zeros(16)
            e[j] = h
            fd[:, j] = (gmm_logpdf(t, X + e, alpha, sigma, style) - gmm_logpdf(t, X - e, alpha, sigma, style)) / (2 * h)
        np.testing.assert_allclose(s, fd, rtol=1e-5, atol=1e-5)


def test_seeded_instances():
    a, ea = _make(supervision="views")
    b, _ = _make(supervision="views")
    for f in ("X_train", "X_view", "query_source", "query_ref"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    c, _ = _make(supervision="views", seeds=[1])
    assert not np.allclose(a.X_train, c.X_train)
    # views share the style vector: x - x' lies in span U + noise
    P = np.eye(16) - ea.truth.V @ ea.truth.V.T
    d = a.X_train - a.X_view
    assert np.linalg.norm(d @ ea.truth.V) / np.linalg.norm(d) < 0.1
    assert np.linalg.norm(d @ P) / np.linalg.norm(d) > 0.99


def test_problem_layout_and_private_oracle():
    from papergym.leaderboard.board.evaluate import public_problem

    pb, ev = _make(n=500)
    assert pb.X_train.shape == (500, 16) and pb.labels.shape == (500,) and pb.X_view is None
    assert pb.query_source.shape == (1000, 16) and pb.query_style.shape == (1000,) and pb.query_ref is None
    assert (pb.content_dim, pb.style_dim, pb.n_styles) == (2, 2, 3)
    data, calls = public_problem(pb)
    assert "oracle" not in data and not calls and "X_train" in data
    assert pb.oracle is None and ev.reference_problem().oracle is ev.truth
    pv, _ = _make(supervision="views", n=500)
    assert pv.labels is None and pv.query_style is None and pv.X_view.shape == (500, 16)
    assert pv.query_ref.shape == (1000, 16)


def _bad(pb, ev, **kw):
    sol = {"U_hat": ev.truth.U.copy(), "transfer": pb.query_source.copy()}
    sol.update(kw)
    return {k: v for k, v in sol.items() if v is not None}


def test_hostile_solutions_are_rejected_naming_the_field():
    pb, ev = _make()
    U = ev.truth.U
    with pytest.raises(ValueError, match="mapping"):
        ev.evaluate(U)
    with pytest.raises(ValueError, match="U_hat"):
        ev.evaluate({"transfer": pb.query_source})
    with pytest.raises(ValueError, match="transfer"):
        ev.evaluate({"U_hat": U})
    with pytest.raises(ValueError, match="U_hat.*shape"):
        ev.evaluate(_bad(pb, ev, U_hat=U.T))
    with pytest.raises(ValueError, match="U_hat.*orthonormal"):
        ev.evaluate(_bad(pb, ev, U_hat=2 * U))
    with pytest.raises(ValueError, match="U_hat.*finite"):
        ev.evaluate(_bad(pb, ev, U_hat=np.full_like(U, np.nan)))
    with pytest.raises(ValueError, match="U_hat"):
        ev.evaluate(_bad(pb, ev, U_hat="abc"))
    with pytest.raises(ValueError, match="transfer.*shape"):
        ev.evaluate(_bad(pb, ev, transfer=pb.query_source[:10]))
    T = pb.query_source.copy()
    T[3, 4] = np.inf
    with pytest.raises(ValueError, match="transfer.*finite"):
        ev.evaluate(_bad(pb, ev, transfer=T))
    # float32 round-off in U_hat is accepted (re-orthonormalised)
    assert ev.evaluate(_bad(pb, ev, U_hat=U.astype(np.float32)))["subspace_error"] < 1e-6


def test_digits_proxy():
    pb, ev = _make(family="digits", supervision="views")
    assert pb.X_train.shape == (1297 * 4, 192) and pb.X_view.shape == pb.X_train.shape
    assert (pb.content_dim, pb.style_dim, pb.n_styles) == (189, 3, 4)
    assert pb.X_train.min() >= 0 and pb.X_train.max() <= 1
    sol = {"U_hat": np.eye(192)[:, :189], "transfer": ev.true_transfer}
    m = ev.evaluate(sol)
    assert m["recolor_mse"] == 0.0 and m["tint_acc"] == 1.0 and m["digit_acc"] > 0.9
    assert m["disentangle_score"] == pytest.approx(0.5 * (m["digit_acc"] + 1.0))
    assert math.isnan(m["subspace_error"])
    keep = ev.evaluate({**sol, "transfer": pb.query_source})  # identity: right digits, wrong tint
    assert keep["tint_acc"] == 0.0 and keep["digit_acc"] > 0.9
    x = tint_images(np.ones((1, 64)), [2])
    np.testing.assert_allclose(x.reshape(3, 64)[:, 0], TINTS[2] ** 0.8)


def test_bad_task_arguments():
    for kw, msg in [
        ({"family": "mnist"}, "family"),
        ({"supervision": "pairs"}, "supervision"),
        ({"n": 3}, "n"),
        ({"angle": 90}, "angle"),
        ({"angle": -1}, "angle"),
        ({"max_seconds": 0}, "max_seconds"),
        ({"paper_scale": "yes"}, "paper_scale"),
        ({"seeds": [-1]}, "seeds"),
    ]:
        with pytest.raises(ValueError, match=msg):
            make_task(TASK, **kw)


def test_sizes_and_budget():
    t = make_task(TASK)
    assert [r.name for r in t.instances()][:2] == ["ls-gmm/labels/n=4000/angle=0/s0", "ls-gmm/labels/n=4000/angle=0/s1"]
    assert len(t.instances()) == 10
    assert t.default_budget.max_seconds == 60 and t.default_budget.max_iterations == 3000
    p = make_task(TASK, paper_scale=True)
    assert p.default_budget.max_seconds == 600
    assert len(p.instances()) == 2 * (4 * 2 + 1) * 5
    assert {r.params["family"] for r in p.instances()} == {"ls-gmm", "digits"}


def test_test_split_needs_the_secret(monkeypatch):
    t = make_task(TASK)
    monkeypatch.delenv("PAPERGYM_TEST_SECRET", raising=False)
    with pytest.raises(MissingSecretError):
        t.instances("test")
    monkeypatch.setenv("PAPERGYM_TEST_SECRET", "s3cret")
    refs = t.instances("test")
    assert len(refs) == 2 * 5 and refs[0].name.endswith("/t0")
    assert {r.seed for r in refs}.isdisjoint(range(5))
    pb, _ = t.make(refs[0])
    assert pb.X_train.shape == (4000, 16)


def test_bench_report_and_figures(tmp_path):
    from papergym.leaderboard import bench

    res = bench(
        TASK,
        solvers=["pca", "lda-pca", "oracle-subspace"],
        task_kwargs={"n": 300, "seeds": [0], "supervision": ["labels", "views"]},
        backend="serial",
        out=tmp_path / "cells",
    )
    assert (res.runs.status == "ok").all()
    best = res.summary.set_index("label").geo_mean
    assert best["lda-pca"] > 0.95 > 0.5 > best["pca"]
    text = res.extra_report()
    assert "subspace err" in text and "lda-pca" in text
    folder = res.save(tmp_path / "out")
    assert (folder / "disentangle_bars.png").exists() and (folder / "disentangle_bars.svg").exists()
