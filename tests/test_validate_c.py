"""papergym.validate in the environments and the leaderboard: ``positive_int``'s ``maximum`` and
``integral_float`` options, and the constructors / helpers whose own validators it replaced (same values
accepted and returned, bad values refused with a message naming the argument)."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.validate import positive_int


def _msg(fn, *a, **kw):
    with pytest.raises(ValueError) as exc:
        fn(*a, **kw)
    return str(exc.value)


# ------------------------------------------------------------------------------- validate.py additions
def test_positive_int_maximum():
    assert positive_int(8, "d", 1, maximum=8) == 8 and positive_int(np.int32(1), "d", maximum=8) == 1
    assert _msg(positive_int, 9, "d", 1, maximum=8) == "d must be an integer in [1, 8], got 9"
    assert _msg(positive_int, 0, "d", 1, maximum=8) == "d must be an integer >= 1, got 0"
    assert positive_int(10**9, "d") == 10**9  # no maximum by default


def test_positive_int_integral_float():
    for v in (3.0, np.float64(3.0), np.float32(3.0), 3, np.int64(3)):
        out = positive_int(v, "n", integral_float=True)
        assert out == 3 and type(out) is int
    for bad in (2.5, float("nan"), float("inf"), True, np.bool_(True), "3", None):
        assert _msg(positive_int, bad, "n", integral_float=True) == f"n must be an integer >= 1, got {bad!r}"
    assert _msg(positive_int, 0.0, "n", integral_float=True) == "n must be an integer >= 1, got 0"
    assert _msg(positive_int, 3.0, "n") == "n must be an integer >= 1, got 3.0"  # off by default


# ------------------------------------------------------------------------------------------ envs
def test_check_seed_one_rule_for_runs_and_ode_instances():
    from papergym.envs.spec import check_seed
    from papergym.envs.tasks.ode import task as ode

    assert check_seed(np.int64(7)) == 7 and type(check_seed(np.int64(7))) is int and check_seed(0) == 0
    for bad in (-1, 1.0, True, "1"):
        assert _msg(check_seed, bad) == f"seed must be an integer >= 0, got {bad!r}"
    assert _msg(check_seed, -2, "ref.seed") == "ref.seed must be an integer >= 0, got -2"
    assert ode.problem_params("L1", np.int64(0)) == ode.problem_params("L1", 0)
    assert _msg(ode.problem_params, "L1", -1) == "seed must be an integer >= 0, got -1"


def test_task_check_ints_and_floats():
    from papergym.envs.tasks.base import Budget, check_floats, check_ints

    assert check_ints([3, np.int64(3), 4], "n", 2) == (3, 4) and check_ints(5, "n", 1) == (5,)
    assert all(type(x) is int for x in check_ints([np.int64(3)], "n", 2))
    assert _msg(check_ints, [3, 1], "n", 2) == "n must be an integer >= 2, got 1"
    assert _msg(check_ints, [], "n", 2) == "n must not be empty"
    assert check_floats([0.5, np.float32(0.25)], "a", above=0.0, below=1.0) == (0.5, 0.25)
    assert check_floats(0.0, "a", at_least=0.0) == (0.0,) and check_floats(-3, "a") == (-3.0,)
    assert _msg(check_floats, 0.0, "a", above=0.0) == "a must be a number in (0.0, inf), got 0.0"
    assert _msg(check_floats, 1.0, "a", at_least=0.0, below=1.0) == "a must be a number in [0.0, 1.0), got 1.0"
    assert _msg(check_floats, float("nan"), "a") == "a must be a finite number, got nan"
    assert _msg(check_floats, [True], "a", below=2.0) == "a must be a number in (-inf, 2.0), got True"
    with pytest.raises(ValueError, match="at most one of"):
        check_floats(1.0, "a", above=0.0, at_least=0.0)
    assert Budget(max_seconds=2, max_iterations=np.int64(3)).max_iterations == 3
    assert Budget(max_iterations=5).max_iterations == 5 and type(Budget(max_iterations=5).max_iterations) is int
    assert _msg(Budget, max_work=0.0) == "Budget.max_work must be a positive finite number, got 0.0"


def test_games_constructor_arguments():
    from papergym.envs.games.markov_game import EntropicMarkovGameEnv
    from papergym.envs.games.matrix_game import EntropicMatrixGameEnv
    from papergym.envs.games.mean_field import EntropicMeanFieldEnv

    env = EntropicMatrixGameEnv("random", role="both", a=np.float64(0.0), b=0, sigma=1, sigma_max=np.int64(2))
    env.reset(seed=0)
    assert (env.game.a, env.game.b, env.game.sigma_max) == (0.0, 0.0, 2.0) and type(env.game.b) is float
    assert "sigma must be a positive finite number, got 0" in _msg(EntropicMatrixGameEnv, "random", sigma=0)
    assert "a must be a non-negative finite number, got -0.1" in _msg(EntropicMatrixGameEnv, "random", a=-0.1)
    assert "role must be one of 'min', 'max', 'both'; got 'x'" in _msg(EntropicMatrixGameEnv, role="x")
    assert "horizon must be an integer >= 1, got 0" in _msg(EntropicMatrixGameEnv, horizon=0)
    assert "gap_tol must be a positive finite number" in _msg(EntropicMatrixGameEnv, gap_tol=0)
    mf = EntropicMeanFieldEnv(G=np.int64(101), horizon=np.int64(5), mu0_mean=-1)
    assert (mf.G, mf.horizon, mf.mu0_mean) == (101, 5, -1.0) and type(mf.G) is int
    assert "G must be an integer >= 3, got 2" in _msg(EntropicMeanFieldEnv, G=2)
    assert "mu0_mean must be a finite number" in _msg(EntropicMeanFieldEnv, mu0_mean=float("inf"))
    mk = EntropicMarkovGameEnv(gamma=0, tau=np.float64(0.5), role="both")
    mk.reset(seed=0)
    assert (mk.game.gamma, mk.game.tau) == (0.0, 0.5)
    assert "gamma must be a number in [0, 1), got 1" in _msg(EntropicMarkovGameEnv, gamma=1)
    assert "tau must be a positive finite number" in _msg(EntropicMarkovGameEnv, tau=0)


def test_fjsp_generators_and_sampled_rollouts():
    from papergym.envs.scheduling.fjsp.generators import sd1_instance, sd2_instance, sd2_published
    from papergym.envs.scheduling.fjsp.sampled import sampled_rollouts

    a = sd2_instance(np.int64(4), 3, np.random.default_rng(1))
    b = sd2_instance(4, 3, np.random.default_rng(1))
    assert np.array_equal(a.proc, b.proc) and a.n_jobs == 4
    assert _msg(sd1_instance, 0, 3, np.random.default_rng(0)) == "n_jobs must be an integer >= 1, got 0"
    assert _msg(sd2_instance, 2, 0, np.random.default_rng(0)) == "n_machines must be an integer >= 1, got 0"
    assert "mode must be one of 'mix', 'nf'" in _msg(sd2_instance, 2, 2, np.random.default_rng(0), mode="x")
    assert "split must be one of 'test', 'validation'" in _msg(sd2_published, 10, 5, split="dev")
    ms, _, _ = sampled_rollouts(b, np.random.default_rng(2), k=np.int64(3), tau=0)
    assert ms.shape == (3,)
    assert _msg(sampled_rollouts, b, np.random.default_rng(2), k=0) == "k must be an integer >= 1, got 0"
    assert "tau must be a non-negative finite number" in _msg(sampled_rollouts, b, np.random.default_rng(2), tau=-1)


def test_bandit_integer_hyperparameters_accept_integral_floats():
    from papergym.envs.bandits.gp.config import make_config
    from papergym.envs.bandits.lipschitz.instances import _make_config

    assert _make_config("two-peak-cyclic", 100.0, 1.0, "gaussian", 0.1).horizon == 100
    assert "horizon must be an integer >= 1, got 10.5" in _msg(
        _make_config, "two-peak-cyclic", 10.5, 1, "gaussian", 0.1
    )
    assert "sigma must be a non-negative finite number" in _msg(_make_config, "two-peak-cyclic", 10, 1, "gaussian", -1)
    cfg = make_config(horizon=20.0, d=1.0, n_centres=np.float64(5.0))
    assert (cfg.horizon, cfg.d) == (20, 1) and type(cfg.horizon) is int
    assert "n_centres must be an integer in [1," in _msg(make_config, n_centres=10**6)


# ----------------------------------------------------------------------------------- leaderboard
def test_stats_arguments():
    from papergym.leaderboard.runner.stats import point_ranks, rank_intervals, stratified_bootstrap

    data = {"a": {"s": [1.0, 2.0, 3.0]}}
    r = stratified_bootstrap(data, n_boot=np.int64(20), ci=np.float64(0.9), seed=1)
    assert r.replicates.shape[0] == 20
    assert _msg(stratified_bootstrap, data, n_boot=0) == "n_boot must be an integer >= 1, got 0"
    assert _msg(stratified_bootstrap, data, ci=1.0) == "ci must be a number in (0, 1), got 1.0"
    assert _msg(rank_intervals, r.replicates, "min", ci=0) == "ci must be a number in (0, 1), got 0"
    assert _msg(point_ranks, np.array([1.0]), "lower") == "direction must be one of 'min', 'max'; got 'lower'"
    assert _msg(point_ranks, np.array([1.0]), rtol=-1) == "rtol must be a non-negative finite number, got -1"


def test_worker_and_store_seconds(tmp_path):
    from papergym.leaderboard.board.store import _check_lease
    from papergym.leaderboard.board.worker import LeaseKeeper, Worker

    assert _check_lease(np.int64(30)).total_seconds() == 30.0
    assert _msg(_check_lease, 0) == "lease_seconds must be a positive finite number, got 0"
    assert _msg(LeaseKeeper, None, 1, "w", float("inf")) == "lease_seconds must be a positive finite number, got inf"
    assert (
        _msg(Worker, None, lambda job: None, poll_seconds=-1) == "poll_seconds must be a positive finite number, got -1"
    )
    assert _msg(Worker, None, lambda job: None, max_attempts=0) == "max_attempts must be an integer >= 1, got 0"
    assert Worker(None, lambda job: None, max_attempts=np.int64(2), worker_id="w").max_attempts == 2
