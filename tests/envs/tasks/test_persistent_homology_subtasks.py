"""PointCloudPH-v0, second part: the Rips / sparse-Rips / flooder baselines (radius units, known diagrams), the
1-Wasserstein metric, validity over every dimension, the swiss-cheese classification sub-task, the ``points``
kwarg, and the report and figures."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from papergym_tests import require  # the helper of tests/conftest.py

require("gudhi", "tda")

from papergym.agents.base import make_solver
from papergym.envs.tasks.base import Budget, InstanceRef, make_task
from papergym.envs.tasks.persistent_homology import (
    PHClassifyProblem,
    PHProblem,
    alpha_reference,
    solve_clouds,
    wasserstein1,
)
from papergym.envs.tasks.persistent_homology.classify import (
    FEATURES,
    classify_set,
    features,
    split_accuracy,
)

TASK = "PointCloudPH-v0"


def _noop(*a, **k):
    return None


def _problem(points, family="fidelity"):
    pts = np.asarray(points, dtype=float)
    return PHProblem(
        points=pts, max_dim=pts.shape[1] - 1, units="radius", family=family, shape="cheese", N=len(pts), d=pts.shape[1]
    )


SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])


# ------------------------------------------------------------------------------------------ baselines
def test_rips_and_alpha_on_a_square_in_radius_units():
    # Rips: the 4-cycle appears at edge length 1 (radius 1/2) and dies with the diagonals sqrt 2 (radius
    # sqrt(2)/2); Alpha: the same bar, since the circumradius is sqrt(2)/2. H0: 3 bars die at radius 1/2.
    for name, hp in (("rips", {"landmarks": 4, "max_edge_length": 2.0}), ("alpha", {})):
        sol = make_solver(name, TASK, seed=None, **hp).solve(_problem(SQUARE), Budget(), _noop)
        h0, h1 = sol["diagrams"]
        np.testing.assert_allclose(h1, [[0.5, math.sqrt(2) / 2]], atol=1e-12)
        fin = np.sort(h0[np.isfinite(h0[:, 1]), 1])
        np.testing.assert_allclose(fin, [0.5, 0.5, 0.5], atol=1e-12)
        assert np.isinf(h0[:, 1]).sum() == 1
        assert sol["meta"]["n_landmarks"] == 4


def test_rips_threshold_leaves_wide_cycles_open():
    t = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    circle = np.stack([np.cos(t), np.sin(t)], 1)
    sol = make_solver("rips", TASK, landmarks=40, max_edge_length=0.5).solve(_problem(circle), Budget(), _noop)
    h1 = sol["diagrams"][1]
    assert len(h1) == 1 and np.isinf(h1[0, 1])  # the unit circle never fills below edge length 0.5


def test_sparse_rips_close_to_alpha_on_the_voids():
    pb, ev = make_task(TASK).make(
        InstanceRef(
            TASK, "dev", "x", 0, {"family": "fidelity", "shape": "cheese", "N": 4000, "k": 4, "r_lo": 0.1, "r_hi": 0.2}
        )
    )
    pts = pb.points
    sol = make_solver("sparse-rips", TASK, seed=None).solve(_problem(pts), Budget(), _noop)
    ref = alpha_reference(*ev.key)
    top = lambda D: np.sort(D[:, 1] - D[:, 0])[::-1][:4]
    # (1 + eps)-interleaving with Rips, and Rips/2 is within a factor sqrt(2)-ish of Cech/Alpha in 3-D: the
    # four void lifetimes agree in order of magnitude and the fifth bar is noise for both
    assert np.all(top(sol["diagrams"][2]) > 0.3 * top(ref[2]))
    assert sol["meta"]["n_landmarks"] == 3000


def test_flood_reproduces_the_authors_flooder():
    """With flooder's own landmark choice (bucket FPS) and float64 input, the project's ``flood`` gives the
    diagrams of the authors' package to 1e-6 (same construction; a different Delaunay code and grid arithmetic);
    with exact FPS the landmarks differ and the diagrams only agree closely."""
    if not os.environ.get("CI"):
        require("flooder", "tda")
    from papergym.envs.tasks.persistent_homology import bottleneck

    x = np.random.default_rng(0).random((4000, 3))
    pb = _problem(x)
    a = make_solver("flooder", TASK, seed=None, n_landmarks=200, dtype="float64").solve(pb, Budget(), _noop)
    b = make_solver("flood", TASK, seed=None, n_landmarks=200, fps="bucket").solve(pb, Budget(), _noop)
    c = make_solver("flood", TASK, seed=None, n_landmarks=200).solve(pb, Budget(), _noop)
    assert a["meta"]["n_landmarks"] == 200 and a["meta"]["n_simplices"] == b["meta"]["n_simplices"]
    for k in range(3):
        assert len(a["diagrams"][k]) == len(b["diagrams"][k])
        assert bottleneck(a["diagrams"][k], b["diagrams"][k]) < 1e-6
        assert bottleneck(a["diagrams"][k], c["diagrams"][k]) < 0.06


def test_bad_baseline_hyperparameters():
    for name, hp, word in (
        ("rips", {"landmarks": 0}, "landmarks"),
        ("rips", {"max_edge_length": -1}, "max_edge"),
        ("sparse-rips", {"sparse": 0}, "sparse"),
        ("flooder", {"dtype": "int8"}, "dtype"),
        ("flooder", {"points_per_edge": 1}, "points_per_edge"),
        ("flood", {"fps": "x"}, "fps"),
    ):
        with pytest.raises(ValueError, match=word):
            make_solver(name, TASK, **hp)


# ------------------------------------------------------------------------------------------ metrics
def test_wasserstein1_known_values():
    a = np.array([[0.0, 1.0], [0.0, np.inf]])
    assert wasserstein1(a, a) == 0.0
    # one bar against nothing: matched to the diagonal at l_inf distance (d - b)/2
    assert wasserstein1(np.array([[0.0, 1.0]]), np.zeros((0, 2))) == pytest.approx(0.5, rel=0.011)
    assert wasserstein1(np.array([[0.0, 1.0], [0.5, 0.7]]), np.zeros((0, 2))) == pytest.approx(0.6, rel=0.011)
    # moving a bar: min(l_inf move, both to the diagonal)
    assert wasserstein1(np.array([[0.0, 1.0]]), np.array([[0.1, 1.05]])) == pytest.approx(0.1, rel=0.011)
    # essential bars: sorted birth differences, inf when the counts differ
    assert wasserstein1(np.array([[0.2, np.inf]]), np.array([[0.5, np.inf]])) == pytest.approx(0.3)
    assert wasserstein1(np.array([[0.2, np.inf]]), np.zeros((0, 2))) == math.inf


def test_valid_needs_every_dimension():
    t = make_task(TASK, fidelity_n=2000, seeds=[0], k=4)
    ref = t.instances()[0]
    _, ev = t.make(ref)
    ev.prepare()
    exact = list(alpha_reference(*ev.key))
    assert ev.evaluate(exact)["valid"] == 1.0 and ev.evaluate(exact)["w1_h2"] == 0.0
    skip = [np.zeros((0, 2)), np.zeros((0, 2)), exact[2]]  # H2 exact, H0 and H1 skipped
    out = ev.evaluate(skip)
    assert out["void_recovery"] == 1.0 and out["valid"] == 0.0 and out["bottleneck_h0"] == math.inf


# ------------------------------------------------------------------------------------------ classification
def test_classify_set_is_seeded_and_labelled():
    c1, y1 = classify_set(3, n=500, per_class=4, ks=(2, 5))
    c2, y2 = classify_set(3, n=500, per_class=4, ks=(2, 5))
    assert len(c1) == 8 and sorted(y1.tolist()) == [2] * 4 + [5] * 4 and np.array_equal(y1, y2)
    assert all(np.array_equal(a, b) for a, b in zip(c1, c2)) and c1[0].shape == (500, 3)
    c3, _ = classify_set(4, n=500, per_class=4, ks=(2, 5))
    assert not np.array_equal(c1[0], c3[0])


def test_features_and_split_accuracy():
    dg = [
        [np.zeros((1, 2)), np.array([[0.01, 0.02]]), np.array([[0.05, 0.05 + 0.01 * (i % 3 + 1)]] * (i % 3 + 1))]
        for i in range(30)
    ]
    y = np.array([i % 3 for i in range(30)])
    for kind in FEATURES:
        X = features(dg, 2, kind)
        assert X.shape[0] == 30 and np.all(np.isfinite(X))
        acc = split_accuracy(X, y, n_splits=4, seed=0)
        assert acc["accuracy"] == 1.0 and acc["accuracy_ci95"] == 0.0 and len(acc["per_split"]) == 4
    # essential bars are truncated at r_max, not dropped
    Xi = features([[np.zeros((0, 2)), np.array([[0.1, np.inf]]), np.zeros((0, 2))]], 2)
    assert Xi[0, 0] == pytest.approx(0.2)
    with pytest.raises(ValueError, match="features"):
        features(dg, 2, "silhouette")
    # random labels: about chance
    r = split_accuracy(np.random.default_rng(0).standard_normal((60, 5)), np.repeat([0, 1, 2], 20), 10, 1)
    assert r["accuracy"] < 0.6 and r["accuracy_ci95"] > 0


def test_classify_subtask_end_to_end():
    kw = {"subtask": "swiss-cheese-classification", "classify_n": 1500, "classify_per_class": 5, "n_splits": 3}
    t = make_task(TASK, **kw)
    refs = t.instances()
    assert [r.name for r in refs] == [f"classify/cheese/N=1500/s{s}" for s in (0, 1, 2)]
    pb, ev = t.make(refs[0])
    assert isinstance(pb, PHClassifyProblem) and pb.n_clouds == 15 and not hasattr(pb, "labels")
    sol = make_solver("flood", TASK, seed=0).solve(pb, t.default_budget, _noop)
    assert len(sol["diagrams"]) == 15 and sol["meta"]["n_landmarks"] == 300
    out = ev.evaluate(sol)
    assert 0.0 <= out["accuracy"] <= 1.0 and out["valid"] == 1.0
    with pytest.raises(ValueError, match="one diagram list per cloud"):
        ev.evaluate({"diagrams": sol["diagrams"][:-1]})
    bad = list(sol["diagrams"])
    bad[3] = [np.zeros((0, 2))]
    with pytest.raises(ValueError, match="cloud 3"):
        ev.evaluate(bad)


def test_solve_clouds_stops_at_the_budget():
    from papergym.envs.tasks.base import BudgetExceeded

    clouds = tuple(np.random.default_rng(i).random((50, 3)) for i in range(5))
    pb = PHClassifyProblem(
        clouds=clouds, max_dim=2, units="radius", family="classify", shape="cheese", N=50, d=3, n_clouds=5
    )
    import time

    def slow(p):
        time.sleep(0.05)
        return [np.zeros((0, 2))] * 3, {"n_simplices": 1.0}

    with pytest.raises(BudgetExceeded, match="of 5 clouds"):
        solve_clouds(pb, Budget(max_seconds=0.08), slow)
    assert len(solve_clouds(pb, Budget(), slow)["diagrams"]) == 5


# ------------------------------------------------------------------------------------------ kwargs
def test_points_kwarg():
    t = make_task(TASK, points=[1e4, 1e5])
    assert t.families == ("scale",) and t.scale_n == (10_000, 100_000) and t.reference_max_n == 100_000
    assert [r.name for r in t.instances()][:2] == ["scale/cheese/N=10000/s0", "scale/cheese/N=10000/s1"]
    assert len(t.instances()) == 6
    t6 = make_task(TASK, points=[1e6])
    assert t6.reference_max_n == 1_000_000 and t6.max_seconds == 600.0
    with pytest.raises(ValueError, match="points"):
        make_task(TASK, points=[1.5e3 + 0.5])
    with pytest.raises(ValueError, match="subtask"):
        make_task(TASK, points=[1e4], subtask="swiss-cheese-classification")
    with pytest.raises(ValueError, match="subtask"):
        make_task(TASK, subtask="segmentation")
    with pytest.raises(ValueError, match="classify_k"):
        make_task(TASK, classify_k=[4])


def test_cli_points_and_subtask(tmp_path):
    from papergym.leaderboard.cli import main

    rc = main(
        [
            "bench",
            TASK,
            "--points",
            "2e3",
            "--seeds",
            "0",
            "--solvers",
            "flood,alpha",
            "--k",
            "3",
            "--backend",
            "serial",
            "--out",
            str(tmp_path / "b"),
            "--no-cache",
        ]
    )
    assert rc == 0
    txt = (tmp_path / "b" / "table.txt").read_text()
    assert "scale/cheese/2000" in txt and "x alpha" in txt
    assert (tmp_path / "b" / "time_vs_n.png").exists() and (tmp_path / "b" / "diagrams.png").exists()


def test_report_columns_from_a_bench(tmp_path):
    from papergym.leaderboard.runner.bench import bench

    res = bench(
        TASK,
        solvers=["flood", "alpha"],
        task_kwargs={"fidelity_n": 2000, "seeds": [0], "k": 4, "shapes": ["cheese"]},
        backend="serial",
        out=tmp_path,
        cache=False,
    )
    rep = res.extra_report()
    line = next(ln for ln in rep.splitlines() if ln.startswith("fidelity/cheese/2000") and " flood " in ln)
    assert "1.00" in line  # valid and voids
    assert (res.runs.peak_rss_mb > 0).all() and np.isfinite(res.runs.solve_rss_mb).all()
    assert (res.runs[res.runs.solver == "alpha"].w1_h1 == 0).all()


def test_reference_disk_cache_for_dev_instances_only(tmp_path, monkeypatch):
    import papergym.envs.tasks.persistent_homology.task as ph

    monkeypatch.setenv("PAPERGYM_CACHE", str(tmp_path / "cells"))
    monkeypatch.setattr(ph, "DISK_CACHE_MIN_N", 0)
    monkeypatch.setenv("PAPERGYM_TEST_SECRET", "s3cret")
    t = make_task(TASK, fidelity_n=1500, seeds=[0], shapes=["cheese"], k=3)
    _, dev = t.make(t.instances("dev")[0])
    _, hidden = t.make(t.instances("test")[0])
    assert dev.disk_cache and not hidden.disk_cache
    ph.cached_reference.cache_clear()
    dev.prepare()
    hidden.prepare()
    files = list((tmp_path / "cells" / "_ph_alpha").glob("*.npz"))
    assert len(files) == 1 and "N1500-s0" in files[0].name  # the hidden instance's reference is not written
    ph.cached_reference.cache_clear()
    again = ph.cached_reference(dev.key)  # read back from the file
    for a, b in zip(again, ph.alpha_reference(*dev.key)):
        np.testing.assert_array_equal(a, b)
    files[0].write_bytes(b"corrupt")
    ph.cached_reference.cache_clear()
    assert len(ph.cached_reference(dev.key)) == 3  # recomputed


def test_scoring_memo_is_by_content_and_w1_size_limit():
    t = make_task(TASK, fidelity_n=1500, seeds=[0], shapes=["cheese"], k=3, wasserstein_max_n=1000)
    _, ev = t.make(t.instances()[0])
    assert not ev.wasserstein  # N = 1500 > wasserstein_max_n
    exact = [np.array(D) for D in alpha_reference(*ev.key)]
    first = ev.evaluate(exact)
    assert math.isnan(first["w1_h1"]) and first["bottleneck_max"] == 0.0
    assert ev.evaluate([D.copy() for D in exact]) == first  # same content: served from the memo
    exact[2] = exact[2][:-1]  # changed content: scored again
    assert ev.evaluate(exact)["bottleneck_h2"] > 0
