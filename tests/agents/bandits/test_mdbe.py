"""Tests of MDBE (agents/bandits/mdbe.py) against hand-computed answers and invariants
(docs/papers/nonstat-lipschitz.md); the comparison with the reference implementation
(agents/bandits/mdbe_reference.py) is in test_mdbe_reference.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.agents.bandits import mdbe as M
from papergym.agents.bandits.mdbe import MDBE, BatchedMDBE, draw_replay_schedule
from papergym.envs.bandits.lipschitz import make_problem


def problem(T: int, d: int = 1):
    return make_problem(d=d, horizon=T)


def play(agent, T, reward, *, until=None, hook=None):
    """Play ``reward(x (n, d), t) -> (n,)`` for rounds 1..until (default T); ``hook(t, x)`` before
    each update."""
    for t in range(1, (until or T) + 1):
        x = agent.act(None)
        if hook is not None:
            hook(t, x)
        agent.update(x, np.asarray(reward(x, t), dtype=float), None)


# --------------------------------------------------------------------------- randomness
def test_xoshiro256starstar_known_answers():
    """Reference outputs of xoshiro256** from state (1, 2, 3, 4); _rand keeps the top 53 bits."""
    st = np.array([1, 2, 3, 4], dtype=np.uint64)
    raw = [11520, 0, 1509978240, 1215971899390074240]
    assert [M._rand(st) for _ in raw] == [(r >> 11) * 2.0**-53 for r in raw]
    u = np.array([M._rand(M._rng_state(7)) for _ in range(1)] + [M._rand(st) for _ in range(20000)])
    assert np.all((u >= 0) & (u < 1)) and abs(u.mean() - 0.5) < 0.01


# --------------------------------------------------------------------------- step 3: the schedule
def test_schedule_structure():
    rng = np.random.default_rng(0)
    for _ in range(200):
        sched = draw_replay_schedule(5, rng)
        offs = [s for s, _ in sched]
        assert offs == sorted(set(offs))  # at most one start per offset
        for s, j in sched:
            assert 2 <= j <= 4 and s >= 2 and s < 8**5 and s % 8**j == 0
    # the finest dividing depth is tried first: at s = 8^4 = 4096 depth 4 wins w.p. sqrt(4096/4097)
    hits = [dict(draw_replay_schedule(5, rng)).get(4096) for _ in range(300)]
    assert hits.count(4) >= 290


def test_schedule_frequencies_match_sqrt():
    rng = np.random.default_rng(1)
    n = 4000
    counts = {}
    for _ in range(n):
        for s, j in draw_replay_schedule(4, rng):  # block 8^4, replays at depths 2, 3
            counts[(s, j)] = counts.get((s, j), 0) + 1
    for s in range(64, 4096, 64):
        p2 = math.sqrt(64 / (s + 1))
        if s % 512 == 0:
            p3 = math.sqrt(512 / (s + 1))
            expect = {3: p3, 2: (1 - p3) * p2}  # finest first, at most one start
        else:
            expect = {3: 0.0, 2: p2}
        for j, p in expect.items():
            f = counts.get((s, j), 0) / n
            sd = math.sqrt(max(p * (1 - p), 1e-12) / n)
            assert abs(f - p) <= 5 * sd + 1e-12, (s, j, f, p)


def test_replay_windows_durations_nesting_and_double_endings():
    """Seed 4, block 4 (rounds 513..4608), the block-offset schedule: every scheduled depth-j replay is
    active exactly on [t0 + s, t0 + s + 8^j); this seed has nested replays and two replays ending in one
    round."""
    T = 4608
    ag = BatchedMDBE(problem(T), seeds=[4], c0=0.4, replay_schedule="block-offset")
    on = {}
    sched_b4 = []

    def hook(t, x):
        if t == 513:
            sched_b4.extend(ag.schedule())
            assert ag.block_depth[0] == 4 and ag.block_start() == 513
        if t >= 513:
            on[t] = set(ag.active_depths())
            for j in on[t] - {4}:
                assert ag.window_start(j) <= t

    play(ag, T, lambda x, t: np.ones(1), hook=hook)
    ends = [s + 8**j for s, j in sched_b4]
    assert any(ends.count(e) > 1 for e in ends)  # two replays end in the same round
    assert any(len(v) == 3 for v in on.values())  # nested replays (depths 2 and 3 inside block 4)
    for t, depths in on.items():
        assert 4 in depths
        expected = {j for s, j in sched_b4 if 513 + s <= t < 513 + s + 8**j}
        assert depths - {4} == expected, t


def test_replay_schedule_keys():
    """Block 1 starts at round 1: replays start at offsets s (rounds s + 1) with the block-offset
    schedule, at absolute rounds s with the absolute-round one (the default, as in the official code,
    and with code_compat)."""
    starts = {}
    for key, kw in (
        ("block", {"replay_schedule": "block-offset"}),
        ("absolute", {}),
        ("compat", {"code_compat": True}),
    ):
        ag = BatchedMDBE(problem(512), seeds=[1], c0=0.4, **kw)
        seen = set()
        play(
            ag,
            512,
            lambda x, t: np.ones(1),
            hook=lambda t, x: seen.update(ag.window_start(j) for j in ag.active_depths() if j != 3),
        )
        starts[key] = sorted(seen)
        assert seen and {s for s, _ in ag.schedule()} <= set(range(64, 512, 64))
    assert all(s % 64 == 1 for s in starts["block"])
    assert all(s % 64 == 0 for s in starts["absolute"]) and starts["absolute"] == starts["compat"]


def test_absolute_round_schedule_after_the_first_block():
    """Block 2 (depth 4) starts at round 513: with the absolute-round schedule its replays start at
    absolute multiples of 64 (>= 513), never at 513 + a multiple of 64."""
    ag = BatchedMDBE(problem(4608), seeds=[4], c0=0.4)
    seen = set()
    play(
        ag,
        4608,
        lambda x, t: np.ones(1),
        hook=lambda t, x: seen.update(ag.window_start(j) for j in ag.active_depths() if j != ag.block_depth[0]),
    )
    later = sorted(s for s in seen if s >= 513)
    assert later and all(s % 64 == 0 for s in later)
    with pytest.raises(ValueError, match="absolute-round"):
        BatchedMDBE(problem(512), seeds=[1], code_compat=True, replay_schedule="block-offset")


# --------------------------------------------------------------------------- step 7: eviction
def _first_crossing(hits, T, c0, grid, lag=0, log_term="T"):
    """Hand computation for y = 1{x < 1/4} in the first block (depth 3, 4 cells, P = 1/4): cell 0's
    estimate is 4 per hit, the others' 0. First round t at which some window [s1, t - lag] of at least
    two rounds has 4 * hits > c0 L sqrt(max(8 n, 64)) + n / 2 (L = log T, or log 8^3 for "block"),
    with t - 1 > 2."""
    L = math.log(T) if log_term == "T" else math.log(8**3)
    for t in range(4, len(hits) + 1):
        e = t - lag
        starts = range(1, e) if grid == "all" else sorted({e - 2**k for k in range(20) if e - 2**k >= 1} | {1})
        for s1 in starts:
            n = e - s1 + 1
            w = 4.0 * sum(hits[s1 - 1 : e])
            if w > c0 * L * math.sqrt(max(8 * n, 64)) + 4 * n / 8:
                return t
    return None


@pytest.mark.parametrize(
    "grid,compat,log_term,T",
    [("dyadic", False, "T", 512), ("all", False, "T", 512), ("all", True, "T", 512), ("dyadic", False, "block", 10**6)],
)
def test_eviction_exactly_at_first_crossing(grid, compat, log_term, T):
    c0 = 0.1
    ag = BatchedMDBE(problem(T), seeds=[3], c0=c0, start_grid=grid, code_compat=compat, log_term=log_term)
    hits, evicted_at = [], None
    for t in range(1, 200):
        assert np.allclose(ag.probabilities(3), 0.25)  # all four cells active, no replay yet
        x = ag.act()
        hits.append(float(x[0, 0] < 0.25))
        ag.update(x, np.array([hits[-1]]))
        if not ag.active_cells(3).all():
            evicted_at = t
            break
    assert evicted_at is not None
    assert evicted_at == _first_crossing(hits, T, c0, grid, lag=int(compat), log_term=log_term)
    # the three worse cells go together; the better one stays, and B_MASTER follows
    assert ag.active_cells(3).tolist() == [True, False, False, False]
    assert ag.master_cells().tolist() == [True, False, False, False]
    assert np.allclose(ag.probabilities(3), [1, 0, 0, 0])


def test_no_test_while_window_too_short():
    """With a negligible c0 the threshold is ~ n/2, crossed by a single hit (4 > 1); still nothing
    is evicted while t - s_start <= 2, i.e. before round 4."""
    ag = BatchedMDBE(problem(512), seeds=[0], c0=1e-9, start_grid="all")
    hits = []
    for t in range(1, 5):
        x = ag.act()
        hits.append(float(x[0, 0] < 0.25))
        ag.update(x, np.array([hits[-1]]))
        if t <= 3:
            assert ag.active_cells(3).all(), t
    assert sum(hits[:3]) >= 1  # this seed would have evicted earlier without the rule
    assert _first_crossing(hits, 512, 1e-9, "all") == 4
    assert ag.active_cells(3).sum() == 1


def test_evict_subtree_d1_and_morton_containment_d2():
    ag = BatchedMDBE(problem(5000), seeds=[0])  # d = 1, depths up to 5
    cfg = ag._cfg
    act = np.ones(ag._state.active.shape[1], dtype=np.int8)
    M._evict_subtree(cfg, act, 2, 1, 4)  # cell [1/2, 1] of depth 2, cascade down to depth 4 (G = 2)
    cells = lambda j: act[cfg.cell_offset[j] : cfg.cell_offset[j] + cfg.n_cells[j]].tolist()
    assert cells(2) == [1, 0]
    assert cells(3) == [1, 1, 0, 0]
    assert cells(4) == [1] * 4 + [0] * 4
    assert cells(5) == [1] * 16  # beyond the block depth m = 4: untouched
    # d = 2: the descendants of a cell (contiguous Morton range) are the cells inside it
    d = 2
    c, c2 = np.zeros(d, np.int64), np.zeros(d, np.int64)
    for j in (2, 3):
        for a in range(4 ** (j - 1)):
            M._coords(a, j, d, c)
            assert M._encode(c, j, d) == a
            for b in range(a * 16, (a + 1) * 16):  # two levels finer
                M._coords(b, j + 2, d, c2)
                assert (c2 >> 2).tolist() == c.tolist()


# --------------------------------------------------------------------------- steps 8-9: restart
def test_restart_when_master_empties_and_block_counter_resets():
    """Seed 0, T = 2048. Rewards 1{x < 1/2} until round 1024: block 4 (from 513) evicts depth-4
    cells 4..7. From 1025, rewards 1{x >= 1/2}: the depth-3 replay started at 1025 evicts depth-3
    cells 0, 1, whose depth-4 descendants are the whole of B_MASTER -> shift, back to a depth-3 block."""
    T = 2048
    ag = BatchedMDBE(problem(T), seeds=[0], c0=0.4, replay_schedule="block-offset")
    reward = lambda x, t: (x[:, 0] < 0.5 if t <= 1024 else x[:, 0] >= 0.5).astype(float)
    play(ag, T, reward, until=1024)
    assert ag.block_depth[0] == 4 and ag.block_start() == 513
    assert (512, 3) in ag.schedule()
    assert ag.active_cells(4).tolist() == [True] * 4 + [False] * 4
    assert ag.master_cells().tolist() == [True] * 4 + [False] * 4
    before = None
    for t in range(1025, T + 1):
        if t == 1025:
            x = ag.act()
            assert 3 in ag.active_depths() and ag.window_start(3) == 1025
            assert ag.active_cells(3).all()  # the replay reactivates the evicted region too
        x = ag.act()
        before = (ag.active_cells(3), ag.master_cells())
        ag.update(x, reward(x, t))
        if ag.diagnostics()["restarts"][0]:
            break
    diag = ag.diagnostics()
    assert diag["restarts"] == [1] and diag["restart_times"] == [[t]]
    assert 1025 + 3 <= t < 1025 + 512
    # the detection came from the depth-3 replay: cells 0 and 1 were active, B_MASTER = cells 0..3
    assert before[0].tolist() == [True] * 4 and before[1].tolist() == [True] * 4 + [False] * 4
    assert ag.block_depth[0] == 3 and ag.block_start() == t + 1 and ag.round == t + 1
    assert ag.active_depths() == [3] and ag.active_cells(3).all() and ag.master_cells().all()


# --------------------------------------------------------------------------- step 5: P_t and sampling
def _leaves_prob(ag):
    """Sum of P_t over the cells where the descent stops."""
    depths = ag.active_depths()
    total = 0.0
    for k, j in enumerate(depths):
        p, a = ag.probabilities(j), ag.active_cells(j)
        for b in np.flatnonzero(a & (p > 0)):
            if k + 1 == len(depths):
                total += p[b]
            else:
                j2 = depths[k + 1]
                r = 2 ** (j2 - j)
                if not ag.active_cells(j2)[b * r : (b + 1) * r].any():
                    total += p[b]
    return total


def test_probabilities_sum_to_one_and_sampling_matches():
    T = 2048
    ag = BatchedMDBE(problem(T), seeds=[0], c0=0.4, replay_schedule="block-offset")
    reward = lambda x, t: (x[:, 0] < 0.5 if t <= 1024 else x[:, 0] >= 0.5).astype(float)
    sums = []
    play(ag, T, reward, until=1040, hook=lambda t, x: sums.append(_leaves_prob(ag)))
    assert np.allclose(sums, 1.0)
    # state of round 1041: replay at depth 3 over a block whose depth-4 cells 4..7 are evicted
    depths = ag.active_depths()
    assert 3 in depths and 4 in depths and not ag.active_cells(4)[4:].any()
    # run 0's state with its own generator, counters and action (what _sample writes)
    row = M.State(*(a[0] for a in ag._state))._replace(
        rng=M._rng_state(123), counters=ag._state.counters[0].copy(), x=ag._state.x[0].copy()
    )
    n = 20000
    fin, xs = {}, np.empty(n)
    for i in range(n):
        M._sample(ag._cfg, row)
        key = (int(row.counters[M._I_FINJ]), int(row.counters[M._I_FINA]))
        fin[key] = fin.get(key, 0) + 1
        xs[i] = row.x[0]
    for (j, a), c in fin.items():
        p = ag.probabilities(j)[a]
        assert abs(c / n - p) < 5 * math.sqrt(p * (1 - p) / n) + 1e-9, (j, a, c / n, p)
    # importance weights are unbiased: P(X in B) = P_t(B) for every active cell of every active depth
    for j in depths:
        p, a = ag.probabilities(j), ag.active_cells(j)
        freq = np.bincount(np.minimum((xs * 2 ** (j - 1)).astype(int), 2 ** (j - 1) - 1), minlength=2 ** (j - 1)) / n
        for b in np.flatnonzero(a):
            assert abs(freq[b] - p[b]) < 5 * math.sqrt(p[b] * (1 - p[b]) / n) + 1e-9, (j, b)


def test_d2_actions_in_cube_and_probabilities():
    T = 5000  # d = 2: blocks of 16^m rounds, 4^(j-1) cells at depth j
    ag = BatchedMDBE(problem(T, d=2), seeds=[0, 1])
    sums = []

    def hook(t, x):
        assert x.shape == (2, 2) and np.all((x >= 0) & (x <= 1))
        if t % 97 == 0:
            sums.append(_leaves_prob_d(ag, 2))

    play(ag, T, lambda x, t: (np.max(np.abs(x - 0.2), axis=1) < 0.3).astype(float), hook=hook)
    assert np.allclose(sums, 1.0)
    assert ag.block_depth.tolist() == [4, 4]


def _leaves_prob_d(ag, d):
    depths = ag.active_depths()
    total = 0.0
    for k, j in enumerate(depths):
        p, a = ag.probabilities(j), ag.active_cells(j)
        for b in np.flatnonzero(a & (p > 0)):
            if k + 1 == len(depths):
                total += p[b]
            else:
                r = 2 ** (d * (depths[k + 1] - j))
                if not ag.active_cells(depths[k + 1])[b * r : (b + 1) * r].any():
                    total += p[b]
    return total


# --------------------------------------------------------------------------- behaviour
def _bernoulli_runs(T, seeds, mu, **hp):
    ag = BatchedMDBE(problem(T), seeds=seeds, **hp)
    rng = np.random.default_rng(7)
    play(ag, T, lambda x, t: (rng.random(len(seeds)) < mu(x[:, 0], t)).astype(float))
    return ag.diagnostics()


def test_conservative_threshold_no_restarts_when_stationary_and_big_change_detected():
    """With c0 = 0.4 (a conservative constant of the code's history) MDBE never restarts on a stationary
    instance and detects a big change; the authors' final c0 = 0.12 does raise false alarms on the same
    stationary instance (the module docstring reports it)."""
    T, seeds = 2**14, list(range(8))
    stat = _bernoulli_runs(T, seeds, lambda x, t: 1 - np.abs(x - 0.3), c0=0.4)
    assert sum(stat["restarts"]) == 0
    authors = _bernoulli_runs(T, seeds, lambda x, t: 1 - np.abs(x - 0.3))
    assert sum(authors["restarts"]) > 0
    big = _bernoulli_runs(T, seeds, lambda x, t: 1 - np.abs(x - (0.05 if t <= T // 2 else 0.95)), c0=0.4)
    times = [r for rt in big["restart_times"] for r in rt]
    assert len(times) >= 3 and all(T // 2 < r for r in times)


# --------------------------------------------------------------------------- batching, seeds, API
def test_batched_equals_per_run_and_independent_of_batch_mates():
    T = 1500
    rng = np.random.default_rng(11)
    U = rng.random((T, 3))
    mu = lambda x, t: 1 - np.abs(x - (0.2 if t < 700 else 0.8))
    seeds = [5, 6, 7]
    ag = BatchedMDBE(problem(T), seeds=seeds, c0=0.2)
    other = BatchedMDBE(problem(T), seeds=[99, 6], c0=0.2)  # run 6 with another batch mate
    singles = [MDBE(problem(T), seed=s, c0=0.2) for s in seeds]
    for t in range(1, T + 1):
        x = ag.act(None)
        xo = other.act(None)
        xs = [s.act(np.zeros(1)) for s in singles]
        assert np.array_equal(x, np.stack(xs)) and np.array_equal(xo[1], x[1])
        y = (U[t - 1] < mu(x[:, 0], t)).astype(float)
        ag.update(x, y, None)
        other.update(xo, np.array([0.0, y[1]]), None)
        for i, s in enumerate(singles):
            s.update(xs[i], y[i], np.array([y[i]]))
    d = ag.diagnostics()
    assert [s.diagnostics()["restarts"] for s in singles] == d["restarts"]
    assert [s.diagnostics()["restart_times"] for s in singles] == d["restart_times"]
    assert sum(d["restarts"]) >= 1  # the comparison covered a restart


def test_deterministic_under_seed():
    def trace(seed):
        ag = MDBE(problem(800), seed=seed)
        out = []
        for _t in range(800):
            x = ag.act(None)
            out.append(x[0])
            ag.update(x, float(x[0] < 0.4), None)
        return np.array(out)

    a, b, c = trace(np.random.SeedSequence(3)), trace(np.random.SeedSequence(3)), trace(np.random.SeedSequence(4))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.all((a >= 0) & (a <= 1))


def test_bad_input_errors():
    p = problem(100)
    for kw, field in [
        (dict(c0=-1.0), "c0"),
        (dict(log_term="x"), "log_term"),
        (dict(start_grid="fine"), "start_grid"),
        (dict(min_depth=0), "min_depth"),
        (dict(growth=1), "growth"),
        (dict(code_compat="yes"), "code_compat"),
    ]:
        with pytest.raises(ValueError, match=field):
            BatchedMDBE(p, seeds=[0], **kw)
    ag = BatchedMDBE(p, seeds=[0, 1])
    x = ag.act()
    with pytest.raises(ValueError, match="act"):
        ag.update(x + 1e-3, np.ones(2))
    with pytest.raises(ValueError, match="finite"):
        ag.update(x, np.array([1.0, np.nan]))
    for _ in range(100):
        x = ag.act()
        ag.update(x, np.ones(2))
    with pytest.raises(RuntimeError, match="horizon"):
        ag.update(x, np.ones(2))
    # a tree that cannot be allocated is refused up front, naming d and the horizon
    with pytest.raises(ValueError, match="too large for d=20, horizon=300"):
        BatchedMDBE(make_problem(20, 300, "bernoulli", 0.1), seeds=[0])


def test_registered_and_runs_on_env():
    import gymnasium as gym

    from papergym.agents.base import get_agent_info, make_agent, make_batched_agent
    from papergym.envs.spec import agent_seed

    info = get_agent_info("mdbe", "NonStatLipschitz-v0")
    assert info.role == "paper" and info.batched_factory is BatchedMDBE and info.defaults["c0"] == 0.12
    assert info.defaults["replay_schedule"] == "absolute-round"
    T = 600
    env = gym.make("NonStatLipschitz-v0", instance="two-peak-cyclic", horizon=T)
    obs, _ = env.reset(seed=0)
    ag = make_agent("mdbe", env.unwrapped.problem, seed=agent_seed(0))
    venv = gym.make_vec(
        "NonStatLipschitz-v0",
        num_envs=2,
        vectorization_mode="vector_entry_point",
        instance="two-peak-cyclic",
        horizon=T,
    )
    vobs, _ = venv.reset(seed=[0, 1])
    bag = make_batched_agent("mdbe", venv.unwrapped.problem, seeds=[agent_seed(0), agent_seed(1)])
    for _ in range(T):
        a, va = ag.act(obs), bag.act(vobs)
        assert np.array_equal(a, va[0])
        obs, r, _, trunc, _ = env.step(a)
        ag.update(a, r, obs)
        vobs, vr, *_ = venv.step(va)
        bag.update(va, vr, vobs)
    assert trunc and ag.diagnostics()["restarts"] == bag.diagnostics()["restarts"][0]


@pytest.mark.slow
def test_defaults_restart_on_two_peak_cyclic(tmp_path):
    """The authors' final settings (c0 = 0.12, absolute-round schedule) restart on the paper's experiment
    (two-peak-cyclic, T = 10^5), on seeds no other test uses."""
    from papergym.leaderboard import compare

    res = compare(
        "NonStatLipschitz-v0",
        ["mdbe"],
        [1001, 1002, 1003, 1004],
        horizon=100_000,
        env_kwargs={"instance": "two-peak-cyclic"},
        backend="serial",
        out=tmp_path,
        progress=False,
    )
    assert (res.runs["restarts"] >= 1).all(), res.runs[["seed", "restarts"]]
