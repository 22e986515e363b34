"""Tests of the ``blin`` baseline (papergym.baselines.bandits.blin)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

from papergym.agents.base import get_agent_info, make_agent, make_batched_agent
from papergym.baselines.bandits.blin import BatchedBLiN, BLiN, blin_max_depth, blin_quota
from papergym.envs.bandits.lipschitz import make_problem as _env_problem
from papergym.envs.spec import ProblemSpec, agent_seed

ENV_ID = "NonStatLipschitz-v0"


def make_problem(T: int, d: int = 1) -> ProblemSpec:
    """The public problem of NonStatLipschitz-v0 (the env module's own constructor)."""
    return _env_problem(d, int(T), "bernoulli", 0.1)


def peak(x: np.ndarray, c: float = 0.3) -> np.ndarray:
    """Stationary tent with one clear peak at c (l_inf, per row)."""
    return 0.9 - np.max(np.abs(np.atleast_2d(x) - c), axis=1)


def test_quota_and_max_depth_closed_form():
    # T = 2^15: 16 log T / r_k^2 = 16 * 15 log 2 * 4^k = 665.42, 2661.68, 10646.74, 42586.96
    T = 2**15
    assert [blin_quota(k, T) for k in (1, 2, 3, 4)] == [666, 2662, 10647, 42587]
    assert blin_max_depth(T) == 3  # n_4 = 42587 > T >= n_3
    assert blin_quota(2, 1000, batch_const=1.0) == math.ceil(16 * math.log(1000))
    assert blin_max_depth(10) == 1  # even n_1 > T: one batch, never split
    assert BatchedBLiN(make_problem(T), seeds=[0]).max_depth == 3


def _run(agent, T, mean_fn, seed=0, n=1):
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for _ in range(T):
        x = agent.act(None)
        y = (rng.random(n) < mean_fn(x)).astype(float)
        agent.update(x, y, None)
        xs.append(x.copy())
        ys.append(y)
    return np.stack(xs, 1), np.stack(ys, 1)  # (n, T, d), (n, T)


def test_schedule_elimination_and_split_match_brute_force():
    """Recompute every batch from the recorded actions and rewards: batch lengths |A_k| n_k, cell edge
    2^-k (centres played round-robin), eliminated cells, children of the survivors."""
    T = 6000
    kw = dict(batch_const=0.5, elim_const=0.5, max_depth=4)  # n_k = ceil(0.5 log T 4^k): 18, 70, 279, 1114
    agent = BatchedBLiN(make_problem(T), seeds=[0], record_history=True, **kw)
    assert blin_max_depth(T, 0.5) == 5 and agent.max_depth == 4
    X, Y = _run(agent, T, peak)
    x, y = X[0, :, 0], Y[0]
    t = 0
    cells = np.arange(2)  # depth 1: [0, 1/2], [1/2, 1]
    hist = agent.history[0]
    for k in range(1, agent.max_depth + 1):
        r = 2.0**-k
        n_k = math.ceil(0.5 * math.log(T) * 4**k)
        length = len(cells) * n_k
        assert t + length <= T, "the test horizon should complete every batch"
        xb, yb = x[t : t + length], y[t : t + length]
        np.testing.assert_array_equal(xb, np.tile((cells + 0.5) * r, n_k))  # round-robin centres
        means = yb.reshape(n_k, len(cells)).mean(axis=0)
        keep = means >= means.max() - 0.5 * r
        rec = hist[k - 1]
        assert rec["depth"] == k
        np.testing.assert_array_equal(rec["cells"][:, 0], cells)
        np.testing.assert_array_equal(rec["counts"], np.full(len(cells), n_k))
        np.testing.assert_array_equal(rec["keep"], keep)
        np.testing.assert_allclose(rec["sums"] / n_k, means, rtol=0, atol=1e-12)
        survivors = cells[keep]
        assert 0.3 // r in survivors  # the peak's cell survives
        if k < agent.max_depth:
            cells = np.stack([2 * survivors, 2 * survivors + 1], axis=1).reshape(-1)  # split into children
        else:
            cells = survivors
        t += length
    assert len(hist) == agent.max_depth
    # final phase: survivors of depth max_depth, round-robin, nothing else happens
    assert agent.final[0] and agent.depth[0] == agent.max_depth
    k = agent.max_depth
    np.testing.assert_array_equal(agent.active_cells(0)[1][:, 0], cells)
    rest = x[t:]
    assert len(rest) > 2 * len(cells)
    np.testing.assert_array_equal(rest, np.resize((cells + 0.5) * 2.0**-k, len(rest)))
    # something was eliminated, and what is left is near the peak
    assert len(cells) < 2**k
    assert np.all(np.abs((cells + 0.5) * 2.0**-k - 0.3) < 0.25)


def test_default_constants_cannot_eliminate_in_first_two_batches():
    """4 r_k >= 1 for k = 1, 2 while mean rewards lie in [0, 1]: every cell survives and splits."""
    T = 2**13  # n_1 = ceil(16 * 13 log 2 * 4) = 577: batch 1 ends at round 2 * 577
    agent = BatchedBLiN(make_problem(T), seeds=[0], record_history=True)
    n1 = blin_quota(1, T)
    _run(agent, 2 * n1 + 1, lambda x: (x[:, 0] < 0.5).astype(float))  # maximal gap: 1 vs 0
    rec = agent.history[0][0]
    np.testing.assert_array_equal(rec["sums"] / rec["counts"], [1.0, 0.0])
    assert rec["keep"].all()
    depth, cells = agent.active_cells(0)
    assert depth == 2
    np.testing.assert_array_equal(cells[:, 0], [0, 1, 2, 3])


def test_clear_peak_survivors_contain_peak_2d_uniform():
    T = 5000
    agent = BatchedBLiN(
        make_problem(T, 2),
        seeds=[agent_seed(5)],
        batch_const=0.25,
        elim_const=0.5,
        play_point="uniform",
        record_history=True,
    )
    X, _ = _run(agent, T, peak)
    assert np.all((X >= 0) & (X <= 1))
    # uniform play: every action lies in the cell being played, not always at its centre
    for rec in agent.history[0]:
        assert rec["cells"].shape[1] == 2 and rec["counts"].min() > 0
    depth, cells = agent.active_cells(0)
    r = 2.0**-depth
    assert depth >= 3 and len(agent.history[0]) >= 2
    assert len(cells) < 4**depth / 4  # most of the square was eliminated
    peak_cell = np.floor(np.array([0.3, 0.3]) / r)
    assert np.any(np.all(cells == peak_cell, axis=1))
    last = X[0, -1]
    assert not np.allclose((np.floor(last / r) + 0.5) * r, last)


def _simulate(agent_or_list, seeds, T, batched, d):
    rngs = [np.random.default_rng(100 + s) for s in seeds]
    acts = []
    for t in range(T):
        if batched:
            x = agent_or_list.act(np.zeros((len(seeds), 1)))
        else:
            x = np.stack([a.act(np.zeros(1)) for a in agent_or_list])
        assert x.shape == (len(seeds), d) and np.all((x >= 0) & (x <= 1))
        c = 0.3 + 0.4 * (t > T // 2)  # one change of the peak
        m = peak(x, c)
        y = np.array([float(rngs[i].random() < m[i]) for i in range(len(seeds))])
        if batched:
            agent_or_list.update(x, y, np.zeros((len(seeds), 1)))
        else:
            for i, a in enumerate(agent_or_list):
                a.update(x[i], y[i], np.zeros(1))
        acts.append(x.copy())
    return np.stack(acts, 1)


@pytest.mark.parametrize("d,play_point", [(1, "uniform"), (1, "center"), (2, "uniform")])
def test_batched_equals_per_run_and_deterministic(d, play_point):
    T = 1500
    seeds = [0, 1, 2]
    problem = make_problem(T, d)
    kw = dict(batch_const=0.3, elim_const=0.3, play_point=play_point)
    batched = _simulate(BatchedBLiN(problem, seeds=[agent_seed(s) for s in seeds], **kw), seeds, T, True, d)
    per_run = _simulate([BLiN(problem, seed=agent_seed(s), **kw) for s in seeds], seeds, T, False, d)
    np.testing.assert_array_equal(batched, per_run)
    again = _simulate(BatchedBLiN(problem, seeds=[agent_seed(s) for s in seeds], **kw), seeds, T, True, d)
    np.testing.assert_array_equal(batched, again)
    other = _simulate(BatchedBLiN(problem, seeds=[agent_seed(2), agent_seed(0)], **kw), [2, 0], T, True, d)
    np.testing.assert_array_equal(other[0], batched[2])
    np.testing.assert_array_equal(other[1], batched[0])
    if play_point == "uniform":
        assert not np.array_equal(batched[0], batched[1])  # different agent streams


def test_registry_and_bad_input():
    info = get_agent_info("blin", ENV_ID)
    assert info.role == "baseline" and info.batched_factory is BatchedBLiN
    assert info.defaults["batch_const"] == 16.0 and info.defaults["elim_const"] == 4.0
    problem = make_problem(100)
    assert isinstance(make_agent("blin", problem, seed=agent_seed(0)), BLiN)
    b = make_batched_agent("blin", problem, seeds=[agent_seed(0), agent_seed(1)])
    assert b.n_envs == 2
    np.testing.assert_array_equal(b.act(None), [[0.25], [0.25]])
    with pytest.raises(ValueError, match="play_point"):
        BatchedBLiN(problem, seeds=[0], play_point="corner")
    with pytest.raises(ValueError, match="batch_const"):
        BatchedBLiN(problem, seeds=[0], batch_const=0.0)
    with pytest.raises(ValueError, match="elim_const"):
        BatchedBLiN(problem, seeds=[0], elim_const=-1.0)
    with pytest.raises(ValueError, match="max_depth"):
        BatchedBLiN(problem, seeds=[0], max_depth=0)
    with pytest.raises(ValueError, match="rewards"):
        b.update(np.zeros((2, 1)), np.zeros(3), None)


def test_real_env_vector_equals_single_runs():
    """With the real NonStatLipschitz-v0: batched agent + vector env == per-run agent + single env."""
    import papergym.envs  # noqa: F401  (registers the env)
    from papergym.envs.bandits.lipschitz import NonStatLipschitzVectorEnv

    T, seeds = 600, [0, 1, 2]
    kw = dict(instance="piecewise-tents", horizon=T)
    hp = dict(batch_const=0.3, play_point="uniform")
    venv = NonStatLipschitzVectorEnv(num_envs=3, **kw)
    obs, _ = venv.reset(seed=seeds)
    agent = make_batched_agent("blin", venv.problem, seeds=[agent_seed(s) for s in seeds], **hp)
    acts, regret = [], np.zeros(3)
    for t in range(1, T + 1):
        a = agent.act(obs)
        regret += venv.oracle.regret(a, t)
        obs, r, _, _, _ = venv.step(a)
        agent.update(a, r, obs)
        acts.append(a.copy())
    acts = np.stack(acts, 1)
    assert np.all(regret >= 0) and np.all(regret < 0.5 * T)
    assert max(agent.diagnostics()["batches"]) >= 2
    for i, s in enumerate(seeds):
        env = gym.make(ENV_ID, **kw)
        o, _ = env.reset(seed=s)
        single = make_agent("blin", env.unwrapped.problem, seed=agent_seed(s), **hp)
        for t in range(T):
            a = single.act(o)
            np.testing.assert_array_equal(a, acts[i, t])
            o, r, _, _, _ = env.step(a)
            single.update(a, r, o)
