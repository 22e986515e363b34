"""RLDataSelection-v0 baselines: multi-sample-acc's estimate equals a direct count, DAPO ordering, seeds,
easiest/hardest by confidence, full-data's private pass, the work budget, and every solver on the task."""

from __future__ import annotations

import numpy as np
import pytest

from papergym_tests import require  # the helper of tests/conftest.py

torch = require("torch", "torch")

from papergym.agents.base import list_solvers, make_solver
from papergym.agents.solvers.ufo_rl import pool_confidence
from papergym.baselines.solvers.data_selection import MultiSampleAcc, dapo_order, sample_accuracy
from papergym.envs.tasks.base import make_task

TID = "RLDataSelection-v0"
TINY = dict(pool_size=40, test_size=30, max_digits=3, rl_epochs=1, batch_prompts=8, group_size=2, seeds=[0])
NOREP = lambda *a, **k: None


def tiny(**kw):
    task = make_task(TID, **{**TINY, **kw})
    return task, *task.make(task.instances()[0])


def test_multi_sample_accuracy_equals_direct_count():
    _, p, _ = tiny()
    acc = MultiSampleAcc(seed=5, chunk=15).estimate(p)
    # replay the same seeded calls and count exact answers by hand
    _, p2, _ = tiny()
    rng = np.random.default_rng(5)
    direct = []
    for s in range(0, 40, 15):
        out = p2.policy.sample(list(p2.prompts[s : s + 15]), 8, 1.0, int(rng.integers(2**31)))
        for cs, a in zip(out, p2.answers[s : s + 15]):
            direct.append(sum(1 for c in cs if c == a + "$") / 8)
    np.testing.assert_array_equal(acc, np.array(direct))
    assert p.policy.work_used() == p2.policy.work_used()
    assert sample_accuracy([["1$", "2$", "1"], []], ["1", "3"])[0] == pytest.approx(1 / 3)


def test_dapo_order_and_fill():
    acc = np.array([0.0, 0.5, 1.0, 0.25, 0.75, 0.875, np.nan, 0.5])
    rng = np.random.default_rng(0)
    assert dapo_order(acc, 4, rng).tolist() == [1, 7, 3, 4]
    full = dapo_order(acc, 7, np.random.default_rng(0))
    assert full[:5].tolist() == [1, 7, 3, 4, 5] and len(set(full.tolist())) == 7


def test_random_and_conf_selectors():
    _, p, _ = tiny()
    a = make_solver("random-select", TID, seed=3).solve(p, None, NOREP)
    assert a.tolist() == make_solver("random-select", TID, seed=3).solve(p, None, NOREP).tolist()
    assert a.tolist() != make_solver("random-select", TID, seed=4).solve(p, None, NOREP).tolist()
    assert len(set(a.tolist())) == p.k and p.policy.work_used() == 0
    conf = pool_confidence(p)
    e = make_solver("easiest-conf", TID).solve(p, None, NOREP)
    h = make_solver("hardest-conf", TID).solve(p, None, NOREP)
    assert conf[e].min() >= np.sort(conf)[::-1][p.k - 1] and conf[h].max() <= np.sort(conf)[p.k - 1]
    assert not set(e.tolist()) & set(h.tolist())


def test_multi_sample_stops_at_the_work_budget_and_fills():
    task, p, ev = tiny(work_factor=3.0)
    sol = make_solver("multi-sample-acc", TID, seed=0, chunk=10).solve(p, task.default_budget, NOREP)
    assert sol["meta"]["estimated"] < 40 and len(set(sol["indices"].tolist())) == p.k
    assert p.policy.work_used() <= p.max_work
    ev.evaluate(sol)


def test_full_data_needs_the_private_pass():
    from types import SimpleNamespace

    _, p, ev = tiny()
    with pytest.raises(ValueError, match="oracle"):
        make_solver("full-data", TID).solve(SimpleNamespace(prompts=p.prompts, k=p.k), None, NOREP)
    sol = make_solver("full-data", TID).solve(p, None, NOREP)
    assert ev.evaluate(sol)["n_selected"] == 40


def test_every_solver_on_the_task():
    names = {s.name for s in list_solvers(TID)}
    assert names == {"ufo-rl", "multi-sample-acc", "random-select", "easiest-conf", "hardest-conf", "full-data"}
    assert {s.name for s in list_solvers(TID, role="reference")} == {"full-data"}
    for name in sorted(names):
        task, p, ev = tiny()
        sol = make_solver(name, TID, seed=0).solve(p, task.default_budget, NOREP)
        m = ev.evaluate(sol)
        assert 0 <= m["test_acc"] <= 1 and m["n_selected"] == (40 if name == "full-data" else p.k), name


def test_baselines_module_does_not_import_torch():
    import subprocess
    import sys

    code = (
        "import sys; import papergym.baselines.solvers.data_selection, papergym.agents.solvers.ufo_rl, "
        "papergym.envs.tasks.data_selection; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
