"""The fast MDBE kernels (agents/bandits/mdbe.py) against the readable reference implementation
(agents/bandits/mdbe_reference.py): identical actions, restarts and regret."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.agents.bandits.mdbe import BatchedMDBE
from papergym.agents.bandits.mdbe_reference import MDBEReference
from papergym.envs.bandits.lipschitz import NonStatLipschitzVectorEnv, make_problem


@pytest.mark.parametrize(
    "grid,compat,schedule,seed,T",
    [
        ("dyadic", False, "block-offset", 1, 1300),
        ("all", False, "block-offset", 1, 1300),
        ("dyadic", False, "absolute-round", 3, 1300),
        ("all", False, "absolute-round", 3, 1300),
        ("dyadic", True, "absolute-round", 1, 1300),
        ("all", True, "absolute-round", 1, 1300),
    ],
)
def test_kernel_matches_reference_implementation(grid, compat, schedule, seed, T):
    ref = MDBEReference(T, seed, 0.2, grid, compat, schedule)
    ag = BatchedMDBE(
        make_problem(d=1, horizon=T),
        seeds=[seed],
        c0=0.2,
        start_grid=grid,
        code_compat=compat,
        replay_schedule=schedule,
    )
    U = np.random.default_rng(99 + seed).random(T)
    for t in range(1, T + 1):
        x = ag.act()
        assert x[0, 0] == ref.act(), t
        y = float(U[t - 1] < 0.9 - 0.8 * abs(ref.x - (0.2 if t < 900 else 0.8)))
        ag.update(x, np.array([y]))
        ref.update(y)
    assert ag.diagnostics()["restart_times"][0] == ref.restarts
    assert len(ref.restarts) >= 1  # the comparison covered evictions, replays and a restart


@pytest.mark.parametrize(
    "instance,kwargs,hp",
    [
        ("two-peak-cyclic", {}, {}),
        ("piecewise-tents", {"phases": 3}, {"c0": 0.2}),
        ("drifting-peak", {}, {"start_grid": "all"}),
        ("benign-changes", {}, {"replay_schedule": "block-offset"}),
    ],
)
def test_same_actions_and_regret_on_the_env(instance, kwargs, hp):
    """Several seeds of an env instance: the batched kernels and one reference per seed play the same
    actions, so they get the same rewards, the same dynamic regret and the same restarts."""
    T, seeds = 4096, [0, 1, 2]
    envs = [NonStatLipschitzVectorEnv(num_envs=len(seeds), instance=instance, horizon=T, **kwargs) for _ in range(2)]
    (obs, _), _ = envs[0].reset(seed=seeds), envs[1].reset(seed=seeds)
    agent = BatchedMDBE(envs[0].problem, seeds=seeds, **hp)
    refs = [MDBEReference(T, s, **hp) for s in seeds]
    regret = np.zeros((2, len(seeds)))
    for t in range(1, T + 1):
        a = agent.act(obs)
        b = np.array([[r.act()] for r in refs])
        assert np.array_equal(a, b), t
        regret[0] += envs[0].oracle.regret(a, t)
        regret[1] += envs[1].oracle.regret(b, t)
        obs, y, *_ = envs[0].step(a)
        _, y_ref, *_ = envs[1].step(b)
        assert np.array_equal(y, y_ref)
        agent.update(a, y, obs)
        for r, v in zip(refs, y_ref):
            r.update(float(v))
    assert np.array_equal(regret[0], regret[1]) and np.all(regret[0] > 0)
    assert agent.diagnostics()["restart_times"] == [r.restarts for r in refs]


def test_reference_rejects_unknown_settings():
    with pytest.raises(ValueError, match="start_grid"):
        MDBEReference(100, 0, start_grid="fine")
    with pytest.raises(ValueError, match="replay_schedule"):
        MDBEReference(100, 0, replay_schedule="sometimes")
