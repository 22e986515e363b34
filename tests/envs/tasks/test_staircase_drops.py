"""FeatureStaircase-v0: what counts as a drop (ground-truth version 3: ``MIN_PLATEAU``, ``MIN_DROP``), the same
rule on predicted staircases (``merge_steps``), AGF's cost minimisation by gradient flow on modular addition
(fresh seeds), and the public problem's integrity."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.agents.solvers.agf import agf_modular
from papergym.envs.tasks.base import make_task
from papergym.envs.tasks.staircase.modular import (
    modular_init,
    modular_instance,
    modular_lr,
)
from papergym.envs.tasks.staircase.task import (
    _GT_VERSION,
    MIN_DROP,
    MIN_PLATEAU,
    TASK_ID,
    _gt_key,
    extract_staircase,
    merge_steps,
)
from papergym_tests import find_private


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE", str(tmp_path / "cache"))


def _staircase_curve(T=200_000):
    """Loss 1 → 0.3 at t = 2,000 → 0.05 at 20,000, then a slow decay in 5 % steps every 2 % of t (each step a
    plateau of exactly the look-ahead window) — the shape gradient descent shows after modular addition's last
    frequency-5 drop."""
    t = np.arange(T + 1, dtype=float)
    L = 1.0 - 0.35 * (1 + np.tanh((t - 2000) / 80)) - 0.125 * (1 + np.tanh((t - 20000) / 800))
    n = np.floor(np.maximum(np.log(np.maximum(t, 1) / 60000.0), 0) / math.log(1.02))
    return L * np.exp(-0.05 * n)  # from t = 60,000 on: one 5 % step per 2 % of t


def test_slow_stepwise_decay_is_not_a_staircase():
    L = _staircase_curve()
    drops = extract_staircase(L)[1:]
    # version 1 counted ~60 sub-steps of the decay; now it is one drop, into the level the horizon cuts short
    assert len(drops) == 3, drops
    assert drops[2][1] == pytest.approx(L[-1], rel=0.06) and drops[2][0] > 60_000
    assert drops[0][0] == pytest.approx(2000, rel=0.05) and drops[0][1] == pytest.approx(0.3, rel=0.02)
    assert drops[1][0] == pytest.approx(20000, rel=0.05) and drops[1][1] == pytest.approx(0.05, rel=0.02)


def test_a_drop_into_the_horizon_counts():
    """A drop whose plateau the horizon cuts short (shorter than ``MIN_PLATEAU · t``) still counts."""
    t = np.arange(100_001, dtype=float)
    sig = lambda z: 0.5 * (1 + np.tanh(z / 2))
    L = 1.0 - 0.5 * sig((t - 1000) / 20) - 0.45 * sig((t - 99_000) / 100)
    drops = extract_staircase(L)[1:]
    assert [round(d[1], 2) for d in drops] == [0.5, 0.05]


def test_shallow_plateau_merges_into_the_previous_one():
    t = np.arange(100_001, dtype=float)
    step = lambda at, depth: depth * 0.5 * (1 + np.tanh((t - at) / (0.004 * at)))
    L = 1.0 - step(1000, 0.5) - step(5000, 0.02) - step(20000, 0.3)  # 1 → 0.5 → 0.48 (4 %) → 0.18
    drops = extract_staircase(L)[1:]
    assert [round(d[1], 2) for d in drops] == [0.5, 0.18]
    # the drop into 0.18 is timed from the 0.5 plateau: the first t below sqrt(0.5 · 0.18) = 0.3
    assert drops[1][0] == pytest.approx(20000, rel=0.02)


def test_merge_steps_applies_the_rules_to_predictions():
    l0 = 1.0
    # 0.5 at 1,000; a 1 % step later (shallow); two steps 1 % of t apart (short plateau); then a last one
    pred = [(1000, 0.5, 1), (3000, 0.495, 2), (10000, 0.3, 3), (10100, 0.1, 4), (50000, 0.01, 5)]
    out = merge_steps(pred, l0, horizon=200_000)
    assert [(t, lev) for t, lev, _ in out] == [(1000, 0.5), (10100, 0.1), (50000, 0.01)]
    # the merged drop 0.5 → 0.1 is timed where the step function first falls below sqrt(0.5 · 0.1) ≈ 0.22 (0.3 is
    # above it) and carries that step's feature
    assert out[1] == (10100, 0.1, 4)
    # with a deeper intermediate step the drop is timed at it
    assert merge_steps([(1000, 0.5, 1), (10000, 0.2, 3), (10100, 0.1, 4)], l0)[1] == (10000, 0.1, 3)
    # a plateau the horizon cuts short is exempt from the length rule (as the measured curve's last plateau)
    assert merge_steps([(1000, 0.5, 1), (199_000, 0.1, 2)], l0, horizon=200_000) == [(1000, 0.5, 1), (199_000, 0.1, 2)]
    assert merge_steps([(1000, 0.5, 1), (199_000, 0.1, 2), (199_500, 0.05, 3)], l0, horizon=200_000) == [
        (1000, 0.5, 1),
        (199_000, 0.05, 2),
    ]  # timed at the first step below sqrt(0.5 · 0.05)
    assert merge_steps([], l0) == []
    with pytest.raises(ValueError, match="l0"):
        merge_steps(pred, 0.0)
    assert MIN_PLATEAU == pytest.approx(0.04) and MIN_DROP == pytest.approx(0.1)


def test_ground_truth_version_keys_the_cache():
    p = {
        "setting": "modular-addition",
        "p": 20,
        "width": 18,
        "alphas": [0.01],
        "lr": 1e-3,
        "momentum": 0.9,
        "horizon": 100,
    }
    assert _gt_key(p, 2001, "gd")[-1] == _GT_VERSION == 3


@pytest.mark.parametrize("seed", [2001, 2003, 2006])
def test_agf_first_activation_is_frequency_one_on_fresh_seeds(seed):
    """The first neuron to activate (the strongest frequency, as gradient descent shows) keeps its frequency
    through cost minimisation, and its drop is a real one (seed 2006 under L-BFGS alone: frequency 3, 2 %)."""
    X, Y, _ = modular_instance(20, seed)
    Wi, Wo = modular_init(20, 18, 1e-2, seed)
    l0 = 0.5 * float(np.sum(Y**2)) / X.shape[0]
    steps, work = agf_modular(X, Y, Wi, Wo, modular_lr(20), 0.9, horizon=200_000, max_steps=1)
    assert len(steps) == 1 and steps[0].feature == 1
    assert steps[0].level < 0.95 * l0 and 1000 < steps[0].t < 5000 and work > 0


def test_agf_modular_respects_max_work():
    X, Y, _ = modular_instance(20, 2002)
    Wi, Wo = modular_init(20, 18, 1e-2, 2002)
    steps, work = agf_modular(X, Y, Wi, Wo, modular_lr(20), 0.9, horizon=200_000, max_work=1500)
    assert work < 1500 + 1000 + 400  # stops after the step that crosses the cap (one flow + one polish at most)
    assert 1 <= len(steps) < 18


def test_public_problem_holds_no_private_state():
    task = make_task(TASK_ID, setting="modular-addition", mod_horizon=60, seeds=(2004,))
    for ref in task.instances("dev"):
        problem, ev = task.make(ref)
        ev.prepare()
        private = [ev, ev.truth, ev.truth["steps"], ev.truth["curve_L"], ev.truth["curve_t"]]
        assert find_private(problem, private) == []
