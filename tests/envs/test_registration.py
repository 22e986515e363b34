"""Every registered papergym env: importable by id, passes check_env, deterministic under a seed,
and its native vector env (if any) matches the single env row by row."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest

import papergym.envs as penvs

ENV_IDS = penvs.list_envs()


def test_catalogue_ids_are_registered():
    assert "NonStatLipschitz-v0" in ENV_IDS
    for env_id in ENV_IDS:
        assert env_id in gym.registry


@pytest.mark.parametrize(
    "env_id,cls",
    [
        ("NonStatLipschitz-v0", "NonStatLipschitzEnv"),
        ("NoiseFreeGPBandit-v0", "NoiseFreeGPBanditEnv"),
        ("MSetSemiBandit-v0", "MSetSemiBanditEnv"),
    ],
)
def test_make_with_module_prefix_needs_no_prior_import(env_id, cls):
    code = (
        f"import gymnasium as gym; e = gym.make('papergym.envs:{env_id}', horizon=10); "
        "e.reset(seed=0); print(type(e.unwrapped).__name__)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == cls


def test_unknown_id_lists_valid_ids():
    with pytest.raises(penvs.UnknownEnvError, match="NonStatLipschitz-v0"):
        penvs.check_env_id("NonStatLipschits-v0")


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_env(env_id, check_env_any):
    env = gym.make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # infinite observation bounds / no render modes are by design
        check_env_any(env.unwrapped, skip_render_check=True)
    problem = env.unwrapped.problem
    assert problem.env_id == env_id
    assert problem.action_space == env.action_space


def _flat(env, obs):
    """One observation as a flat float vector (Dict / Tuple observations flattened by their space)."""
    return np.asarray(gym.spaces.flatten(env.observation_space, obs), dtype=float)


def _same_obs(a, b):
    """Observations equal bit for bit (dict observations compared key by key)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_same_obs(a[k], b[k]) for k in a)
        )
    return np.array_equal(a, b)


def _stack_obs(obs):
    if isinstance(obs[0], dict):
        return {k: np.stack([o[k] for o in obs]) for k in obs[0]}
    return np.stack(obs)


def _row(obs, i):
    return {k: v[i] for k, v in obs.items()} if isinstance(obs, dict) else obs[i]


def _rollout(env, seed, n=200):
    obs, _ = env.reset(seed=seed)
    space = env.action_space
    space.seed(123)  # the space's own sampler (legal actions of any space), same sequence for every call
    out = [_flat(env, obs)]
    for _ in range(n):
        a = space.sample()
        obs, r, term, trunc, info = env.step(a)
        out.append(np.concatenate([_flat(env, obs), [r]]))
        assert set(info) <= {"t"}  # nothing privileged in info
        if term or trunc:  # e.g. FJSP-v0: one step per operation
            break
    return np.concatenate([np.ravel(x) for x in out])


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_deterministic_under_a_seed(env_id):
    try:
        env = gym.make(env_id, horizon=500)
    except ValueError:  # a horizon fixed by the instance (FJSP-v0: one decision per operation)
        env = gym.make(env_id)
    a, b, c = _rollout(env, 7), _rollout(env, 7), _rollout(env, 8)
    assert np.array_equal(a, b)
    if not env.unwrapped.metadata.get("seed_independent_instance", False):  # e.g. a fixed mean-field problem
        assert not np.array_equal(a, c)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_vector_entry_point_matches_single_envs(env_id):
    if gym.spec(env_id).vector_entry_point is None:
        pytest.skip(f"{env_id} has no native vector env")
    seeds = [3, 4, 5]
    try:
        venv = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", horizon=300)
        singles = [gym.make(env_id, horizon=300) for _ in seeds]
    except ValueError:  # a horizon fixed by the instance (FJSP-v0: one decision per operation)
        venv = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point")
        singles = [gym.make(env_id) for _ in seeds]
    obs, _ = venv.reset(seed=seeds)
    sobs = [e.reset(seed=s)[0] for e, s in zip(singles, seeds)]
    assert _same_obs(obs, _stack_obs(sobs))
    space = singles[0].action_space  # one run's space, seeded once
    space.seed(0)
    per_run = singles[0].unwrapped.metadata.get("state_dependent_actions", False)
    T = int(singles[0].unwrapped.problem.horizon)
    for t in range(1, min(T, 300) + 1):
        if per_run:  # legal actions depend on each run's state: sample each row from its own mask
            acts = np.stack(
                [
                    np.asarray(space.sample(mask=np.asarray(o["action_mask"], dtype=np.int8)))
                    for o in (_row(obs, i) for i in range(len(seeds)))
                ]
            )
        else:
            acts = np.stack([np.asarray(space.sample()) for _ in seeds])
        reg = venv.unwrapped.oracle.regret(acts, t) if hasattr(venv, "unwrapped") else venv.oracle.regret(acts, t)
        for i, e in enumerate(singles):
            assert reg[i] == e.unwrapped.oracle.regret(acts[i], t)
        obs, rew, term, trunc, _ = venv.step(acts)
        for i, e in enumerate(singles):
            o, r, te, tr, _ = e.step(acts[i])
            assert _same_obs(_row(obs, i), o) and rew[i] == r and trunc[i] == tr


def _families():
    import importlib

    out = []
    for env_id in ENV_IDS:
        mod = importlib.import_module(gym.spec(env_id).entry_point.split(":")[0])
        for inst in getattr(mod, "INSTANCES", None) or [None]:
            out.append((env_id, inst))
    return out


@pytest.mark.parametrize("env_id,instance", _families())
def test_gymnasiums_own_check_env_on_every_instance_family(env_id, instance):
    """Gymnasium's unpatched ``check_env``, then a few sampled steps through ``gym.make``'s passive checker,
    on every registered id and every instance family its module lists."""
    from gymnasium.utils.env_checker import check_env

    kwargs = {} if instance is None else {"instance": instance}
    env = gym.make(env_id, **kwargs)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*infinity.*")  # unbounded observations are documented
        check_env(env.unwrapped, skip_render_check=True)
        obs, _ = env.reset(seed=3)
        for _ in range(3):
            obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
            assert np.isfinite(reward)
            if terminated or truncated:
                break
    env.close()
