"""ContinualDomains-v0 baselines: every registered solver runs through the stream on the default and heterogeneous
families (tiny sizes), with the parameter growth of its closed form; EWC's Fisher and proximal step equal their
closed forms; LwF's distillation vanishes at the old model; ER's reservoir stays within its size."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym_tests import require  # the helper of tests/conftest.py

torch = require("torch", "torch")

from papergym.agents.base import list_solvers, make_solver
from papergym.baselines.solvers.continual import EWC, ExperienceReplay, LwF
from papergym.envs.tasks.base import make_task

TASK = "ContinualDomains-v0"
TINY = {"domains": ["original", "invert"], "images_per_domain": 40, "epochs": 1, "seeds": [1]}
SHARED_HEAD = ("finetune", "ewc", "lwf", "er", "joint")


def _run(name, hetero=False, **hp):
    task = make_task(TASK, hetero=hetero, **TINY)
    pb, ev = task.make(task.instances()[0])
    points = []
    sol = make_solver(name, TASK, seed=0, **hp).solve(
        pb, task.default_budget, lambda s, iteration=None, work=None: points.append(work)
    )
    return pb, ev.evaluate(sol), sol, points


def test_every_registered_solver_is_expected():
    names = {s.name for s in list_solvers(TASK)}
    assert names == {"lear", "finetune", "ewc", "lwf", "er", "experts-only", "joint"}
    roles = {s.name: s.role for s in list_solvers(TASK)}
    assert roles["lear"] == "paper" and roles["joint"] == "reference"


@pytest.mark.parametrize("hetero", [False, True])
@pytest.mark.parametrize("name", ["lear", "finetune", "ewc", "lwf", "er", "experts-only", "joint"])
def test_every_solver_runs_on_both_families(name, hetero):
    pb, m, sol, points = _run(name, hetero)
    T = pb.n_domains
    assert T == (5 if hetero else 2)
    for k in ("final_acc", "final_acc_sample", "avg_inc_acc"):
        assert 0.0 <= m[k] <= 1.0
    assert all(0.0 <= m[f"a_{l}_{j}"] <= 1.0 for l in range(1, T + 1) for j in range(1, T + 1))
    assert len(sol["params_added"]) == T and points and points[-1] > 0 and sol["meta"]["work"] == points[-1]
    n_c = [pb.n_classes[t] for t in range(T)]
    if name in SHARED_HEAD:
        assert math.isnan(m["selection_acc"])
        assert m["final_acc_sample"] == pytest.approx(m["final_acc"])  # a per-sample rule: both protocols agree
        # one head row (128 weights + bias) per global label, added when its label space first appears
        assert sum(sol["params_added"]) == 129 * pb.n_labels
    elif name == "experts-only":
        assert sol["params_added"] == [129 * c for c in n_c] and 0.0 <= m["selection_acc"] <= 1.0
    else:
        assert sol["params_added"] == [128 * 64 + 64 + 193 * c for c in n_c]
    assert "param_growth" not in m  # declared, not scored by the evaluator


def test_solvers_are_deterministic_under_the_seed():
    for name in ("er", "experts-only"):
        a = _run(name)[1]
        b = _run(name)[1]
        assert a == pytest.approx(b, nan_ok=True)


def test_ewc_fisher_of_the_head_bias_and_the_proximal_step_have_closed_forms():
    task = make_task(TASK, **TINY)
    pb, ev = task.make(task.instances()[0])
    s = EWC(seed=0)
    s.start(pb, task.default_budget)
    s.seen[:10] = True
    d = pb.stream.next_domain()
    h = s.hidden(d["X"][:7])
    y = torch.as_tensor(np.asarray(d["y"][:7]))
    F = s.fisher(h, y)
    with torch.no_grad():
        p = torch.softmax(s.logits(h), dim=1).numpy()
    onehot = np.eye(10)[y.numpy()]
    np.testing.assert_allclose(F[3].numpy(), ((p - onehot) ** 2).mean(0), rtol=1e-4, atol=1e-7)  # d CE / d bias
    # the proximal step minimises (1/2η)|θ − θ'|² + (λ/2) Σ_t F_t (θ − θ*_t)²
    s.end_domain(h, y)
    s.anchors.append(([2.0 * f for f in F], [q.detach().clone() + 1.0 for q in s.parameters()]))
    s.f_sum = [F[k] + 2.0 * F[k] for k in range(4)]
    s.f_star = [F[k] * s.anchors[0][1][k] + 2.0 * F[k] * s.anchors[1][1][k] for k in range(4)]
    before = [q.detach().clone() for q in s.parameters()]
    s.after_step(None, None)
    c = s.lr * s.ewc_lambda
    for k, q in enumerate(s.parameters()):
        t1, t2 = s.anchors[0][1][k], s.anchors[1][1][k]
        want = (before[k] + c * (F[k] * t1 + 2.0 * F[k] * t2)) / (1.0 + 3.0 * c * F[k])
        torch.testing.assert_close(q.detach(), want)
        # stationarity of the proximal objective
        grad = (q.detach() - before[k]) / s.lr + s.ewc_lambda * (
            F[k] * (q.detach() - t1) + 2 * F[k] * (q.detach() - t2)
        )
        assert float(grad.abs().max()) < 1e-3 * (1 + float(before[k].abs().max()) / s.lr)
    with pytest.raises(ValueError, match="ewc_update"):
        EWC(ewc_update="implicit")


def test_explicit_ewc_at_lambda_1000_diverges_and_the_proximal_one_does_not():
    """The reason for the proximal default: lr · λ · F_max ≫ 2 makes the explicit penalty gradient unstable."""
    task = make_task(TASK, domains=["original", "invert", "rot90"], images_per_domain=100, epochs=2, seeds=[0])
    out = {}
    for upd in ("explicit", "proximal"):
        pb, ev = task.make(task.instances()[0])
        s = EWC(seed=0, ewc_update=upd)
        s.solve(pb, task.default_budget, lambda *a, **k: None)
        out[upd] = bool(torch.isfinite(s.layer.weight).all())
    assert out == {"explicit": False, "proximal": True}


def test_lwf_distillation_vanishes_at_the_old_model_and_er_buffer_is_a_bounded_reservoir():
    task = make_task(TASK, **TINY)
    pb, _ = task.make(task.instances()[0])
    s = LwF(seed=0)
    s.start(pb, task.default_budget)
    s.seen[:10] = True
    s.prev_seen = s.seen.copy()
    s.begin_domain(None, None)
    h = s.hidden(pb.stream.next_domain()["X"][:5])
    assert float(s.extra_loss(h, None).detach()) == pytest.approx(0.0, abs=1e-6)
    with torch.no_grad():
        s.head.weight.add_(0.5)
        s.head.weight[0].add_(1.0)
    assert float(s.extra_loss(h, None).detach()) > 1e-4
    pb, _ = task.make(task.instances()[0])
    er = ExperienceReplay(seed=0, buffer_size=10)
    er.solve(pb, task.default_budget, lambda *a, **k: None)
    assert len(er.buf_y) == 10 and er.n_seen == 2 * 28 and set(er.buf_y) <= set(range(10))
    for hp, match in [
        ({"buffer_size": 0}, "buffer_size"),
        ({"temperature": 0}, "temperature"),
        ({"ewc_lambda": -1}, "ewc_lambda"),
        ({"selection": "x"}, "selection"),
        ({"reinit": 1}, "reinit"),
    ]:
        name = {
            "buffer_size": "er",
            "temperature": "lwf",
            "ewc_lambda": "ewc",
            "selection": "experts-only",
            "reinit": "joint",
        }[next(iter(hp))]
        with pytest.raises(ValueError, match=match):
            make_solver(name, TASK, **hp)
