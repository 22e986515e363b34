"""PreferenceHallucination-v0 baselines: sft returns π_ref unchanged, the mDPO loss is its closed form, dpo and mdpo
are seeded, every registered solver yields valid weights on every size (tiny epochs), importing the baselines does
not import torch."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from papergym.agents.base import list_solvers, make_solver
from papergym.envs.tasks.base import Budget, make_task
from papergym.envs.tasks.preference import WEIGHT_KEYS
from papergym_tests import require

TASK = "PreferenceHallucination-v0"


def _make(size="default", n_pref=80, n_test=100):
    task = make_task(TASK, sizes=size, n_pref=n_pref, n_test=n_test, seeds=[1])
    return task.make(task.instances()[0])


def test_importing_the_baselines_does_not_import_torch():
    code = (
        "import sys, papergym.baselines.solvers.preference, papergym.agents.solvers.symmpo; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(__import__("pathlib").Path(__file__).parents[3]))


def test_sft_returns_the_reference_and_reports_once():
    pb, ev = _make()
    calls = []
    sol = make_solver("sft", TASK, seed=0).solve(pb, Budget(), lambda s, **k: calls.append(k))
    for k in WEIGHT_KEYS:
        np.testing.assert_array_equal(sol[k], pb.ref_weights[k])
        assert sol[k] is not pb.ref_weights[k]
    assert calls == [{"iteration": 0, "work": 0}]
    assert ev.evaluate(sol) == ev.evaluate(pb.ref_weights)


def test_sft_accepts_a_sandboxed_namespace_problem():
    from types import SimpleNamespace

    from papergym.leaderboard.board.evaluate import public_problem

    pb, ev = _make()
    data, _ = public_problem(pb)
    ns = SimpleNamespace(**{k: SimpleNamespace(**v) if isinstance(v, dict) else v for k, v in data.items()})
    sol = make_solver("sft", TASK).solve(ns, Budget(), lambda *a, **k: None)
    assert ev.evaluate(sol) == ev.evaluate(pb.ref_weights)


def test_mdpo_loss_closed_form():
    torch = require("torch", "torch")
    from papergym.agents.solvers.symmpo import mdpo_loss

    g = torch.Generator().manual_seed(0)
    rw, rl, rc = (3 * torch.randn(40, generator=g, dtype=torch.float64) for _ in range(3))
    got = mdpo_loss(rw, rl, rc, beta=0.2, delta=0.1).numpy()
    a, b, c = rw.numpy(), rl.numpy(), rc.numpy()
    want = np.logaddexp(0, -0.2 * (a - b)) + np.logaddexp(0, -0.2 * (a - c)) + np.logaddexp(0, -(0.2 * a - 0.1))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_baseline_hyperparameters_are_checked():
    with pytest.raises(ValueError, match="lam"):
        make_solver("dpo", TASK, lam=0.5)
    with pytest.raises(ValueError, match="delta"):
        make_solver("dpo", TASK, delta=0.1)
    with pytest.raises(ValueError, match="beta"):
        make_solver("mdpo", TASK, beta=-1.0)


@pytest.mark.parametrize("size", ["default", "paper-scale"])
def test_every_solver_on_every_size(size):
    require("torch", "torch")
    pb, ev = _make(size)
    names = [s.name for s in list_solvers(TASK)]
    assert set(names) == {"symmpo", "sft", "dpo", "mdpo"}
    for name in names:
        hp = {} if name == "sft" else {"epochs": 1}
        calls = []
        sol = make_solver(name, TASK, seed=0, **hp).solve(pb, Budget(max_seconds=60), lambda s, **k: calls.append(k))
        m = ev.evaluate(sol)
        assert all(np.isfinite(v) for v in m.values()), (name, m)
        assert 0.0 <= m["chair_i"] <= 1.0 and 0.0 <= m["recall"] <= 1.0 and len(calls) == 1
        if name != "sft":
            again = make_solver(name, TASK, seed=0, **hp).solve(pb, Budget(), lambda *a, **k: None)
            for k in WEIGHT_KEYS:
                np.testing.assert_array_equal(sol[k], again[k])
