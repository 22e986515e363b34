"""Tests of the ``zooming`` baseline (papergym.baselines.bandits.zooming)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

from papergym.agents.base import get_agent_info, make_agent, make_batched_agent
from papergym.baselines.bandits.zooming import BatchedZooming, Zooming, zooming_radius
from papergym.envs.bandits.lipschitz import make_problem as _env_problem
from papergym.envs.spec import ProblemSpec, agent_seed

ENV_ID = "NonStatLipschitz-v0"


def make_problem(T: int, d: int = 1) -> ProblemSpec:
    """The public problem of NonStatLipschitz-v0 (the env module's own constructor)."""
    return _env_problem(d, int(T), "bernoulli", 0.1)


def peak(x: np.ndarray, t: int = 0, c: float = 0.3) -> np.ndarray:
    """Stationary tent, one clear peak at c (per row of x, l_inf)."""
    return 0.9 - np.max(np.abs(np.atleast_2d(x) - c), axis=1)


def two_peak(x: np.ndarray, t: int, T: int) -> np.ndarray:
    a = 0.5 * (1 - np.cos(2 * np.pi * 3 * (t - 1) / T))
    x0 = np.atleast_2d(x)[:, 0]
    return (1 - a) * (1 - np.abs(x0 - 0.3)) + a * (1 - np.abs(x0 - 0.7))


# ------------------------------------------------------------------------------------ brute force
def uncovered_1d(points: np.ndarray, radii: np.ndarray) -> float | None:
    """Smallest point of [0, 1] outside every open interval (x - r, x + r), by brute force.

    The uncovered set is closed, so its minimum is 0 or a right endpoint x + r: test those candidates.
    """
    lo, hi = points - radii, points + radii
    cands = np.concatenate([[0.0, 1.0], hi[(hi >= 0) & (hi <= 1)]])
    for p in np.sort(cands):
        if not np.any((lo < p) & (p < hi)):
            return float(p)
    return None


def test_radius_formula_closed_form():
    # r = sqrt(2 log T / (1 + n)):  T = 1024, n = 3 -> sqrt(2 * 10 log 2 / 4) = sqrt(5 log 2)
    assert zooming_radius(3, 1024) == pytest.approx(math.sqrt(5 * math.log(2)), rel=1e-15)
    assert zooming_radius(0, 1024, radius_const=0.5) == pytest.approx(math.sqrt(5 * math.log(2)), rel=1e-15)
    T = 600
    agent = BatchedZooming(make_problem(T), seeds=[0])
    rng = np.random.default_rng(1)
    for _t in range(1, T + 1):
        x = agent.act(None)
        agent.update(x, (rng.random(1) < peak(x)).astype(float), None)
    k = agent.n_active[0]
    n = agent.cnt[0, :k]
    assert n.sum() == T
    np.testing.assert_array_equal(agent.radii(0), np.sqrt(2.0 * math.log(T) / (1.0 + n)))
    np.testing.assert_array_equal(agent.radii(0), zooming_radius(n, T))


@pytest.mark.parametrize("radius_const", [2.0, 0.05, 0.004])
def test_cover_invariant_and_activation_rule_1d(radius_const):
    """After every step the open balls cover [0, 1] exactly, and every activated point is the
    smallest uncovered point of the state it was activated in; the index is the brute-force argmax."""
    T = 400
    agent = BatchedZooming(make_problem(T), seeds=[0], radius_const=radius_const)
    c_log = radius_const * math.log(T)
    r0 = math.sqrt(c_log)
    # initial state: activation from the empty set, one point after the other
    pts = agent.active_points(0)[:, 0]
    for m in range(len(pts)):
        assert pts[m] == uncovered_1d(pts[:m], np.full(m, r0))
    assert uncovered_1d(pts, np.full(len(pts), r0)) is None
    if radius_const < 0.01:
        assert len(pts) >= 2  # r0 < 1/2: the initial cover needs several points
    rng = np.random.default_rng(7)
    stats: dict[float, list[float]] = {}  # position -> [pulls, reward sum] (positions are distinct)
    multi = 0
    for _t in range(1, T + 1):
        pts = agent.active_points(0)[:, 0]
        assert len(set(pts.tolist())) == len(pts)
        n = np.array([stats.get(p, [0, 0.0])[0] for p in pts])
        s = np.array([stats.get(p, [0, 0.0])[1] for p in pts])
        mean = np.where(n > 0, s / np.maximum(n, 1), 0.0)
        index = mean + 2.0 * np.sqrt(c_log / (1.0 + n))
        j = int(np.argmax(index))  # first maximiser = earliest activated
        x = agent.act(None)
        assert x.shape == (1, 1) and x[0, 0] == pts[j]
        y = float(rng.random() < peak(x)[0])
        stats.setdefault(pts[j], [0, 0.0])
        stats[pts[j]][0] += 1
        stats[pts[j]][1] += y
        agent.update(x, np.array([y]), None)
        new_pts = agent.active_points(0)[:, 0]
        np.testing.assert_array_equal(new_pts[: len(pts)], pts)  # never deactivated
        n_after = np.array([stats.get(p, [0, 0.0])[0] for p in new_pts])
        radii = np.sqrt(c_log / (1.0 + n_after))
        np.testing.assert_array_equal(agent.radii(0), radii)
        for m in range(len(pts), len(new_pts)):
            assert new_pts[m] == uncovered_1d(new_pts[:m], radii[:m])
        multi = max(multi, len(new_pts) - len(pts))
        assert uncovered_1d(new_pts, radii) is None
    if radius_const == 2.0:
        assert r0 > 1 and multi == 1  # a fresh point re-covers everything


def test_two_activations_in_one_step_hand_made():
    """Hand-made state: points 0, 0.5, 1 with pulls 1, 0, 1 and r(n) = 0.3 / sqrt(1 + n) cover [0, 1];
    pulling 0.5 shrinks its ball from (0.2, 0.8) to (0.5 -+ r1), which opens the gaps
    [r1, 0.5 - r1] and [0.5 + r1, 1 - r1]: activation adds r1 (the smallest uncovered point, right end
    of the ball of 0), then 0.5 + r1 (the ball of r1 ends at 2 r1 < 0.5 + r1)."""
    agent = BatchedZooming(make_problem(100), seeds=[0])
    agent.c_log = 0.09  # radius_const * log T, set directly for round numbers
    agent.x[0, :3, 0] = [0.0, 0.5, 1.0]
    agent.cnt[0, :3] = [1, 0, 1]
    agent.sums[0, :3] = [0.0, 0.0, 0.0]
    agent.n_active[0] = 3
    r1 = math.sqrt(0.09 / 2)
    assert uncovered_1d(agent.active_points(0)[:, 0], agent.radii(0)) is None
    assert agent.act(None)[0, 0] == 0.5  # index 0 + 2 * 0.3 beats 0 + 2 * r1
    agent.update(np.array([[0.5]]), np.array([1.0]), None)
    np.testing.assert_array_equal(agent.active_points(0)[:, 0], [0.0, 0.5, 1.0, 0.0 + r1, 0.5 + r1])
    np.testing.assert_array_equal(agent.cnt[0, :5], [1, 1, 1, 0, 0])
    assert uncovered_1d(agent.active_points(0)[:, 0], agent.radii(0)) is None


def test_late_pulls_concentrate_near_peak():
    T = 6000
    agent = Zooming(make_problem(T), seed=agent_seed(0))
    rng = np.random.default_rng(3)
    late = []
    for t in range(1, T + 1):
        x = agent.act(np.zeros(1))
        assert x.shape == (1,) and 0.0 <= x[0] <= 1.0
        agent.update(x, float(rng.random() < peak(x)[0]), np.zeros(1))
        if t > T // 2:
            late.append(x[0])
    late = np.asarray(late)
    assert np.mean(np.abs(late - 0.3) < 0.1) > 0.8
    assert np.mean(np.abs(late - 0.3) > 0.4) < 0.02


def _simulate(agents_or_batched, seeds, T, batched, d=1):
    """Bernoulli rewards from one noise generator per run (seeded by the run), two-peak means."""
    rngs = [np.random.default_rng(1000 + s) for s in seeds]
    acts = []
    for t in range(1, T + 1):
        if batched:
            x = agents_or_batched.act(np.zeros((len(seeds), 1)))
        else:
            x = np.stack([a.act(np.zeros(1)) for a in agents_or_batched])
        assert x.shape == (len(seeds), d)
        assert np.all((x >= 0) & (x <= 1))
        m = two_peak(x, t, T)
        y = np.array([float(rngs[i].random() < m[i]) for i in range(len(seeds))])
        if batched:
            agents_or_batched.update(x, y, np.zeros((len(seeds), 1)))
        else:
            for i, a in enumerate(agents_or_batched):
                a.update(x[i], y[i], np.zeros(1))
        acts.append(x.copy())
    return np.stack(acts, axis=1)  # (runs, T, d)


@pytest.mark.parametrize("d", [1, 2])
def test_batched_equals_per_run_and_deterministic(d):
    T = 1500
    seeds = [0, 1, 2]
    problem = make_problem(T, d)
    kw = {"radius_const": 0.3}  # more activations than the default
    batched = _simulate(BatchedZooming(problem, seeds=[agent_seed(s) for s in seeds], **kw), seeds, T, True, d)
    per_run = _simulate([Zooming(problem, seed=agent_seed(s), **kw) for s in seeds], seeds, T, False, d)
    np.testing.assert_array_equal(batched, per_run)
    again = _simulate(BatchedZooming(problem, seeds=[agent_seed(s) for s in seeds], **kw), seeds, T, True, d)
    np.testing.assert_array_equal(batched, again)
    # other companions in the batch: run 2 alone, runs (2, 0) in another order
    other = _simulate(BatchedZooming(problem, seeds=[agent_seed(2), agent_seed(0)], **kw), [2, 0], T, True, d)
    np.testing.assert_array_equal(other[0], batched[2])
    np.testing.assert_array_equal(other[1], batched[0])
    assert len(np.unique(batched[0], axis=0)) > 3  # it did explore


def test_grid_cover_invariant_2d():
    """d = 2: every grid midpoint is in some open l_inf box after every step; activated points are the
    uncovered grid point of smallest flat index."""
    T, G = 500, 16
    agent = BatchedZooming(make_problem(T, 2), seeds=[0], radius_const=0.01, cover_grid=G)
    c_log = 0.01 * math.log(T)
    g = (np.arange(G) + 0.5) / G
    grid = np.stack(np.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 2)  # C order = flat index

    def covered(pts, radii):
        lo = pts[None, :, :] - radii[None, :, None]
        hi = pts[None, :, :] + radii[None, :, None]
        inside = np.all((lo < grid[:, None, :]) & (grid[:, None, :] < hi), axis=2)
        return inside.any(axis=1)

    def check_new(old_k):
        pts = agent.active_points(0)
        radii = agent.radii(0)
        for m in range(old_k, len(pts)):
            cov = covered(pts[:m], radii[:m])
            assert not cov.all()
            assert np.array_equal(pts[m], grid[np.flatnonzero(~cov)[0]])
        assert covered(pts, radii).all()
        np.testing.assert_array_equal(radii, np.sqrt(c_log / (1.0 + agent.cnt[0, : len(pts)])))

    check_new(0)
    assert agent.n_active[0] >= 2
    rng = np.random.default_rng(0)
    grew = 0
    for _t in range(T):
        k = agent.n_active[0]
        x = agent.act(None)
        assert np.all((x >= 0) & (x <= 1))
        # low rewards: the bonus dominates, pulls spread and many balls shrink
        agent.update(x, (rng.random(1) < 0.2 * peak(x)).astype(float), None)
        check_new(k)
        grew += agent.n_active[0] > k
    assert grew > 20


def test_registry_and_bad_input():
    info = get_agent_info("zooming", ENV_ID)
    assert info.role == "baseline" and info.batched_factory is BatchedZooming
    assert info.defaults["radius_const"] == 2.0 and info.defaults["bonus_mult"] == 2.0
    problem = make_problem(100)
    a = make_agent("zooming", problem, seed=agent_seed(0))
    b = make_batched_agent("zooming", problem, seeds=[agent_seed(0), agent_seed(1)])
    assert isinstance(a, Zooming) and b.n_envs == 2
    with pytest.raises(ValueError, match="radius_const"):
        BatchedZooming(problem, seeds=[0], radius_const=-1.0)
    with pytest.raises(ValueError, match="bonus_mult"):
        BatchedZooming(problem, seeds=[0], bonus_mult=float("nan"))
    with pytest.raises(ValueError, match="cover_grid"):
        BatchedZooming(problem, seeds=[0], cover_grid=8)
    with pytest.raises(ValueError, match="rewards"):
        b.act(None)
        b.update(np.zeros((2, 1)), np.zeros(3), None)


def test_real_env_vector_equals_single_runs():
    """With the real NonStatLipschitz-v0: batched agent + vector env == per-run agent + single env."""
    import papergym.envs  # noqa: F401  (registers the env)
    from papergym.envs.bandits.lipschitz import NonStatLipschitzVectorEnv

    T, seeds = 600, [0, 1, 2]
    kw = dict(instance="two-peak-cyclic", horizon=T)
    venv = NonStatLipschitzVectorEnv(num_envs=3, **kw)
    obs, _ = venv.reset(seed=seeds)
    agent = make_batched_agent("zooming", venv.problem, seeds=[agent_seed(s) for s in seeds])
    acts, regret = [], np.zeros(3)
    for t in range(1, T + 1):
        a = agent.act(obs)
        assert np.all((a >= 0) & (a <= 1))
        regret += venv.oracle.regret(a, t)
        obs, r, _, _, _ = venv.step(a)
        agent.update(a, r, obs)
        acts.append(a.copy())
    acts = np.stack(acts, 1)
    assert np.all(regret >= 0) and np.all(regret < 0.5 * T)
    for i, s in enumerate(seeds):
        env = gym.make(ENV_ID, **kw)
        o, _ = env.reset(seed=s)
        single = make_agent("zooming", env.unwrapped.problem, seed=agent_seed(s))
        for t in range(T):
            a = single.act(o)
            np.testing.assert_array_equal(a, acts[i, t])
            o, r, _, _, _ = env.step(a)
            single.update(a, r, o)
