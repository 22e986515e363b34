"""Tests of ftpl-frechet (agents/bandits/ftpl_frechet.py; docs/papers/mset-semibandit.md): the Fréchet
sampler against its CDF, the tie rule, geometric resampling against a direct Monte-Carlo of the
selection probabilities, an independent step-by-step reference on the same random stream, special
cases m = 1 and m = d, batching, the cap, errors, and regret on a stochastic instance."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from papergym.agents.bandits import ftpl_frechet as F
from papergym.agents.bandits.ftpl_frechet import (
    BatchedFTPLFrechet,
    FTPLFrechet,
    frechet_perturbations,
    geometric_resampling,
    select_m_smallest,
)
from papergym.agents.base import get_agent_info, make_agent, make_batched_agent
from papergym.agents.rng import rand_uniform, rng_state
from papergym.envs.bandits import semibandit as SB
from papergym.envs.bandits.semibandit import ENV_ID, make_problem
from papergym.envs.spec import agent_seed


def stochastic_means(d, m, gap):
    """``stochastic`` family with the optimal set first: 0.5(1 - g) for arms < m, 0.5(1 + g) otherwise."""
    return np.where(np.arange(d) < m, 0.5 * (1 - gap), 0.5 * (1 + gap))


def simulate(agent, mu, T, noise_seed=123, record=False):
    """Batched play on Bernoulli losses ``1{U < mu}`` (U drawn per run, round and arm before the action).
    Returns the cumulative pseudo-regret ``(T, n)`` (and the actions if ``record``)."""
    n, d, m = agent.n_envs, mu.shape[0], agent.m
    best = np.sort(mu)[:m].sum()
    rng = np.random.default_rng(noise_seed)
    cum = np.empty((T, n))
    total = np.zeros(n)
    acts = []
    obs = {"losses": np.zeros((n, d)), "observed": np.zeros((n, d), dtype=np.int8)}
    for t in range(T):
        u = rng.random((n, d))
        a = agent.act(obs)
        total += a @ mu - best
        cum[t] = total
        losses = ((u < mu) * a).astype(float)
        obs = {"losses": losses, "observed": a.copy()}
        agent.update(a, -losses.sum(axis=1), obs)
        if record:
            acts.append(a.copy())
    return (cum, np.array(acts)) if record else cum


def frechet_cdf(alpha):
    return lambda x: np.exp(-np.power(np.maximum(x, 1e-300), -alpha))


def numpy_frechet(rng, alpha, size):
    return (-np.log1p(-rng.random(size))) ** (-1.0 / alpha)


# ------------------------------------------------------------------------------ step 3: Fréchet sampler
@pytest.mark.parametrize("alpha", [2.0, 1.5, 3.0])
def test_frechet_sampler_matches_cdf(alpha):
    x = frechet_perturbations(11, alpha, 20000)
    assert np.all(x > 0)
    assert stats.kstest(x, frechet_cdf(alpha)).pvalue > 1e-3
    # the test has power: another shape is rejected
    assert stats.kstest(x, frechet_cdf(alpha * 1.3)).pvalue < 1e-6


def test_frechet_extreme_uniform():
    """u = 0 (U = 1 - u = 1) gives E = 0 and r = +inf; never NaN."""
    assert F._frechet(0.0, 2.0) == math.inf and F._frechet(0.0, 1.7) == math.inf
    assert F._frechet(1 - 2.0**-53, 2.0) == pytest.approx(1 / math.sqrt(53 * math.log(2)))


# ------------------------------------------------------------------------------ step 4: tie rule
def test_select_tie_rule_hand_made():
    assert select_m_smallest([1, 0, 0, 0, 2], 2).tolist() == [1, 2]
    assert select_m_smallest([3, 3, 3, 1], 2).tolist() == [0, 3]
    assert select_m_smallest([5, 5, 5, 5], 3).tolist() == [0, 1, 2]
    assert select_m_smallest([0, -np.inf, 2, -np.inf], 1).tolist() == [1]
    assert select_m_smallest([2, 1], 2).tolist() == [0, 1]


def test_select_matches_stable_argsort_with_ties():
    rng = np.random.default_rng(0)
    for _ in range(3000):
        d = int(rng.integers(1, 25))
        m = int(rng.integers(1, d + 1))
        z = rng.integers(0, 4, size=d).astype(float)  # many ties
        if rng.random() < 0.2:
            z[rng.integers(0, d)] = -np.inf
        ref = np.sort(np.argsort(z, kind="stable")[:m])
        assert select_m_smallest(z, m).tolist() == ref.tolist(), (z, m)


def test_kth_smallest_matches_sort():
    rng = np.random.default_rng(1)
    for _ in range(2000):
        d = int(rng.integers(1, 40))
        z = rng.integers(0, 5, size=d).astype(float) if rng.random() < 0.5 else rng.normal(size=d)
        k = int(rng.integers(0, d))
        assert F._kth_smallest(z.copy(), k) == np.sort(z)[k]


def test_gr_membership_uses_the_tie_rule():
    """With eta = 1e300 the perturbations vanish in floating point (z = L_hat exactly): ties in L_hat go to the lowest
    index, so among arms tied at the m-th place only the lowest-index ones have K = 1."""
    L = np.array([0.0, 1.0, 1.0, 1.0, 2.0])
    K, nd = geometric_resampling(L, 1e300, 2.0, 2, [0, 1], seed=3)
    assert K.tolist() == [1, 1] and nd == 1
    K, nd = geometric_resampling(L, 1e300, 2.0, 2, [2], seed=3, cap=50)
    assert K.tolist() == [50]  # arm 2 loses the tie to arm 1 in every vector: truncated at the cap


# ------------------------------------------------------------------------------ step 5: GR is unbiased for 1/w
def mc_selection_probabilities(L, eta, alpha, m, n, seed):
    """Direct Monte-Carlo of w_i = P(i in A): fresh Fréchet vectors, top-m by stable argsort (m = 1: the
    K-armed FTPL's argmin)."""
    rng = np.random.default_rng(seed)
    z = L - numpy_frechet(rng, alpha, (n, L.shape[0])) / eta
    if m == 1:
        sel = np.zeros_like(z, dtype=bool)
        sel[np.arange(n), np.argmin(z, axis=1)] = True
    else:
        sel = np.zeros_like(z, dtype=bool)
        np.put_along_axis(sel, np.argsort(z, axis=1, kind="stable")[:, :m], True, axis=1)
    return sel.mean(axis=0), n


@pytest.mark.parametrize("m,alpha", [(1, 2.0), (2, 2.0), (3, 1.5)])
def test_gr_counts_unbiased_for_inverse_selection_probability(m, alpha):
    L = np.array([0.0, 0.4, 1.0, 1.5, 2.5, 3.0])
    eta = 1.0
    d = L.shape[0]
    w, n_mc = mc_selection_probabilities(L, eta, alpha, m, 400_000, seed=5)
    assert w.sum() == pytest.approx(m)
    assert w.min() < 0.15 and w.max() > 0.4  # a spread of probabilities is tested
    rs = rng_state(9)
    N = 6000
    Ks = np.empty((N, d))
    for r in range(N):
        Ks[r], _ = geometric_resampling(L, eta, alpha, m, range(d), rs)
    mean_k = Ks.mean(axis=0)
    # standard error of mean K (Var K = (1 - w)/w^2) and of 1/w_hat (delta method)
    se = np.sqrt((1 - w) / w**2 / N + w * (1 - w) / n_mc / w**4)
    assert np.all(np.abs(mean_k - 1 / w) < 4 * se), (mean_k, 1 / w, se)
    # K is geometric: P(K = 1) = w
    p1 = (Ks == 1).mean(axis=0)
    assert np.all(np.abs(p1 - w) < 4 * np.sqrt(w * (1 - w) / N) + 0.003), (p1, w)


# ------------------------------------------------------------------------------ the whole loop vs a reference
def reference_ftpl(d, m, seed, U, mu, T, c=1.0, alpha=2.0, eta_scale=1.0, cap=1_000_000, only_on_loss=True):
    """The algorithm's steps (module docstring) in plain Python on the agent's documented stream: act draws d uniforms
    in arm order; GR draws one vector per step, its entries on first use (arm i's own entry first, then
    j = 0, 1, ... while fewer than m arms beat it), pending arms in index order."""
    rs = rng_state(seed)

    def r_draw():
        e = -math.log(1.0 - rand_uniform(rs))
        if e == 0.0:
            return math.inf
        return 1.0 / math.sqrt(e) if alpha == 2.0 else e ** (-1.0 / alpha)

    L = np.zeros(d)
    actions, Ls = [], []
    for t in range(1, T + 1):
        eta = eta_scale * c / math.sqrt(t)  # step 2
        z = np.array([L[i] - r_draw() / eta for i in range(d)])  # step 3
        A = sorted(np.argsort(z, kind="stable")[:m].tolist())  # step 4
        loss = np.zeros(d)
        for i in A:
            loss[i] = float(U[t - 1, i] < mu[i])
        pending = [i for i in A if (not only_on_loss) or loss[i] != 0]
        K, draws = {}, 0
        while pending and draws < cap:  # step 5
            draws += 1
            vec = {}

            def zz(j, vec=vec, eta=eta):
                if j not in vec:
                    vec[j] = L[j] - r_draw() / eta
                return vec[j]

            still = []
            for i in pending:
                zi = zz(i)
                beaten = 0
                for j in range(d):
                    if j != i and (zz(j) < zi or (zz(j) == zi and j < i)):
                        beaten += 1
                        if beaten >= m:
                            break
                if beaten < m:
                    K[i] = draws
                else:
                    still.append(i)
            pending = still
        for i in pending:  # step 7
            K[i] = cap
        for i, k in K.items():  # step 6
            L[i] += loss[i] * k
        act = np.zeros(d, dtype=np.int8)
        act[A] = 1
        actions.append(act)
        Ls.append(L.copy())
    return np.array(actions), np.array(Ls)


@pytest.mark.parametrize("hp", [{}, {"gr_only_on_loss": False}, {"alpha": 1.5, "c": 0.5, "eta_scale": 2.0}, {"cap": 3}])
def test_matches_step_by_step_reference(hp):
    d, m, T = 6, 2, 250
    mu = np.array([0.3, 0.5, 0.7, 0.4, 0.6, 0.5])
    seeds = [agent_seed(4), agent_seed(5)]
    U = np.random.default_rng(2).random((len(seeds), T, d))
    ag = BatchedFTPLFrechet(make_problem(d, m, T), seeds=seeds, **hp)
    acts, Ls = [], []
    for t in range(T):
        a = ag.act(None)
        losses = ((U[:, t] < mu) * a).astype(float)
        ag.update(a, -losses.sum(1), {"losses": losses, "observed": a})
        acts.append(a)
        Ls.append(ag.L_hat)
    acts, Ls = np.array(acts), np.array(Ls)
    kw = {
        "only_on_loss": hp.get("gr_only_on_loss", True),
        **{k: v for k, v in hp.items() if k in ("alpha", "c", "eta_scale", "cap")},
    }
    for r, s in enumerate(seeds):
        ref_a, ref_L = reference_ftpl(d, m, s, U[r], mu, T, **kw)
        np.testing.assert_array_equal(acts[:, r], ref_a)
        np.testing.assert_array_equal(Ls[:, r], ref_L)
    if hp.get("cap") == 3:
        assert max(ag.diagnostics()["cap_hits"]) > 0


# ------------------------------------------------------------------------------ special cases
def test_m_equal_1_is_k_armed_ftpl():
    """m = 1: the action is the argmin of L_hat - r/eta (one-hot) and l_hat = l K with K the number of
    vectors until that arm is the argmin (the K-armed definition, checked against the reference)."""
    d, T = 5, 300
    mu = np.array([0.2, 0.5, 0.6, 0.7, 0.8])
    U = np.random.default_rng(8).random((1, T, d))
    ag = FTPLFrechet(make_problem(d, 1, T), seed=17)
    acts = []
    for t in range(T):
        a = ag.act({"losses": np.zeros(d), "observed": np.zeros(d, np.int8)})
        assert a.sum() == 1
        loss = ((U[0, t] < mu) * a).astype(float)
        ag.update(a, -loss.sum(), {"losses": loss, "observed": a})
        acts.append(a)
    ref_a, ref_L = reference_ftpl(d, 1, 17, U[0], mu, T)
    np.testing.assert_array_equal(np.array(acts), ref_a)
    np.testing.assert_array_equal(ag._batched.L_hat[0], ref_L[-1])
    assert np.bincount(np.argmax(ref_a, axis=1), minlength=d).argmax() == 0  # the best arm dominates


def test_m_equal_d_picks_all_and_draws_one_vector():
    d, T = 4, 200
    ag = BatchedFTPLFrechet(make_problem(d, d, T), seeds=[1, 2], gr_only_on_loss=False)
    rng = np.random.default_rng(0)
    total = np.zeros((2, d))
    for _t in range(T):
        a = ag.act(None)
        assert (a == 1).all()
        losses = (rng.random((2, d)) < 0.5).astype(float)
        total += losses
        ag.update(a, -losses.sum(1), {"losses": losses, "observed": a})
    diag = ag.diagnostics()
    assert diag["gr_draws_per_round"] == [1.0, 1.0] and diag["mean_K"] == [1.0, 1.0]
    assert diag["cap_hits"] == [0, 0]
    np.testing.assert_array_equal(ag.L_hat, total)  # K = 1: L_hat is the cumulative loss


# ------------------------------------------------------------------------------ determinism, batching, legality
def test_deterministic_under_seed_and_seed_dependent():
    mu = stochastic_means(8, 3, 0.2)
    runs = [
        simulate(BatchedFTPLFrechet(make_problem(8, 3, 300), seeds=[s]), mu, 300, record=True)[1]
        for s in (agent_seed(3), agent_seed(3), agent_seed(4))
    ]
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


@pytest.mark.parametrize("d,m", [(7, 3), (12, 1), (5, 5)])
def test_batched_equals_per_run_bit_for_bit(d, m):
    T, seeds = 200, [agent_seed(s) for s in (0, 1, 7, 12)]
    n = len(seeds)
    U = np.random.default_rng(5).random((T, n, d))
    mu = np.linspace(0.2, 0.8, d)
    problem = make_problem(d, m, T)
    batched = make_batched_agent("ftpl-frechet", problem, seeds=seeds)
    singles = [make_agent("ftpl-frechet", problem, seed=s) for s in seeds]
    zero = {"losses": np.zeros(d), "observed": np.zeros(d, np.int8)}
    obs1 = [zero] * n
    for t in range(T):
        A = batched.act(None)
        assert A.dtype == np.int8 and A.shape == (n, d)
        losses = ((U[t] < mu) * A).astype(float)
        batched.update(A, -losses.sum(1), {"losses": losses, "observed": A})
        for r, ag in enumerate(singles):
            a = ag.act(obs1[r])
            np.testing.assert_array_equal(a, A[r])
            assert problem.action_space.contains(a)
            ag.update(a, -losses[r].sum(), {"losses": losses[r], "observed": a})
            obs1[r] = {"losses": losses[r], "observed": a}
    bd = batched.diagnostics()
    for r, ag in enumerate(singles):
        np.testing.assert_array_equal(ag._batched.L_hat[0], batched.L_hat[r])
        sd = ag.diagnostics()
        assert sd.keys() == bd.keys()
        for k, v in bd.items():
            assert sd[k] == v[r] or (np.isnan(sd[k]) and np.isnan(v[r])), k


def test_registration():
    info = get_agent_info("ftpl-frechet", ENV_ID)
    assert info.role == "paper" and info.batched_factory is BatchedFTPLFrechet and info.factory is FTPLFrechet
    assert info.defaults == {
        "c": 1.0,
        "alpha": 2.0,
        "eta_scale": 1.0,
        "cap": 1_000_000,
        "gr": "standard",
        "gr_only_on_loss": True,
    }


# ------------------------------------------------------------------------------ cap
def test_cap_counts_truncations():
    # a hopeless arm (L_hat 1e6 above the rest, eta 1): K is truncated at the cap, one hit
    L = np.array([0.0, 0.0, 1e6])
    K, nd = geometric_resampling(L, 1.0, 2.0, 1, [2], seed=1, cap=7)
    assert K.tolist() == [7] and nd == 7
    # in play: with cap = 1 every K is 1 and every arm not selected by the first vector is a hit
    mu = stochastic_means(10, 3, 0.2)
    ag = BatchedFTPLFrechet(make_problem(10, 3, 500), seeds=[0, 1], cap=1)
    before = ag.L_hat
    simulate(ag, mu, 500)
    diag = ag.diagnostics()
    assert all(h > 0 for h in diag["cap_hits"])
    assert diag["gr_draws_per_round"][0] <= 1.0 and diag["mean_K"] == [1.0, 1.0]
    assert (ag.L_hat - before).max() <= 500  # l_hat <= 1 per round


# ------------------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "kw,field",
    [
        ({"c": 0.0}, "c"),
        ({"c": -1}, "c"),
        ({"c": float("nan")}, "c"),
        ({"c": "1"}, "c"),
        ({"alpha": 0}, "alpha"),
        ({"alpha": float("inf")}, "alpha"),
        ({"eta_scale": -2.0}, "eta_scale"),
        ({"cap": 0}, "cap"),
        ({"cap": 2.5}, "cap"),
        ({"cap": True}, "cap"),
        ({"gr": "fancy"}, "gr"),
        ({"gr_only_on_loss": "yes"}, "gr_only_on_loss"),
        ({"seeds": []}, "seeds"),
    ],
)
def test_bad_hyperparameters_name_the_field(kw, field):
    kwargs = {"seeds": [0], **kw}
    with pytest.raises(ValueError, match=rf"^{field} "):
        BatchedFTPLFrechet(make_problem(5, 2, 10), **kwargs)


