"""mdbe-calibrated: the calibration rule, the shipped table (a cheap entry reproduces), the false-alarm rate
on fresh stationary seeds, and the agent = MDBE with the calibrated c0."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

import papergym.agents.bandits.mdbe as mdbe_mod
from papergym.agents.bandits.mdbe import (
    C0_GRID,
    CALIBRATION_DEFAULTS,
    BatchedMDBE,
    calibrate_c0,
    calibrated_c0,
    calibration_seeds,
    shipped_calibrations,
)
from papergym.agents.base import get_agent_info, make_batched_agent
from papergym.envs.bandits.lipschitz import NonStatLipschitzVectorEnv, make_problem
from papergym.envs.spec import agent_seed


def _alarm_runs(c0, T, seeds):
    """Runs (of ``seeds``) in which MDBE with ``c0`` restarts on the stationary tents (phases=1)."""
    venv = NonStatLipschitzVectorEnv(num_envs=len(seeds), instance="piecewise-tents", phases=1, horizon=T)
    obs, _ = venv.reset(seed=seeds)
    agent = BatchedMDBE(venv.problem, seeds=[agent_seed(s) for s in seeds], c0=c0)
    for _ in range(T):
        a = agent.act(obs)
        obs, r, _, _, _ = venv.step(a)
        agent.update(a, r, obs)
    return int(np.count_nonzero(agent.diagnostics()["restarts"]))


def test_shipped_table_entry_reproduces():
    table = shipped_calibrations()
    hits = [rec for key, rec in table.items() if key[:4] == (1, 1024, "bernoulli", None)]
    assert len(hits) == 1
    assert calibrate_c0(1, 1024, "bernoulli", **CALIBRATION_DEFAULTS) == hits[0]
    assert {k[1] for k in table} >= {2**k for k in range(8, 19)} | {100_000}


def test_calibration_rule_smallest_c0_meeting_the_target():
    for key, rec in shipped_calibrations().items():
        allowed = math.floor(0.05 * rec["runs"] + 1e-9)
        tried = rec["tried"]
        assert rec["c0"] in C0_GRID and rec["c0"] == tried[-1]["c0"]
        assert [x["c0"] for x in tried] == list(C0_GRID[: len(tried)])  # ascending from the smallest, no gap
        assert all(x["alarm_runs"] > allowed for x in tried[:-1])  # every smaller c0 failed the target
        assert tried[-1]["alarm_runs"] <= allowed and tried[-1]["rounds"] == key[1]
        assert rec["false_alarm_rate"] == tried[-1]["alarm_runs"] / rec["runs"] <= 0.05


def test_calibrated_rate_on_fresh_stationary_seeds_is_consistent_with_the_target():
    T = 2**12
    rec = calibrated_c0(1, T)
    assert rec["c0"] in C0_GRID
    fresh = calibration_seeds(100, stream=1)
    assert not set(fresh) & set(calibration_seeds(60))
    k = _alarm_runs(rec["c0"], T, fresh)
    # one-sided binomial test of "false-alarm rate <= 5 %" at level 0.001
    assert binom.sf(k - 1, 100, 0.05) > 1e-3, f"{k} of 100 fresh runs restarted with c0={rec['c0']}"


def test_agent_is_mdbe_with_the_calibrated_c0():
    info = get_agent_info("mdbe-calibrated", "NonStatLipschitz-v0")
    assert info.role == "paper" and info.defaults["calibration_runs"] == 60 and "c0" not in info.defaults
    T, seeds = 2048, [3, 4]
    venv = NonStatLipschitzVectorEnv(num_envs=2, instance="two-peak-cyclic", horizon=T)
    obs, _ = venv.reset(seed=seeds)
    cal = make_batched_agent("mdbe-calibrated", venv.problem, seeds=[agent_seed(s) for s in seeds])
    c0 = cal.calibration["c0"]
    assert c0 == 0.25 and cal.hyperparameters["c0"] == 0.25  # the shipped entry for T = 2048
    ref = BatchedMDBE(venv.problem, seeds=[agent_seed(s) for s in seeds], c0=c0)
    for _ in range(T):
        a = cal.act(obs)
        np.testing.assert_array_equal(a, ref.act(obs))
        obs, r, _, _, _ = venv.step(a)
        cal.update(a, r, obs)
        ref.update(a, r, obs)
    d = cal.diagnostics()
    assert d["c0"] == [0.25, 0.25] and d["restarts"] == ref.diagnostics()["restarts"]


def test_cache_computes_a_new_class_once(monkeypatch):
    calls = []
    real = mdbe_mod.calibrate_c0

    def counting(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(mdbe_mod, "calibrate_c0", counting)
    monkeypatch.setattr(mdbe_mod, "_CALIBRATION_CACHE", {})
    kw = dict(c0_grid=(0.2, 0.4), calibration_runs=8)
    a = calibrated_c0(1, 300, "gaussian", 0.2, **kw)
    b = calibrated_c0(1, 300, "gaussian", 0.2, **kw)
    assert a == b and len(calls) == 1
    assert a["c0"] in (0.2, 0.4) and a["runs"] == 8
    calibrated_c0(1, 300, "gaussian", 0.3, **kw)  # another sigma: another class
    assert len(calls) == 2
    calibrated_c0(1, 1024)  # shipped: not recomputed
    assert len(calls) == 2
    problem = make_problem(horizon=300, noise="gaussian", sigma=0.2)
    agent = make_batched_agent("mdbe-calibrated", problem, seeds=[0], **kw)
    assert agent.calibration == a and len(calls) == 2


def test_bad_arguments():
    with pytest.raises(ValueError, match="c0_grid"):
        calibrated_c0(1, 256, c0_grid=())
    with pytest.raises(ValueError, match="c0_grid"):
        calibrated_c0(1, 256, c0_grid=(0.1, -1))
    with pytest.raises(ValueError, match="false_alarm_target"):
        calibrated_c0(1, 256, false_alarm_target=1.5)
    with pytest.raises(ValueError, match="calibration_runs"):
        calibrated_c0(1, 256, calibration_runs=0)
    with pytest.raises(ValueError, match="unknown MDBE hyperparameter"):
        calibrate_c0(1, 256, c0=0.3)
    with pytest.raises(ValueError, match="no c0 on the grid"):
        calibrate_c0(1, 512, c0_grid=(0.01,), calibration_runs=10, false_alarm_target=0.0)
    problem = make_problem(horizon=256)
    with pytest.raises(ValueError, match="replay_schedule"):
        make_batched_agent("mdbe-calibrated", problem, seeds=[0], replay_schedule="nope")
