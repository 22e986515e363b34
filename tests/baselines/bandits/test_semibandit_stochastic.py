"""Stochastic baselines of MSetSemiBandit-v0: combucb, comb-ts, uniform-random (known answers)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from papergym.agents.base import make_agent, make_batched_agent
from papergym.agents.rng import rand_uniform, rng_state
from papergym.baselines.bandits.comb_ts import BatchedCombTS, sample_beta
from papergym.baselines.bandits.combucb import BatchedCombUCB, m_smallest, sweep_action
from papergym.baselines.bandits.semibandit_uniform import BatchedSemiBanditUniform
from papergym.envs.bandits.semibandit import ENV_ID, make_problem
from papergym.envs.spec import agent_seed

AGENTS = ("combucb", "comb-ts", "uniform-random")


def seeds(n):
    return [agent_seed(s) for s in range(n)]


def zero_obs(n, d):
    return {"losses": np.zeros((n, d)), "observed": np.zeros((n, d), dtype=np.int8)}


def stochastic_means(d, m, gap):
    """The ``stochastic`` family with the optimal set first: 0.5(1 - g) for arms < m, 0.5(1 + g) otherwise."""
    return np.where(np.arange(d) < m, 0.5 * (1 - gap), 0.5 * (1 + gap))


def simulate(agent, mu, T, noise_seed=123, record_actions=False):
    """Play ``agent`` (batched) on Bernoulli losses ``1{U < mu}`` (one uniform per arm, round and run,
    drawn before the action); returns the cumulative pseudo-regret (T, n) and optionally the actions."""
    n, d = agent.n_envs, mu.shape[0]
    m = agent.m
    best = np.sort(mu)[:m].sum()
    rng = np.random.default_rng(noise_seed)
    obs = zero_obs(n, d)
    cum = np.empty((T, n))
    acts = []
    total = np.zeros(n)
    for t in range(T):
        u = rng.random((n, d))
        a = agent.act(obs)
        assert a.shape == (n, d) and a.dtype == np.int8
        assert (a.sum(axis=1) == m).all()
        total += a @ mu - best
        cum[t] = total
        losses = (u < mu) * a
        obs = {"losses": losses.astype(float), "observed": a.copy()}
        agent.update(a, -losses.sum(axis=1).astype(float), obs)
        if record_actions:
            acts.append(a.copy())
    return (cum, np.array(acts)) if record_actions else cum


# ------------------------------------------------------------------------------------- m_smallest
def test_m_smallest_matches_stable_sort_with_ties():
    rng = np.random.default_rng(0)
    for d, m in [(5, 1), (7, 3), (10, 5), (12, 12)]:
        x = rng.integers(0, 3, size=(200, d)).astype(float)  # many ties
        x[rng.random((200, d)) < 0.1] = -np.inf
        mask = m_smallest(x, m)
        assert mask.dtype == np.int8 and (mask.sum(axis=1) == m).all()
        ref = np.zeros_like(mask)
        idx = np.argsort(x, axis=1, kind="stable")[:, :m]  # by value, then lowest index
        np.put_along_axis(ref, idx, 1, axis=1)
        np.testing.assert_array_equal(mask, ref)


# ------------------------------------------------------------------------------------------ combucb
@pytest.mark.parametrize(
    "d,m,blocks",
    [
        (10, 3, [[0, 1, 2], [3, 4, 5], [6, 7, 8], [7, 8, 9]]),  # d not a multiple of m: last m arms
        (6, 3, [[0, 1, 2], [3, 4, 5]]),
        (4, 1, [[0], [1], [2], [3]]),
        (5, 5, [[0, 1, 2, 3, 4]]),
    ],
)
def test_combucb_sweep_exact_rounds(d, m, blocks):
    ag = BatchedCombUCB(make_problem(d, m), seeds=seeds(3))
    assert ag.sweep_rounds == math.ceil(d / m) == len(blocks)
    obs = zero_obs(3, d)
    seen = np.zeros(d, dtype=int)
    for t, blk in enumerate(blocks, start=1):
        a = ag.act(obs)
        expect = np.zeros(d, dtype=np.int8)
        expect[blk] = 1
        np.testing.assert_array_equal(a, np.broadcast_to(expect, (3, d)))
        np.testing.assert_array_equal(sweep_action(t, d, m), expect)
        seen += expect
        ag.update(a, np.zeros(3), {"losses": np.ones((3, d)) * a, "observed": a})
    assert (seen >= 1).all()
    np.testing.assert_array_equal(ag.counts, np.broadcast_to(seen, (3, d)))


def test_combucb_index_by_hand():
    # d = 4, m = 2: sweep {0,1}, {2,3}; then hand-made extra observations
    ag = BatchedCombUCB(make_problem(4, 2), seeds=seeds(1), width=1.0)
    obs = zero_obs(1, 4)
    feed = [np.array([[1.0, 0.0, 0.0, 0.0]]), np.array([[0.0, 0.0, 1.0, 1.0]])]
    for f in feed:
        a = ag.act(obs)
        ag.update(a, -np.array([(f * a).sum()]), {"losses": f * a, "observed": a})
    # round 3 (first index round): T = (1, 1, 1, 1), means (1, 0, 1, 1)
    lcb = ag.lower_bounds().copy()
    w = math.sqrt(1.5 * math.log(3) / 1)
    np.testing.assert_allclose(lcb[0], [1 - w, 0 - w, 1 - w, 1 - w], rtol=0, atol=1e-15)
    a = ag.act(obs)
    np.testing.assert_array_equal(a[0], [1, 1, 0, 0])  # arm 1, then the tie {0, 2, 3} -> arm 0
    ag.update(a, None, {"losses": np.array([[0.0, 1.0, np.nan, np.nan]]), "observed": a})  # NaN unobserved
    # round 4: T = (2, 2, 1, 1), sums (1, 1, 1, 1)
    np.testing.assert_array_equal(ag.counts[0], [2, 2, 1, 1])
    np.testing.assert_array_equal(ag.sums[0], [1, 1, 1, 1])
    expect = [0.5 - math.sqrt(1.5 * math.log(4) / 2)] * 2 + [1 - math.sqrt(1.5 * math.log(4))] * 2
    np.testing.assert_allclose(ag.lower_bounds()[0], expect, rtol=0, atol=1e-15)
    # 0.5 - 1.020 = -0.520 < 1 - 1.442 = -0.442 -> arms 0, 1
    np.testing.assert_array_equal(ag.act(obs)[0], [1, 1, 0, 0])
    # width 2 (the reference code's factor on +-1 losses) changes the order: 1 - 2.884 < 0.5 - 2.039
    ag2 = BatchedCombUCB(make_problem(4, 2), seeds=seeds(1), width=2.0)
    ag2.counts[:] = ag.counts
    ag2.sums[:] = ag.sums
    ag2.t = 3
    np.testing.assert_array_equal(ag2.act(obs)[0], [0, 0, 1, 1])


def test_combucb_ties_lowest_index():
    ag = BatchedCombUCB(make_problem(6, 3), seeds=seeds(2), width=1.0)
    ag.t = ag.sweep_rounds
    ag.counts[:] = 4.0
    ag.sums[0] = [2, 2, 2, 2, 2, 2]  # all equal -> 0, 1, 2
    ag.sums[1] = [3, 1, 2, 1, 2, 2]  # 1, 3 below, tie {2, 4, 5} at the third place -> 2
    a = ag.act(zero_obs(2, 6))
    np.testing.assert_array_equal(a, [[1, 1, 1, 0, 0, 0], [0, 1, 1, 1, 0, 0]])


def test_combucb_unseen_arm_goes_first():
    ag = BatchedCombUCB(make_problem(4, 2), seeds=seeds(1))
    ag.t = 5
    ag.counts[0] = [3, 0, 3, 3]
    ag.sums[0] = [0, 0, 0, 0]
    lcb = ag.lower_bounds()
    assert lcb[0, 1] == -np.inf and np.isfinite(lcb[0, [0, 2, 3]]).all()
    np.testing.assert_array_equal(ag.act(zero_obs(1, 4))[0], [1, 1, 0, 0])


@pytest.mark.parametrize("cls", [BatchedCombUCB, BatchedCombTS])
def test_non_finite_observed_loss_raises_state_unchanged(cls):
    ag = cls(make_problem(4, 2), seeds=seeds(2))
    a = ag.act(zero_obs(2, 4))
    before = {k: np.array(v, copy=True) for k, v in vars(ag).items() if isinstance(v, np.ndarray)}
    losses = a.astype(float)
    losses[1, np.flatnonzero(a[1])[0]] = np.nan
    with pytest.raises(ValueError, match="losses"):
        ag.update(a, None, {"losses": losses, "observed": a})
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(ag, k), v)


# ------------------------------------------------------------------------------------------ comb-ts
def test_comb_ts_binary_updates_are_counts():
    ag = BatchedCombTS(make_problem(5, 2), seeds=seeds(2))
    seq = [  # (observed, losses) per round, both runs
        ([[1, 1, 0, 0, 0], [0, 0, 0, 1, 1]], [[0, 1, 7, 7, 7], [0, 0, 0, 1, 1]]),  # unobserved junk ignored
        ([[1, 0, 1, 0, 0], [0, 0, 0, 1, 1]], [[1, 0, 0, 0, 0], [0, 0, 0, 0, 1]]),
        ([[1, 1, 0, 0, 0], [1, 1, 0, 0, 0]], [[0, 0, 0, 0, 0], [0, 1, np.nan, 0, 0]]),  # NaN unobserved: ignored
    ]
    state_before = ag._rs.copy()
    for obsd, loss in seq:
        obsd = np.array(obsd, dtype=np.int8)
        ag.update(obsd, np.zeros(2), {"losses": np.array(loss, float), "observed": obsd})
    np.testing.assert_array_equal(ag.a, [[1 + 2, 1 + 1, 1 + 1, 1, 1], [1 + 1, 1, 1, 1 + 1, 1]])
    np.testing.assert_array_equal(ag.b, [[1 + 1, 1 + 1, 1, 1, 1], [1, 1 + 1, 1, 1 + 1, 1 + 2]])
    np.testing.assert_array_equal(ag._rs, state_before)  # binary losses draw nothing


def test_comb_ts_fractional_losses_bernoulli_trick():
    ag = BatchedCombTS(make_problem(4, 2), seeds=[agent_seed(7)])
    rs = rng_state(agent_seed(7))  # the run's own stream, replayed by hand
    a, b = np.ones(4), np.ones(4)
    rng = np.random.default_rng(1)
    for _ in range(50):
        obsd = np.zeros(4, dtype=np.int8)
        obsd[rng.choice(4, 2, replace=False)] = 1
        loss = np.round(rng.random(4), 2) * obsd
        loss[obsd.astype(bool) & (rng.random(4) < 0.3)] = 1.0  # a few binary ones mixed in
        for j in range(4):  # in arm order; a draw only for 0 < l < 1
            if obsd[j]:
                if loss[j] <= 0:
                    a[j] += 1
                elif loss[j] >= 1:
                    b[j] += 1
                elif rand_uniform(rs) >= loss[j]:
                    a[j] += 1
                else:
                    b[j] += 1
        ag.update(obsd[None], None, {"losses": loss[None], "observed": obsd[None]})
    np.testing.assert_array_equal(ag.a[0], a)
    np.testing.assert_array_equal(ag.b[0], b)
    # frequency: loss 0.3 on every arm -> success rate 0.7
    ag = BatchedCombTS(make_problem(4, 4), seeds=seeds(1))
    for _ in range(2500):
        ag.update(None, None, {"losses": np.full((1, 4), 0.3), "observed": np.ones((1, 4), np.int8)})
    succ = (ag.a.sum() - 4) / 10_000
    assert abs(succ - 0.7) < 3 * math.sqrt(0.21 / 10_000)


@pytest.mark.parametrize("a,b", [(1, 1), (1, 5), (3, 7), (40, 15), (600, 400)])
def test_beta_sampler_distribution(a, b):
    x = sample_beta(a, b, 20_000, seed=agent_seed(a * 1000 + b))
    assert ((x > 0) & (x < 1)).all()
    mean, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    assert abs(x.mean() - mean) < 4 * math.sqrt(var / x.size)
    assert abs(x.var() / var - 1) < 0.06
    assert stats.kstest(x, stats.beta(a, b).cdf).pvalue > 1e-4


def test_comb_ts_plays_m_largest_samples():
    ag = BatchedCombTS(make_problem(8, 3), seeds=seeds(4))
    ag.a[:] = np.arange(1, 9)
    ag.b[:] = 5.0
    for _ in range(20):
        act = ag.act(zero_obs(4, 8))
        top = np.argsort(-ag.theta, axis=1, kind="stable")[:, :3]
        ref = np.zeros_like(act)
        np.put_along_axis(ref, top, 1, axis=1)
        np.testing.assert_array_equal(act, ref)


# ------------------------------------------------------------------------------------ uniform-random
def test_uniform_is_m_smallest_of_own_uniforms():
    ag = BatchedSemiBanditUniform(make_problem(7, 3), seeds=seeds(3))
    acts = np.array([ag.act(None) for _ in range(30)])  # (30, 3, 7)
    for i, s in enumerate(seeds(3)):
        u = np.random.default_rng(s).random(30 * 7).reshape(30, 7)
        np.testing.assert_array_equal(acts[:, i], m_smallest(u, 3))


def test_uniform_inclusion_and_subset_frequencies():
    d, m, n, T = 5, 2, 20, 1000
    ag = make_batched_agent("uniform-random", make_problem(d, m), seeds=seeds(n))
    acts = np.array([ag.act(None) for _ in range(T)]).reshape(-1, d)
    N = acts.shape[0]
    p = m / d
    freq = acts.mean(axis=0)
    assert (np.abs(freq - p) < 3 * math.sqrt(p * (1 - p) / N)).all()
    # every one of the C(5, 2) = 10 subsets equally likely
    codes = acts @ (1 << np.arange(d))
    counts = np.unique(codes, return_counts=True)[1]
    assert counts.size == math.comb(d, m)
    assert stats.chisquare(counts).pvalue > 1e-4


# ------------------------------------------------------------------------------------- all three
@pytest.mark.parametrize("name", AGENTS)
def test_batched_equals_per_run_and_deterministic(name):
    d, m, T, n = 9, 4, 300, 3
    mu = np.linspace(0.2, 0.8, d)
    problem = make_problem(d, m, T)
    ss = seeds(n)
    _, acts1 = simulate(make_batched_agent(name, problem, seeds=ss), mu, T, record_actions=True)
    _, acts2 = simulate(make_batched_agent(name, problem, seeds=ss), mu, T, record_actions=True)
    np.testing.assert_array_equal(acts1, acts2)  # deterministic
    # per-run agents (dict observations of one run), same noise rows
    rng = np.random.default_rng(123)
    U = rng.random((T, n, d))
    for i in range(n):
        ag = make_agent(name, problem, seed=ss[i])
        obs = {"losses": np.zeros(d), "observed": np.zeros(d, dtype=np.int8)}
        for t in range(T):
            a = ag.act(obs)
            np.testing.assert_array_equal(a, acts1[t, i])
            losses = (U[t, i] < mu) * a
            obs = {"losses": losses.astype(float), "observed": a.copy()}
            ag.update(a, -float(losses.sum()), obs)
    if name != "combucb":  # the randomised agents differ across seeds
        assert not np.array_equal(acts1[:, 0], acts1[:, 1])


@pytest.mark.parametrize(
    "name,hp,field",
    [
        ("combucb", {"width": -1.0}, "width"),
        ("combucb", {"width": float("nan")}, "width"),
        ("combucb", {"width": "wide"}, "width"),
        ("comb-ts", {"prior_a": 0.5}, "prior_a"),
        ("comb-ts", {"prior_b": float("inf")}, "prior_b"),
    ],
)
def test_bad_hyperparameters(name, hp, field):
    with pytest.raises(ValueError, match=field):
        make_batched_agent(name, make_problem(), seeds=seeds(1), **hp)
    with pytest.raises(ValueError, match=field):
        make_agent(name, make_problem(), seed=0, **hp)


def test_registered_for_the_env():
    from papergym.agents.base import get_agent_info

    for name in AGENTS:
        info = get_agent_info(name, ENV_ID)
        assert info.role == "baseline" and info.batched_factory is not None and ENV_ID in info.envs
    assert get_agent_info("combucb", ENV_ID).defaults == {"width": 1.0}
    # uniform-random of the other envs is a different factory
    assert (
        get_agent_info("uniform-random", ENV_ID).factory
        is not get_agent_info("uniform-random", "NonStatLipschitz-v0").factory
    )


def test_m_equals_d_zero_regret():
    mu = np.linspace(0.1, 0.9, 4)
    for name in AGENTS:
        cum = simulate(make_batched_agent(name, make_problem(4, 4, 50), seeds=seeds(2)), mu, 50)
        assert np.abs(cum).max() < 1e-12


def test_stochastic_regret_logarithmic_and_below_uniform():
    # gap 0.4 (means 0.3 / 0.7): CombUCB's confidence widths leave their transient by T ~ 2000
    d, m, gap, n, T = 10, 3, 0.4, 8, 4000
    mu = stochastic_means(d, m, gap)
    problem = make_problem(d, m, T)
    R = {name: simulate(make_batched_agent(name, problem, seeds=seeds(n)), mu, T).mean(axis=1) for name in AGENTS}
    uni = R["uniform-random"]
    # uniform: linear regret, E[regret per round] = m g (1 - m/d) per the means
    per_round = m * gap * (1 - m / d)
    assert abs(uni[-1] / T - per_round) < 0.1 * per_round
    for name in ("combucb", "comb-ts"):
        r2000, r4000 = R[name][1999], R[name][3999]
        assert r4000 - r2000 < 0.3 * r2000, (name, r2000, r4000)  # ~0.17 (combucb), ~0.09 (comb-ts)
        assert r4000 < 0.25 * uni[-1], (name, r4000, uni[-1])


# ------------------------------------------------------------------------------------ through the env
def _need_env():
    import papergym.envs as penvs

    assert ENV_ID in penvs.list_envs(), f"{ENV_ID} must be registered"


@pytest.mark.parametrize("name", AGENTS)
def test_env_gym_make_regret_recorder_and_vector_env_agree(name):
    _need_env()
    import gymnasium as gym

    from papergym.envs.wrappers import RegretRecorder
    from papergym.leaderboard.runner.compare import run_cells

    kw = {"instance": "stochastic", "horizon": 600, "d": 7, "m": 3, "gap": 0.4}
    seeds_ = [0, 1, 2]
    batched = run_cells(ENV_ID, kw, name, {}, seeds_, mode="batched")
    per_run = run_cells(ENV_ID, kw, name, {}, seeds_, mode="per-run")
    for b, p in zip(batched, per_run):
        assert b["status"] == p["status"] == "ok", (b.get("error"), p.get("error"))
        assert b["mode"] == "batched" and p["mode"] == "per-run"
        np.testing.assert_array_equal(b["cum_regret"], p["cum_regret"])  # vector env == gym.make loop
    # by hand: gym.make + RegretRecorder + per-run agent
    env = RegretRecorder(gym.make(ENV_ID, **kw))
    obs, _ = env.reset(seed=1)
    ag = make_agent(name, env.unwrapped.problem, seed=agent_seed(1))
    first = []
    for t in range(600):
        a = ag.act(obs)
        assert env.unwrapped.action_space.contains(a)
        obs, r, _, _, _ = env.step(a)
        np.testing.assert_array_equal(obs["observed"], a)
        assert r == -obs["losses"].sum()
        ag.update(a, r, obs)
        if t < 3:
            first.append(a.copy())
    regrets = np.asarray(env.regrets)
    assert (regrets >= 0).all()
    assert math.isclose(regrets.sum(), batched[1]["cum_regret"][-1], rel_tol=0, abs_tol=1e-9)
    if name == "combucb":  # the sweep {0,1,2}, {3,4,5}, {4,5,6} whatever the hidden arm permutation
        np.testing.assert_array_equal(
            np.array(first), [[1, 1, 1, 0, 0, 0, 0], [0, 0, 0, 1, 1, 1, 0], [0, 0, 0, 0, 1, 1, 1]]
        )
    if name != "uniform-random":  # learners end far below uniform's linear regret m g (1 - m/d) n
        assert regrets.sum() < 0.3 * 3 * 0.4 * (1 - 3 / 7) * 600