def test_conditional_gr_is_refused_with_reason():
    with pytest.raises(ValueError, match="conditional geometric resampling.*not implemented"):
        BatchedFTPLFrechet(make_problem(5, 2, 10), seeds=[0], gr="conditional")


def test_update_checks():
    ag = BatchedFTPLFrechet(make_problem(5, 2, 10), seeds=[0])
    obs = {"losses": np.zeros((1, 5)), "observed": np.zeros((1, 5), np.int8)}
    with pytest.raises(ValueError, match="before act"):
        ag.update(np.zeros((1, 5)), np.zeros(1), obs)
    a = ag.act(None)
    other = np.roll(a, 1, axis=1)  # another 2-subset of 5 arms
    with pytest.raises(ValueError, match="actions"):
        ag.update(other, np.zeros(1), obs)
    with pytest.raises(ValueError, match="losses"):
        ag.update(a, np.zeros(1), {"losses": np.zeros((1, 4))})
    with pytest.raises(ValueError, match="observations"):
        ag.update(a, np.zeros(1), np.zeros((1, 5)))
    ag.update(a, np.zeros(1), obs)  # the state is unchanged by the refused calls
    assert ag.t == 1 and np.array_equal(ag.L_hat, np.zeros((1, 5)))


# ------------------------------------------------------------------------------ regret
def test_regret_sublinear_on_stochastic_instance():
    d, m, g, T = 10, 3, 0.2, 4000
    mu = stochastic_means(d, m, g)
    ag = BatchedFTPLFrechet(make_problem(d, m, T), seeds=[agent_seed(s) for s in range(5)])
    cum = simulate(ag, mu, T, noise_seed=7)
    uniform = T * m * (d - m) / d * g  # expected regret of a uniform m-subset: 1680
    R_half, R_n = cum[T // 2 - 1].mean(), cum[-1].mean()
    assert R_n < 0.3 * uniform
    assert R_n - R_half < 0.5 * R_half  # the second half adds far less than the first (linear: equal)
    assert (np.diff(cum, axis=0) >= -1e-12).all()  # pseudo-regret increments are >= 0


# ------------------------------------------------------------------------------ through the env
def test_env_integration_single_and_vector():
    import gymnasium as gym

    import papergym.envs  # noqa: F401  (registers the ids)
    from papergym.envs.wrappers import RegretRecorder

    T, seeds = 300, [0, 1, 2]
    kw = {"instance": "stochastic", "horizon": T, "d": 8, "m": 3, "gap": 0.2}
    curves = []
    for s in seeds:
        env = RegretRecorder(gym.make(ENV_ID, **kw))
        obs, _ = env.reset(seed=s)
        ag = make_agent("ftpl-frechet", env.unwrapped.problem, seed=agent_seed(s))
        for _ in range(T):
            a = ag.act(obs)
            obs, r, term, trunc, _ = env.step(a)
            ag.update(a, r, obs)
        assert trunc and not term
        curves.append(env.regret_curve)
        assert (np.asarray(env.regrets) >= 0).all()
    venv = SB.MSetSemiBanditVectorEnv(num_envs=len(seeds), **kw)
    obs, _ = venv.reset(seed=seeds)
    bag = make_batched_agent("ftpl-frechet", venv.problem, seeds=[agent_seed(s) for s in seeds])
    total = np.zeros(len(seeds))
    for t in range(1, T + 1):
        A = bag.act(obs)
        total += venv.oracle.regret(A, t)
        obs, rew, *_ = venv.step(A)
        bag.update(A, rew, obs)
    np.testing.assert_allclose(total, [c[-1] for c in curves], rtol=0, atol=1e-9)
    uniform = T * 3 * 5 / 8 * 0.2
    assert total.mean() < 0.8 * uniform
