"""PointCloudPH-v0: the generators are seeded and respect their geometry, the Alpha baseline matches the
reference exactly, ``flood`` with every point as a landmark is within its sampling bound, the default ``flood``
recovers the voids, errors name the problem, and a small end-to-end bench runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym_tests import require  # the helper of tests/conftest.py

require("gudhi", "tda")

from papergym.agents.base import list_solvers, make_solver
from papergym.agents.solvers.flood import sampling_error_bound
from papergym.envs.tasks.base import Budget, InstanceRef, make_task
from papergym.envs.tasks.persistent_homology.task import (
    GAP,
    annulus,
    bottleneck,
    check_diagrams,
    figure_eight,
    noisy_torus,
    swiss_cheese,
)

TASK = "PointCloudPH-v0"
SMALL = {"fidelity_n": 2000, "seeds": [0]}


def _noop(*a, **k):
    return None


def _ref(shape="cheese", n=2000, seed=0, family="fidelity", **extra):
    p = {"family": family, "shape": shape, "N": n}
    if shape == "cheese":
        p.update(k=extra.get("k", 6), r_lo=extra.get("r_lo", 0.1), r_hi=extra.get("r_hi", 0.2))
    return InstanceRef(TASK, "dev", f"{family}/{shape}/N={n}/s{seed}", seed, p)


def test_registered_solvers():
    roles = {s.name: s.role for s in list_solvers(TASK)}
    assert roles == {
        "flood": "paper",
        "alpha": "baseline",
        "rips": "baseline",
        "sparse-rips": "baseline",
        "flooder": "reference",
    }


@pytest.mark.parametrize("solver", ["flood", "alpha", "rips", "sparse-rips", "flooder"])
def test_every_solver_runs_on_every_family(solver):
    """Each registered solver returns a well-formed, scoreable solution on a small instance of each family
    (3-D fidelity and scale clouds, a 2-D annulus, the classification set)."""
    import os

    if solver == "flooder" and not os.environ.get("CI"):
        require("flooder", "tda")
    hp = {"rips": {"landmarks": 150}, "sparse-rips": {"landmarks": 300}}.get(solver, {})
    hp.update({"flood": {"n_landmarks": 100}, "flooder": {"n_landmarks": 100}}.get(solver, {}))
    cases = [
        (make_task(TASK, **SMALL), _ref("cheese", 1500, k=3)),
        (make_task(TASK, **SMALL), _ref("annulus", 800)),
        (make_task(TASK, families=["scale"], scale_n=1500, seeds=[0]), _ref("cheese", 1500, family="scale", k=3)),
    ]
    tc = make_task(TASK, subtask="classify", classify_n=600, classify_per_class=3, n_splits=2)
    cases.append((tc, tc.instances()[0]))
    for task, ref in cases:
        pb, ev = task.make(ref)
        out = ev.evaluate(make_solver(solver, TASK, seed=0, **hp).solve(pb, task.default_budget, _noop))
        assert set(out) >= {"valid", "n_paired_simplices", "n_landmarks"} and out["n_paired_simplices"] > 0, (
            ref.name,
            out,
        )


def test_instances_and_problem():
    t = make_task(TASK)
    names = [r.name for r in t.instances()]
    assert len(names) == 20 and "fidelity/cheese/N=10000/s0" in names and "fidelity/torus/N=30000/s4" in names
    t2 = make_task(TASK, families=["scale"], scale_n=5000, seeds=[1])
    assert [r.name for r in t2.instances()] == ["scale/cheese/N=5000/s1"]
    pb, _ = t.make(_ref("torus", 3000))
    assert pb.points.shape == (3000, 3) and pb.max_dim == 2 and pb.units == "radius" and (pb.N, pb.d) == (3000, 3)
    pb2, _ = t.make(_ref("annulus", 500))
    assert pb2.points.shape == (500, 2) and pb2.max_dim == 1
    assert type(pb).PRIVATE_FIELDS == ()


def test_generators_are_seeded_and_respect_their_geometry():
    a, c, r = swiss_cheese(3000, 6, 0.1, 0.2, seed=3)
    b, c2, r2 = swiss_cheese(3000, 6, 0.1, 0.2, seed=3)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(c, c2)
    assert not np.array_equal(a, swiss_cheese(3000, 6, 0.1, 0.2, seed=4)[0])
    assert a.shape == (3000, 3) and np.all((a >= 0) & (a <= 1))
    assert np.all((r >= 0.1) & (r <= 0.2))
    dist = np.linalg.norm(a[:, None] - c[None], axis=2)
    assert np.all(dist >= r)  # no point inside a void
    assert np.all(c - r[:, None] >= GAP - 1e-12) and np.all(c + r[:, None] <= 1 - GAP + 1e-12)
    cc = np.linalg.norm(c[:, None] - c[None], axis=2) + np.eye(6) * 10
    assert np.all(cc >= r[:, None] + r[None] + GAP - 1e-12)  # voids do not overlap
    t = noisy_torus(4000, seed=1)
    np.testing.assert_array_equal(t, noisy_torus(4000, seed=1))
    core = np.hypot(t[:, 0], t[:, 1]) - 1.0
    tube = np.hypot(core, t[:, 2])  # distance to the core circle
    assert abs(np.mean(tube) - 0.4) < 0.01 and np.max(np.abs(tube - 0.4)) < 0.12
    an = annulus(3000, seed=0)
    rad = np.linalg.norm(an, axis=1)
    assert an.shape == (3000, 2) and rad.min() > 0.4 and rad.max() < 1.1
    f8 = figure_eight(3000, seed=0)
    d8 = np.minimum(np.linalg.norm(f8 - [-1, 0], axis=1), np.linalg.norm(f8 - [1, 0], axis=1))
    assert np.max(np.abs(d8 - 1)) < 0.12


def test_alpha_scores_zero():
    t = make_task(TASK, **SMALL)
    pb, ev = t.make(_ref("cheese", 2000))
    sol = make_solver("alpha", TASK, seed=0).solve(pb, Budget(), _noop)
    m = ev.evaluate(sol)
    assert m["bottleneck_h0"] == m["bottleneck_h1"] == m["bottleneck_h2"] == m["bottleneck_max"] == 0.0
    assert m["n_landmarks"] == 2000 and m["n_paired_simplices"] > 2000


def test_flood_with_all_points_is_within_its_sampling_bound():
    t = make_task(TASK, **SMALL)
    pb, ev = t.make(_ref("cheese", 2000, seed=1))
    s = make_solver("flood", TASK, seed=None, n_landmarks=2000, points_per_edge=4)
    from papergym.agents.solvers.flood import flood_persistence

    dgms, filt = flood_persistence(pb.points, n_landmarks=2000, points_per_edge=4, return_filtration=True)
    bound = max(float(sampling_error_bound(pb.points, sm, 4).max()) for sm in filt.simplices[1:])
    m = ev.evaluate(s.solve(pb, Budget(), _noop))
    for k in range(3):
        assert m[f"bottleneck_h{k}"] <= bound + 1e-12
    assert m["n_landmarks"] == 2000


def test_flood_default_recovers_the_voids():
    # radii U(0.15, 0.2): at N = 5,000 voids near r = 0.1 fall below the threshold even in Alpha
    t = make_task(TASK, k=4, r_lo=0.15, r_hi=0.2, fidelity_n=5000, seeds=[2])
    pb, ev = t.make(_ref("cheese", 5000, seed=2, k=4, r_lo=0.15, r_hi=0.2))
    sol = make_solver("flood", TASK, seed=None).solve(pb, Budget(), _noop)
    D2 = sol["diagrams"][2]
    pers = np.sort(D2[:, 1] - D2[:, 0])[::-1]
    assert int(np.sum(pers > 0.075)) == 4 and pers[4] < 0.04  # k prominent H2 bars (threshold 0.5 r_lo), a gap
    m = ev.evaluate(sol)
    assert m["void_recovery"] == 1.0 and m["n_landmarks"] == 1000


def test_bottleneck_handles_infinite_bars():
    a = np.array([[0.0, math.inf], [0.1, 0.5]])
    assert bottleneck(a, np.array([[0.0, math.inf], [0.1, 0.5]])) == 0.0
    assert bottleneck(a, np.array([[0.3, math.inf], [0.1, 0.5]])) == pytest.approx(0.3)
    assert bottleneck(a, np.array([[0.1, 0.5]])) == math.inf
    assert bottleneck(a, np.array([[0.0, math.inf]])) == pytest.approx(0.2)  # (0.1, 0.5) to the diagonal


@pytest.mark.parametrize(
    "kw, word",
    [
        ({"families": "clusters"}, "families"),
        ({"shapes": ["cube"]}, "shapes"),
        ({"fidelity_n": 0}, "fidelity_n"),
        ({"r_lo": -0.1}, "r_lo"),
        ({"r_lo": 0.2, "r_hi": 0.1}, "r_hi"),
        ({"seeds": [-1]}, "seeds"),
        ({"tol": 0}, "tol"),
        ({"max_seconds": -1}, "max_seconds"),
    ],
)
def test_bad_task_kwargs(kw, word):
    with pytest.raises(ValueError, match=word):
        make_task(TASK, **kw)


def test_malformed_solutions():
    t = make_task(TASK, **SMALL)
    _, ev = t.make(_ref("annulus", 300))
    ok = [np.array([[0.0, np.inf]]), np.zeros((0, 2))]
    ev.evaluate(ok)
    bad = [
        (np.zeros((2, 2)), "list"),
        ([np.zeros((0, 2))], "2 dimensions"),
        ([np.zeros((1, 3)), np.zeros((0, 2))], "shape"),
        ([np.array([[np.nan, 1.0]]), np.zeros((0, 2))], "births"),
        ([np.array([[0.0, np.nan]]), np.zeros((0, 2))], "deaths"),
        ([np.array([[0.5, 0.1]]), np.zeros((0, 2))], ">= births"),
        ({"diagram": ok}, "diagrams"),
        ({"diagrams": ok, "meta": {"n_simplices": "many"}}, "n_simplices"),
        ([["a", "b"], np.zeros((0, 2))], "numeric"),
    ]
    for sol, word in bad:
        with pytest.raises(ValueError, match=word):
            check_diagrams(sol, 1) if not isinstance(sol, dict) else ev.evaluate(sol)
        with pytest.raises(ValueError):
            ev.evaluate(sol)


def test_finalize_par2():
    t = make_task(TASK, **SMALL)
    assert t.finalize({"valid": 1.0}, 2.5, "ok")["par2_seconds"] == 2.5
    assert t.finalize({"valid": 0.0}, 2.5, "ok")["par2_seconds"] == 120.0
    out = t.finalize({}, None, "error", Budget(max_seconds=10))
    assert out["par2_seconds"] == 20.0 and math.isnan(out["time_s"])


def test_bench_end_to_end(tmp_path):
    from papergym.leaderboard.runner.bench import bench

    res = bench(
        TASK,
        solvers=["flood", "alpha"],
        task_kwargs={"fidelity_n": 2000, "seeds": [0], "k": 4},
        backend="serial",
        out=tmp_path,
        cache=False,
    )
    assert len(res.runs) == 4 and set(res.runs.status) == {"ok"}
    alpha = res.runs[res.runs.solver == "alpha"]
    assert (alpha.bottleneck_max == 0).all() and (alpha.valid == 1).all()
    assert np.isfinite(res.runs.par2_seconds).all()
    assert "par2_seconds" in res.format_table()
