"""LipschitzApprox-v0: the certifier's closed forms, exact certified representations built by hand (reflection
and sort-gadget gradient steps), hostile solutions, the empirical Lipschitz estimate never above the certificate,
seeded instances and the dev/test splits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.envs.tasks import base
from papergym.envs.tasks.base import Budget, MissingSecretError, make_task
from papergym.envs.tasks.lipschitz_approx import (
    LipschitzEvaluator,
    LipschitzProblem,
    empirical_lipschitz,
    parse_network,
    target_function,
)

TASK = "LipschitzApprox-v0"


def _task(**kw):
    args = {"families": "approx", "dims": [1, 2, 5], "seeds": [0], "emp_points": 2000}
    args.update(kw)
    return make_task(TASK, **args)


def _inst(task, name):
    return task.make(next(r for r in task.instances() if r.name.startswith(name)))


def lin(A, c=None):
    A = np.atleast_2d(np.asarray(A, float))
    return {"type": "Linear", "A": A, "c": np.zeros(A.shape[0]) if c is None else np.asarray(c, float)}


def gs(W, h, b=None):
    W = np.atleast_2d(np.asarray(W, float))
    return {"type": "GradStep", "W": W, "b": np.zeros(W.shape[0]) if b is None else np.asarray(b, float), "h": h}


def out(v, c=0.0):
    return {"type": "Output", "v": np.asarray(v, float), "c": c}


# ------------------------------------------------------------------------------------ exact representation
@pytest.mark.parametrize("d", [1, 2, 5])
def test_abs_is_represented_exactly_by_a_reflection_step(d):
    """|x1| = x1 + 2 relu(-x1): one gradient step with w = -e1 and h = 2/|w|^2 (the convex potential limit)."""
    _, ev = _inst(_task(targets="f1"), f"approx/d={d}/f1")
    net = [gs(-np.eye(d)[:1], 2.0), out(np.eye(d)[0])]
    m = ev.evaluate(net)
    assert m["error"] < 1e-10 and m["sup_err"] < 1e-10
    assert m["cert_bound"] == pytest.approx(1.0, abs=1e-12) and m["certified"] == 1.0
    assert m["emp_lip"] == pytest.approx(1.0, abs=1e-9)
    assert m["n_params"] == 2 * d + 3 and math.isnan(m["clean_acc"])


def _f3_orthonormal_evaluator(seed=3):
    rng = np.random.default_rng(seed)
    d = 5
    A = np.linalg.qr(rng.standard_normal((d, d)))[0][:4]  # orthonormal rows a1..a4
    b = rng.uniform(-0.5, 0.5, 4)
    f = target_function("f3", {"a": A, "b": b})
    X = rng.uniform(-1, 1, (512, d))
    Xt = rng.uniform(-1, 1, (20_000, d))
    problem = LipschitzProblem(
        family="approx", target="f3", X=X, y=f(X), d=d, out_dim=1, loss="mse", domain=(-np.ones(d), np.ones(d))
    )
    return A, b, LipschitzEvaluator(problem, Xt, f(Xt), box=(-np.ones(d), np.ones(d)), seed=seed, emp_points=2000)


def test_f3_is_represented_exactly_by_sort_gadgets_with_a_certificate():
    """f3 = max(min(l1, l2), min(l3, l4)) with orthonormal a's: lift by the a's (norm 1), the sort gadget
    x - relu(w.x) w, w = (-1, 1), step 1 (|w|^2 h = 2) on both pairs, then on (min12, min34); read coordinate 2."""
    A, b, ev = _f3_orthonormal_evaluator()
    sort = lambda: gs([[-1.0, 1.0]], 1.0)
    net = [
        lin(A, b),
        {"type": "BlockDiag", "nets": [[sort()], [sort()]], "split": 2},  # (max12, min12, max34, min34)
        gs([[0.0, -1.0, 0.0, 1.0]], 1.0),  # coordinates 2, 4 -> (max(min12, min34), min(...))
        out([0.0, 1.0, 0.0, 0.0]),
    ]
    m = ev.evaluate(net)
    assert m["error"] < 1e-10 and m["sup_err"] < 1e-10
    assert m["cert_bound"] <= 1.0 + 1e-12
    assert m["emp_lip"] <= m["cert_bound"] + 1e-12 and m["emp_lip"] > 0.99
    # the same network with the two pair sorts as one GradStep of two orthogonal rows (|W|^2 = 2, h = 1)
    net2 = [lin(A, b), gs([[-1.0, 1.0, 0.0, 0.0], [0.0, 0.0, -1.0, 1.0]], 1.0), *net[2:]]
    assert ev.evaluate(net2)["error"] < 1e-10
    # an off-by-one readout is not exact
    assert ev.evaluate([*net[:3], out([1.0, 0.0, 0.0, 0.0])])["error"] > 0.1


def test_the_instance_targets_are_1_lipschitz():
    task = _task(dims=[2, 5])
    for ref in task.instances():
        problem, ev = task.make(ref)
        X = problem.X
        i, j = np.random.default_rng(0).integers(0, len(X), (2, 4000))
        dy = np.abs(problem.y[i] - problem.y[j])
        dx = np.linalg.norm(X[i] - X[j], axis=1)
        assert np.all(dy <= dx + 1e-12), ref.name
        assert problem.X.shape == (4096, problem.d) and problem.loss == "mse" and problem.domain is not None
        assert ev.X_test.shape[0] == (200**2 if problem.d == 2 else 100_000)


# ------------------------------------------------------------------------------------------- certifier
def test_certifier_closed_forms():
    problem, ev = _inst(_task(targets="f1"), "approx/d=2/f1")
    rng = np.random.default_rng(1)
    U, V = np.linalg.qr(rng.standard_normal((2, 2)))[0], np.linalg.qr(rng.standard_normal((2, 2)))[0]
    A = U @ np.diag([3.0, 0.5]) @ V.T
    m = ev.evaluate([lin(A), out([0.6, 0.8])])
    assert m["cert_bound"] == pytest.approx(3.0, rel=1e-12) and m["error"] == 1.0 and m["certified"] == 0.0
    assert m["emp_lip"] <= 3.0 + 1e-9 and m["rel_rmse"] > 0  # the fit is still reported
    W = 2.0 * np.array([[0.6, 0.8]])  # |W|_2^2 = 4
    assert ev.evaluate([gs(W, 0.5), out([1, 0])])["cert_bound"] == pytest.approx(1.0)  # h |W|^2 = 2
    m = ev.evaluate([gs(W, 0.75), out([1, 0])])  # h > 2/|W|^2: bound h|W|^2 - 1 = 2
    assert m["cert_bound"] == pytest.approx(2.0) and m["error"] == 1.0
    assert 1.0 < m["emp_lip"] <= 2.0 + 1e-9
    # per-unit steps: max(h) counts, not the mean
    W2 = np.array([[1.0, 0.0], [0.0, 0.5]])
    assert ev.evaluate([gs(W2, [0.5, 3.0]), out([1, 0])])["cert_bound"] == pytest.approx(2.0)
    # rescaling W by a and h by 1/a^2 is the same map and the same bound (scale invariance)
    for a in (1e-3, 1.0, 1e3):
        assert ev.evaluate([gs(a * W, 0.75 / a**2), out([1, 0])])["cert_bound"] == pytest.approx(2.0)
    # BlockDiag: the max of its parts; Output: |v|_2
    bd = {"type": "BlockDiag", "nets": [[lin([[0.5]])], [lin([[2.0]])]], "split": 1}
    assert ev.evaluate([bd, out([0.3, 0.4])])["cert_bound"] == pytest.approx(2.0 * 0.5)
    assert ev.evaluate([out([3.0, 4.0])])["cert_bound"] == pytest.approx(5.0)
    # SLL: 1 by construction without t; with t, 1 iff diag(t) >= W^T W, else inf
    Ws = rng.standard_normal((2, 3))
    sll = {"type": "SLL", "W": Ws, "b": np.zeros(3), "q": np.ones(3)}
    assert ev.evaluate([sll, out([1, 0])])["cert_bound"] == pytest.approx(1.0)
    lam = np.linalg.eigvalsh(Ws.T @ Ws).max()
    assert ev.evaluate([{**sll, "t": np.full(3, lam * (1 + 1e-9))}, out([1, 0])])["cert_bound"] == pytest.approx(1.0)
    m = ev.evaluate([{**sll, "t": np.full(3, 0.5 * lam)}, out([1, 0])])
    assert m["cert_bound"] == 1e300 and m["error"] == 1.0
    # a zero matrix in front of an uncertified layer does not hide it
    assert ev.evaluate([lin(np.zeros((2, 2))), {**sll, "t": np.full(3, 0.5 * lam)}, out([1, 0])])["cert_bound"] == 1e300


def test_scaling_tricks_cannot_beat_the_certificate():
    """Random vocabulary networks (every layer type, per-unit steps beyond 2/|W|^2, SLL with a valid t, BlockDiag,
    maxmin/abs/tanh): the empirical Lipschitz constant never exceeds the certified bound."""
    rng = np.random.default_rng(7)
    d = 3
    lo, hi = -np.ones(d), np.ones(d)
    for trial in range(12):
        n = 4
        layers = [lin(rng.standard_normal((n, d)) * rng.uniform(0.2, 3), rng.standard_normal(n))]
        for _ in range(3):
            kind = rng.integers(5)
            if kind == 0:
                W = rng.standard_normal((3, n)) * 10 ** rng.uniform(-1, 1)
                layers.append(
                    gs(W, rng.uniform(0, 4) / np.linalg.norm(W, 2) ** 2 * rng.uniform(0, 1, 3), rng.standard_normal(3))
                )
            elif kind == 1:
                W = rng.standard_normal((n, 3))
                t = np.linalg.eigvalsh(W.T @ W).max() * rng.uniform(1.0, 2.0, 3)
                layers.append({"type": "SLL", "W": W, "b": rng.standard_normal(3), "q": np.ones(3), "t": t})
            elif kind == 2:
                layers.append({"type": "Act", "fn": ["relu", "tanh", "abs", "maxmin"][rng.integers(4)]})
            elif kind == 3:
                layers.append(
                    {
                        "type": "BlockDiag",
                        "split": 2,
                        "nets": [
                            [gs(rng.standard_normal((2, 2)), 0.5), {"type": "Act", "fn": "maxmin"}],
                            [lin(rng.standard_normal((2, 2)) * 2)],
                        ],
                    }
                )
            else:
                layers.append(
                    {
                        "type": "SLL",
                        "W": rng.standard_normal((n, 5)),
                        "b": rng.standard_normal(5),
                        "q": rng.uniform(0.1, 3, 5),
                    }
                )
        layers.append(out(rng.standard_normal(n)))
        net = parse_network(layers, d)
        cert = net.bound()
        emp = empirical_lipschitz(net, lo, hi, np.random.default_rng(trial), n_points=3000, steps=50)
        assert emp <= cert * (1 + 1e-9), (trial, emp, cert)


def test_empirical_lipschitz_of_a_linear_map_is_its_norm_and_backprop_matches_differences():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((3, 4))
    net = parse_network([lin(A), out([1.0, 0, 0])], 4)
    emp = empirical_lipschitz(net, -np.ones(4), np.ones(4), rng, n_points=100, steps=5)
    assert emp == pytest.approx(np.linalg.norm(A[0]), rel=1e-9)
    net = parse_network(
        [
            lin(A),
            {"type": "Act", "fn": "tanh"},
            gs(rng.standard_normal((2, 3)), [0.3, 0.7]),
            {"type": "Act", "fn": "maxmin"},
            {"type": "SLL", "W": rng.standard_normal((3, 2)), "b": np.ones(2), "q": np.ones(2)},
            lin(rng.standard_normal((2, 3))),
        ],
        4,
        out_dim=2,
    )
    x = rng.standard_normal((5, 4))
    _, caches = net.forward_cache(x)
    g = rng.standard_normal((5, 2))
    vjp = net.vjp(caches, g)
    for k in range(4):
        e = np.eye(4)[k] * 1e-6
        fd = (net(x + e) - net(x - e)) / 2e-6
        np.testing.assert_allclose(vjp[:, k], np.sum(fd * g, axis=1), rtol=1e-5, atol=1e-7)


# ------------------------------------------------------------------------------------------ hostile input
def test_hostile_solutions_are_rejected_with_the_layer_named():
    problem, ev = _inst(_task(targets="f1"), "approx/d=2/f1")
    ok = [lin(np.eye(2)), out([1.0, 0.0])]
    assert ev.evaluate(ok)["cert_bound"] == pytest.approx(1.0)
    cases = [
        ([lin(np.eye(3)), out([1, 0, 0])], r"layer 0 \(Linear\)\.A.*axis 1 must be 2"),
        ([{"type": "Linear", "A": np.eye(2), "c": [np.nan, 0]}, out([1, 0])], r"layer 0 \(Linear\)\.c must be finite"),
        ([gs([[1.0, 0.0]], -0.1), out([1, 0])], r"layer 0 \(GradStep\)\.h must be >= 0"),
        ([gs([[1.0, 0.0]], [0.1, 0.2]), out([1, 0])], r"layer 0 \(GradStep\)\.h must have shape"),
        ([{"type": "Conv", "A": np.eye(2)}, out([1, 0])], r"layer 0 has unknown type 'Conv'"),
        ([{**lin(np.eye(2)), "scale": 0.1}, out([1, 0])], r"layer 0 \(Linear\) has unknown field\(s\) scale"),
        ([{"type": "GradStep", "W": np.eye(2), "b": np.zeros(2)}, out([1, 0])], r"missing field\(s\) h"),
        ([out([1, 0]), lin(np.eye(1))], r"layer 0 \(Output\) must be the last layer"),
        ([lin(np.eye(2))], r"output width is 2, the problem needs 1"),
        ([lin(np.eye(2), [0, 0]), {"type": "Act", "fn": "softmax"}, out([1, 0])], r"layer 1 \(Act\)\.fn"),
        ([{"type": "Linear", "A": "eye", "c": [0, 0]}, out([1, 0])], r"\.A must be a real array"),
        ([{"type": "Linear", "A": np.eye(2) * 1j, "c": [0, 0]}, out([1, 0])], r"\.A must hold real numbers"),
        ([{"type": "Linear", "A": np.array([[True, False], [False, True]]), "c": [0, 0]}, out([1, 0])], "real numbers"),
        ([{"type": "BlockDiag", "nets": [[], []], "split": 2}, out([1, 0])], r"split must satisfy 0 < split < 2"),
        ([{"type": "BlockDiag", "nets": [[], []], "split": True}, out([1, 0])], r"split must be an integer"),
        (
            [{"type": "BlockDiag", "nets": [[], [lin(np.eye(2))]], "split": 1}, out([1, 0])],
            r"layer 0 \(BlockDiag\)\.nets\[1\]\[0\] \(Linear\)\.A",
        ),
        ([{"type": "BlockDiag", "nets": [[], [out([1.0])]], "split": 1}, out([1, 0])], r"must be the last layer"),
        ([{"type": "SLL", "W": np.eye(2), "b": np.zeros(2), "q": [1.0, 0.0]}, out([1, 0])], r"\.q must be > 0"),
        (
            [{"type": "SLL", "W": np.eye(2), "b": np.zeros(2), "q": [1.0, 1.0], "t": [1.0, -1]}, out([1, 0])],
            r"\.t must be > 0",
        ),
        ([lin(np.eye(2))] * 1100 + [out([1, 0])], "more than 1024 layers"),
        ({"layers": ok, "secret": 1}, "unknown key"),
        ({"weights": ok}, "needs a 'layers' entry"),
        ("network", "must be a list of layer dicts"),
        ([], "no layers"),
        ([5, out([1, 0])], r"layer 0 must be a dict"),
    ]
    for sol, msg in cases:
        with pytest.raises(ValueError, match=msg):
            ev.evaluate(sol)
    # wrong input dimension: a network for d = 3 on a d = 2 problem
    with pytest.raises(ValueError, match=r"layer 0 \(GradStep\)\.W"):
        ev.evaluate([gs(np.ones((1, 3)), 0.1), out([1, 0, 0])])


# ------------------------------------------------------------------------------------------- robust, digits
def test_robust_metrics_from_a_linear_classifier():
    task = make_task(TASK, families="robust", seeds=[1], emp_points=500)
    problem, ev = task.make(task.instances()[0])
    assert problem.X.shape == (3200, 2) and problem.loss == "bce" and set(np.unique(problem.y)) == {0.0, 1.0}
    assert ev.X_test.shape == (800, 2) and abs(np.mean(problem.y) - 0.5) < 0.01  # stratified
    w = np.array([0.3, -0.4])
    net = [out(w, 0.1)]
    m = ev.evaluate(net)
    f = ev.X_test @ w + 0.1
    correct = np.where(ev.y_test > 0.5, f > 0, f < 0)
    assert m["clean_acc"] == pytest.approx(correct.mean())
    for e in (0.05, 0.1, 0.2):
        assert m[f"cert_acc@{e:g}"] == pytest.approx(np.mean(correct & (np.abs(f) > e * 0.5)))
    assert m["error"] == pytest.approx(1 - m["cert_acc@0.1"]) and m["cert_bound"] == pytest.approx(0.5)
    assert math.isnan(m["rel_rmse"]) and math.isnan(m["sup_err"])
    m2 = ev.evaluate([out(4 * w, 0.4)])  # same classifier, bound 2: not certified
    assert m2["error"] == 1.0 and m2["clean_acc"] == m["clean_acc"]


def test_paper_scale_and_digits():
    task = make_task(TASK, paper_scale=True, dims=1, targets="f1", seeds=[0], emp_points=200, emp_steps=2)
    assert task.default_budget == Budget(max_seconds=600.0, max_iterations=1000)
    assert [r.name for r in task.instances()] == ["approx/d=1/f1/s0", "robust/moons/s0", "digits/s0"]
    assert make_task(TASK).families == ("approx", "robust")
    assert make_task(TASK).default_budget == Budget(max_seconds=60.0, max_iterations=200)
    problem, ev = task.make(task.instances()[2])
    assert problem.X.shape == (1437, 64) and problem.out_dim == 10 and problem.loss == "ce"
    A = np.zeros((10, 64))
    A[np.arange(10), np.arange(10)] = 1.0
    m = ev.evaluate([lin(A)])
    assert m["cert_bound"] == pytest.approx(1.0) and 0 <= m["cert_acc@0.2"] <= m["cert_acc@0.1"] <= m["clean_acc"]
    F = ev.X_test @ A.T
    top = np.sort(F, axis=1)
    correct = np.argmax(F, axis=1) == ev.y_test
    assert m["cert_acc@0.1"] == pytest.approx(np.mean(correct & (top[:, -1] - top[:, -2] > np.sqrt(2) * 0.1)))
    with pytest.raises(ValueError, match="output width is 1, the problem needs 10"):
        ev.evaluate([out(np.ones(64))])


# ---------------------------------------------------------------------------------------- instances, splits
def test_instances_are_seeded_and_independent():
    task = _task(seeds=[0, 1])
    names = [r.name for r in task.instances()]
    assert len(names) == 3 * 4 * 2 and names[0] == "approx/d=1/f1/s0"
    a1, _ = _inst(task, "approx/d=5/f3/s0")
    a2, _ = _inst(task, "approx/d=5/f3/s0")
    b, _ = _inst(task, "approx/d=5/f3/s1")
    np.testing.assert_array_equal(a1.X, a2.X)
    np.testing.assert_array_equal(a1.y, a2.y)
    assert not np.allclose(a1.y, b.y)
    c, _ = _inst(task, "approx/d=5/f4/s0")  # same seed, other target: same inputs, other labels
    np.testing.assert_array_equal(a1.X, c.X)
    assert not np.allclose(a1.y, c.y)
    assert type(a1).PRIVATE_FIELDS == () and a1.target == "f3" and not hasattr(a1, "params")


def test_test_split_needs_the_secret_and_differs_from_dev(monkeypatch):
    task = _task(dims=2, targets="f2")
    monkeypatch.delenv(base.SECRET_ENV, raising=False)
    with pytest.raises(MissingSecretError):
        task.instances("test")
    monkeypatch.setenv(base.SECRET_ENV, "s3cret")
    test = task.instances("test")
    assert [r.name for r in test] == [f"approx/d=2/f2/t{i}" for i in range(5)]
    assert all(r.split == "test" and r.seed not in (0, 1, 2, 3, 4) for r in test)
    p_test, _ = task.make(test[0])
    p_dev, _ = task.make(task.instances()[0])
    assert not np.allclose(p_test.y, p_dev.y)
    monkeypatch.setenv(base.SECRET_ENV, "other")
    assert [r.seed for r in task.instances("test")] != [r.seed for r in test]


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"families": "mnist"}, "families"),
        ({"dims": 0}, "dims"),
        ({"dims": 100}, "dims must be <= 64"),
        ({"targets": "f9"}, "targets"),
        ({"epochs": 0}, "epochs"),
        ({"paper_scale": "yes"}, "paper_scale"),
        ({"max_seconds": -1}, "max_seconds"),
        ({"seeds": [-1]}, "seeds"),
        ({"n_train": 1}, "n_train"),
        ({"cert_tol": -1e-3}, "cert_tol"),
        ({"f4_freq": 0}, "f4_freq"),
        ({"emp_steps": -1}, "emp_steps"),
    ],
)
def test_bad_task_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        make_task(TASK, **kw)


def test_make_rejects_foreign_instances_and_finalize_sets_seconds():
    task = _task()
    other = make_task("DeepRegression-v0", seeds=[0]).instances()[0]
    with pytest.raises(ValueError, match="belongs to task"):
        task.make(other)
    assert task.finalize({"error": 0.5, "train_seconds": float("nan")}, 3.5, "ok")["train_seconds"] == 3.5


def test_report_and_figures(tmp_path):
    import pandas as pd

    rows = []
    for lab, err, cert in (("lip-resnet", 0.1, 1.0), ("mlp-unconstrained", 1.0, 7.0)):
        for s in range(2):
            rows.append(
                {
                    "instance": f"approx/d=1/f1/s{s}",
                    "label": lab,
                    "status": "ok",
                    "seconds": 2.0,
                    "error": err,
                    "rel_rmse": 0.05,
                    "cert_bound": cert,
                    "emp_lip": min(cert, 0.9),
                    "clean_acc": np.nan,
                    "train_seconds": 1.5,
                }
            )
        rows.append(
            {
                "instance": "robust/moons/s0",
                "label": lab,
                "status": "ok",
                "seconds": 2.0,
                "error": err,
                "rel_rmse": np.nan,
                "cert_bound": cert,
                "emp_lip": 0.8,
                "clean_acc": 0.97,
                "train_seconds": 1.0,
            }
        )
    runs = pd.DataFrame(rows)
    txt = _task().report(runs)
    assert "approx/d=1/f1" in txt and "robust/moons" in txt and "mlp-unconstrained" in txt
    line = next(ln for ln in txt.splitlines() if ln.startswith("approx/d=1/f1") and "lip-resnet" in ln)
    assert "0.1000" in line and "1.5" in line
    curves = pd.DataFrame(
        [
            {
                "label": "lip-resnet",
                "instance": "approx/d=1/f1/s0",
                "seed": 0,
                "seconds": 1.0,
                "iteration": it,
                "error": 1.0 / it,
            }
            for it in (1, 2, 3)
        ]
    )
    figs = _task().figures(runs, tmp_path, curves)
    assert len(figs) == 2
    for stem in ("error_vs_bound", "error_vs_epoch"):
        assert (tmp_path / f"{stem}.png").exists() and (tmp_path / f"{stem}.svg").exists()
