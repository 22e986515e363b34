"""Entropic game envs: Gymnasium / PettingZoo conformance (render modes, state space), finite observation bounds
that hold for every in-space action, and the Markov-game oracle's Newton–Shapley solver against value iteration."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import papergym.envs  # noqa: F401  (registers the ids)
from papergym.envs import InvalidActionError
from papergym.envs.games.markov_game import EntropicMarkovGameEnv
from papergym.envs.games.matrix_game import EntropicMatrixGameEnv
from papergym.envs.games.mean_field import EntropicMeanFieldEnv
from papergym.envs.games.render import RENDER_MODES
from papergym_tests import require

CASES = [
    ("EntropicMatrixGame-v0", {"instance": "random", "horizon": 5}),
    ("EntropicMatrixGame-v0", {"instance": "rps-cold", "role": "max", "horizon": 5}),
    ("EntropicMarkovGame-v0", {"instance": "random", "horizon": 5}),
    ("EntropicMarkovGame-v0", {"instance": "random-cold", "role": "both", "horizon": 5}),
    ("EntropicMeanField-v0", {"instance": "double-well", "G": 201, "horizon": 5}),
]


def _quiet_check(env):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env)  # the render check included: every declared mode is made and rendered


@pytest.mark.parametrize("env_id,kw", CASES)
@pytest.mark.parametrize("mode", [None, *RENDER_MODES])
def test_check_env_with_each_render_mode(env_id, kw, mode):
    env = gym.make(env_id, render_mode=mode, **kw)
    assert env.unwrapped.metadata["render_modes"] == RENDER_MODES and env.unwrapped.metadata["render_fps"] > 0
    assert env.unwrapped.render_mode == mode
    _quiet_check(env)


@pytest.mark.parametrize("env_id,kw", CASES)
def test_render_frames(env_id, kw):
    ansi = gym.make(env_id, render_mode="ansi", **kw).unwrapped
    rgb = gym.make(env_id, render_mode="rgb_array", **kw).unwrapped
    for env in (ansi, rgb):
        with pytest.raises(RuntimeError, match="reset"):
            env.render()
        env.reset(seed=1)
    text0 = ansi.render()
    assert isinstance(text0, str) and "step 0/5" in text0 and "no step yet" in text0
    img0 = rgb.render()
    assert isinstance(img0, np.ndarray) and img0.dtype == np.uint8 and img0.ndim == 3 and img0.shape[2] == 3
    assert img0.shape[0] > 100 and img0.shape[1] > 100 and img0.std() > 0  # a drawn figure, not a blank frame
    for env in (ansi, rgb):
        env.action_space.seed(0)
        for _ in range(3):
            env.step(env.action_space.sample())
    text = ansi.render()
    g = ansi._gaps[-1]
    assert "step 3/5" in text and f"{g:.3e}" in text and f"{min(ansi._gaps):.3e}" in text
    assert len(text.splitlines()) <= 12  # short, whatever the size of the profile
    img = rgb.render()
    assert img.shape == img0.shape and img.dtype == np.uint8 and not np.array_equal(img, img0)


def test_ansi_shows_the_rounded_profile():
    env = EntropicMarkovGameEnv("random", role="both", render_mode="ansi")
    env.reset(seed=2)
    text = env.render()
    for s in range(env.S):
        line = next(ln for ln in text.splitlines() if ln.strip().startswith(f"state {s}:"))
        for p in (env._mu[s], env._nu[s]):
            assert "[" + " ".join(f"{v:.3f}" for v in p) + "]" in line


def test_render_mode_none_and_bad_mode():
    env = EntropicMatrixGameEnv("rps")
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None
    for cls in (EntropicMatrixGameEnv, EntropicMarkovGameEnv, EntropicMeanFieldEnv):
        with pytest.raises(ValueError, match="render_mode must be None or one of 'ansi', 'rgb_array'"):
            cls(render_mode="human")


# ------------------------------------------------------------------------------------------ PettingZoo
@pytest.mark.parametrize(
    "modname,kw",
    [("entropic_matrix_game_v0", {"instance": "random"}), ("entropic_markov_game_v0", {"instance": "random-cold"})],
)
@pytest.mark.parametrize("mode", [None, *RENDER_MODES])
def test_pettingzoo_render_and_state(modname, kw, mode):
    require("pettingzoo", "games")
    import importlib

    from pettingzoo.test import parallel_api_test

    mod = importlib.import_module(f"papergym.envs.games.{modname}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallel_api_test(mod.parallel_env(render_mode=mode, **kw), num_cycles=10)
    env = mod.parallel_env(render_mode=mode, horizon=6, **kw)
    assert env.render_mode == mode and env.metadata["render_modes"] == RENDER_MODES
    assert isinstance(env.state_space, gym.spaces.Box) and env.state_space.dtype == np.float64
    obs, _ = env.reset(seed=5)
    assert env.state_space.contains(env.state())
    for a in env.agents:
        assert env.observation_space(a).contains(obs[a])
        assert np.all(np.isfinite(env.observation_space(a).low)) and np.all(np.isfinite(env.observation_space(a).high))
    rng = np.random.default_rng(0)
    while env.agents:
        acts = {
            a: rng.dirichlet(np.full(env.action_space(a).shape[-1], 0.05), size=env.action_space(a).shape[:-1])
            for a in env.agents
        }
        obs, *_ = env.step(acts)
        st = env.state()
        assert st.shape == env.state_space.shape and env.state_space.contains(st)
        np.testing.assert_allclose(st, np.concatenate([env._env._mu, env._env._nu], axis=-1))
        for a in obs:
            assert env.observation_space(a).contains(obs[a])
        if mode is None:
            continue
        frame = env.render()
        if mode == "ansi":
            assert isinstance(frame, str) and "NI gap" in frame
        elif mode == "rgb_array":
            assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    if mode is None:
        with pytest.warns(UserWarning, match="render_mode"):
            assert env.render() is None


# ------------------------------------------------------------------------------------- observation bounds
def _edge_actions(space: gym.spaces.Box, rng: np.random.Generator, n: int = 40) -> list[np.ndarray]:
    """In-space actions, many of them near or on the boundary of the simplices: uniform samples, vertices,
    sparse Dirichlet draws, entries of 1e−300 and subnormals next to 1."""
    out = [space.sample() for _ in range(n // 4)]
    shape = space.shape
    for _ in range(n):
        kind = rng.integers(4)
        if kind == 0:  # a vertex per row / block
            x = np.zeros(shape)
            idx = rng.integers(shape[-1], size=shape[:-1])
            np.put_along_axis(x, np.asarray(idx)[..., None], 1.0, axis=-1)
            x = np.maximum(x, (rng.random(shape) < 0.5) * 1e-300)
        elif kind == 1:  # sparse Dirichlet
            x = rng.dirichlet(np.full(shape[-1], 0.02), size=shape[:-1])
        elif kind == 2:  # one entry 1, the rest subnormal
            x = np.full(shape, 5e-324)
            x[..., 0] = 1.0
        else:
            x = rng.random(shape) ** 40
        out.append(np.clip(x, 0.0, 1.0))
    return out


def _valid(env, x) -> bool:
    try:
        env.unwrapped.validate_action(x)
        return True
    except InvalidActionError:
        return False


@pytest.mark.parametrize(
    "cls,kw",
    [
        (EntropicMatrixGameEnv, {"instance": "random"}),
        (EntropicMatrixGameEnv, {"instance": "random", "g": 3.0, "a": 0.9, "b": 0.99}),
        (EntropicMatrixGameEnv, {"instance": "rps-cold"}),
        (EntropicMatrixGameEnv, {"instance": "rps-nonconvex", "a": 0.999, "b": 0.999}),
        (EntropicMarkovGameEnv, {"instance": "random"}),
        (EntropicMarkovGameEnv, {"instance": "random-cold"}),
        (EntropicMarkovGameEnv, {"instance": "single-state", "tau": 10.0}),
        (EntropicMarkovGameEnv, {"instance": "random", "S": 4, "A": 2, "B": 5, "gamma": 0.99, "tau": 5.0}),
    ],
)
@pytest.mark.parametrize("role", ["min", "max", "both"])
def test_observations_of_in_space_actions_lie_in_the_observation_space(cls, kw, role):
    env = cls(role=role, **kw)
    space = env.observation_space
    assert np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high)) and space.dtype == np.float64
    assert env.action_space.dtype == np.float64
    rng = np.random.default_rng(7)
    for seed in (0, 1):
        obs, _ = env.reset(seed=seed)
        assert space.contains(obs)
        env.action_space.seed(seed)
        n = 0
        for x in _edge_actions(env.action_space, rng):
            if not _valid(env, x):
                continue  # an all-zero row is in the Box but not a measure: rejected, no observation
            obs, *_ = env.step(x)
            n += 1
            assert space.contains(obs), (obs.min(), obs.max(), space.low.min(), space.high.max())
            if env.t >= env.horizon:
                env.reset(seed=seed)
        assert n > 20


def test_markov_bound_formula():
    """The declared bound is the documented formula, and its KL ingredient is attained: a vertex policy has
    ``KL(μ_s|uniform) = log A`` exactly (so ``τ log A`` cannot be dropped from the bound)."""
    env = EntropicMarkovGameEnv("random", role="both", gamma=0.95, tau=2.0)
    env.reset(seed=0)
    g, t, A, B = env.gamma, env.tau, env.A, env.B
    hi = 1.0 + g * (1.0 + t * np.log(A)) / (1.0 - g)
    assert env.observation_space.high.max() == pytest.approx(hi, rel=1e-8)
    assert env.observation_space.low.min() == pytest.approx(-1.0 - g * (1.0 + t * np.log(B)) / (1.0 - g), rel=1e-8)
    # a vertex policy of the min player has KL = log A: the per-state cost reaches 1 + τ log A when r = 1 there
    game = env.game
    mu = np.zeros((game.S, A))
    mu[:, 0] = 1.0
    assert np.allclose(
        game._c_and_P(mu, np.full((game.S, B), 1 / B))[0]
        - np.einsum("sa,sab,sb->s", mu, game.r, np.full((game.S, B), 1 / B)),
        t * np.log(A),
    )


def test_matrix_bounds_use_public_numbers_only():
    lo_hi = [EntropicMatrixGameEnv("random", a=a, role="min").observation_space for a in (0.0, 0.9)]
    np.testing.assert_array_equal(lo_hi[0].low, lo_hi[1].low)  # independent of the private a
    env = EntropicMatrixGameEnv("rps", a=1.5, allow_nonconvex_inner=True, role="both")
    assert np.all(np.isneginf(env.observation_space.low[:3])) and np.all(np.isfinite(env.observation_space.high[:3]))
    assert np.all(np.isposinf(env.observation_space.high[3:])) and np.all(np.isfinite(env.observation_space.low[3:]))


def test_mean_field_observation_space_stays_unbounded():
    env = EntropicMeanFieldEnv("curie-weiss", G=101)
    assert np.all(np.isinf(env.observation_space.low)) and np.all(np.isinf(env.observation_space.high))
    assert "private" in EntropicMeanFieldEnv.__doc__.split("## Observation Space")[1].split("##")[0]


# ----------------------------------------------------------------------- Markov oracle: Newton vs value iteration
@pytest.mark.parametrize(
    "inst,kw,seeds",
    [
        ("random", {}, (0, 5)),
        ("random-cold", {}, (0,)),
        ("random", {"S": 5, "A": 3, "B": 2}, (0, 5)),
        ("random", {"gamma": 0.95, "tau": 0.3}, (1,)),
        ("single-state", {}, (0,)),
    ],
)
def test_newton_shapley_equals_value_iteration(inst, kw, seeds):
    """The default solver (safeguarded Newton) against the plain value iteration it replaced, to 1e−10."""
    env = EntropicMarkovGameEnv(inst, role="both", **kw)
    for seed in seeds:
        env.reset(seed=seed)
        game = env.game
        (mu_n, nu_n), TV_n = game._shapley("newton")
        (mu_v, nu_v), TV_v = game._shapley("value-iteration")
        np.testing.assert_allclose(mu_n, mu_v, rtol=0, atol=1e-10)
        np.testing.assert_allclose(nu_n, nu_v, rtol=0, atol=1e-10)
        np.testing.assert_allclose(game.values(mu_n, nu_n), game.values(mu_v, nu_v), rtol=0, atol=1e-10)
        scale = max(1.0, np.abs(TV_n).max())
        assert np.abs(TV_n - TV_v).max() <= 1e-10 * scale
        # the oracle's values come from the Newton solve and are certified
        np.testing.assert_array_equal(env.oracle.mu_star, mu_n)
        assert env.oracle.value == pytest.approx(float(game.rho0 @ game.values(mu_v, nu_v)), abs=1e-10)
        assert env.oracle.equilibrium_gap(mu_n, nu_n) <= 1e-12


def test_reset_does_not_change_the_oracle_values():
    env = EntropicMarkovGameEnv("random-cold", role="min")
    env.reset(seed=3)
    first = (env.oracle.value, env.oracle.mu_star.copy(), dict(env.problem.params["br_bounds"]))
    env.reset(seed=3)  # same seed: same game, nothing re-solved differently
    assert (env.oracle.value, dict(env.problem.params["br_bounds"])) == (first[0], first[2])
    env.reset(seed=4)
    env.reset(seed=3)  # rebuilt from the seed: the same values
    assert env.oracle.value == first[0] and dict(env.problem.params["br_bounds"]) == first[2]
    np.testing.assert_array_equal(env.oracle.mu_star, first[1])


def test_shapley_method_is_checked():
    env = EntropicMarkovGameEnv("random")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="method must be 'newton' or 'value-iteration'"):
        env.game._shapley("policy-iteration")
