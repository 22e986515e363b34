"""FJSP envs against Gymnasium's own checker, pickling / vector envs and SB3 / sb3-contrib learners."""

import copy
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import papergym.envs  # noqa: F401  (registers the envs)
from papergym.envs import InvalidActionError

CONSTRUCT = [
    dict(family="sd1", n_jobs=6, n_machines=4),
    dict(family="sd2", n_jobs=6, n_machines=4),
    dict(family="sd2", reward_mode="terminal"),
    dict(instances="sd1-10x5"),
    dict(instances="sd2-10x5"),
    dict(instances="brandimarte"),
    dict(instances="hurink-edata"),
    dict(instance="brandimarte/mk01"),
]
IMPROVE = [
    dict(family="sd1", n_jobs=6, n_machines=4, horizon=5),
    dict(family="sd2", n_jobs=6, n_machines=4, horizon=5, init="random"),
    dict(instances="sd2-10x5", horizon=5),
    dict(instances="brandimarte", horizon=5, init="spt"),
    dict(instance="brandimarte/mk01", horizon=5, init="fifo"),
    dict(instance="brandimarte/mk02", horizon=5, init="mor"),
    dict(instances="sd1-10x5", horizon=5, init="sampled-dispatch"),
]
ALL = [("FJSP-v0", kw) for kw in CONSTRUCT] + [("FJSPImprove-v0", kw) for kw in IMPROVE]


@pytest.mark.parametrize("env_id,kw", ALL, ids=[f"{e}-{'-'.join(map(str, k.values()))}" for e, k in ALL])
def test_gymnasium_check_env_unchanged(env_id, kw):
    env = gym.make(env_id, **kw)  # the passive env checker wraps it
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no checker warning either
        check_env(env.unwrapped)
        obs, _ = env.reset(seed=3)
        for _ in range(3):  # passive checker on a few steps of sampled actions
            obs, *_ = env.step(env.action_space.sample())


@pytest.mark.parametrize(
    "env_id,kw",
    [("FJSP-v0", dict(instance="brandimarte/mk01")), ("FJSPImprove-v0", dict(instance="brandimarte/mk01", horizon=5))],
)
def test_illegal_action_penalty_is_a_noop_and_raise_mode_raises(env_id, kw):
    env = gym.make(env_id, **kw).unwrapped
    obs, _ = env.reset(seed=0)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    t0 = env.t
    obs2, r, te, tr, info = env.step(illegal)
    assert r == -1.0 and not te and not tr and info["illegal_action"] is True and "action" in info["reason"]
    assert all(np.array_equal(obs[k], obs2[k]) for k in obs if k != "step_fraction")
    assert env.t == (t0 if env_id == "FJSP-v0" else t0 + 1)  # the improvement env spends a step of its horizon
    with pytest.raises(InvalidActionError, match="outside"):  # outside the space: raises in every mode
        env.step(env.action_space.n)
    with pytest.raises(InvalidActionError):  # validate_action raises in every mode
        env.validate_action(illegal)
    legal = int(np.flatnonzero(obs["action_mask"])[0])
    assert "illegal_action" not in env.step(legal)[4]
    strict = gym.make(env_id, illegal_action="raise", **kw).unwrapped
    strict.reset(seed=0)
    with pytest.raises(InvalidActionError):
        strict.step(illegal)
    pen = gym.make(env_id, illegal_penalty=2.5, **kw).unwrapped
    pen.reset(seed=0)
    assert pen.step(illegal)[1] == -2.5
    with pytest.raises(ValueError, match="illegal_action must be one of"):
        gym.make(env_id, illegal_action="ignore", **kw)
    with pytest.raises(ValueError, match="illegal_penalty"):
        gym.make(env_id, illegal_penalty=-1, **kw)


def _assert_samples_legal(env, space, n=1000):
    mask = env.action_masks()
    assert mask.dtype == bool and mask.any()
    assert np.array_equal(mask, env._obs()["action_mask"].astype(bool))
    draws = np.array([space.sample() for _ in range(n)])
    assert mask[draws].all()


@pytest.mark.parametrize(
    "env_id,kw",
    [
        ("FJSP-v0", dict(family="sd1", n_jobs=6, n_machines=4)),
        ("FJSPImprove-v0", dict(instances="sd2-10x5", horizon=20)),
    ],
)
def test_mask_is_refreshed_and_survives_pickle_and_deepcopy(env_id, kw):
    env = gym.make(env_id, **kw).unwrapped
    env.reset(seed=1)
    env.action_space.seed(0)
    for _ in range(4):  # refreshed on every step
        env.step(env.action_space.sample())
        _assert_samples_legal(env, env.action_space, 200)
    env.reset(seed=7)  # ... and on reset (a new instance)
    _assert_samples_legal(env, env.action_space)
    for clone in (pickle.loads(pickle.dumps(env)), copy.deepcopy(env)):
        _assert_samples_legal(clone, clone.action_space)
        clone.step(clone.action_space.sample())  # the clone's sampler follows the clone's own state
        _assert_samples_legal(clone, clone.action_space)
    space = pickle.loads(pickle.dumps(env.action_space))  # the space alone keeps the state's mask
    _assert_samples_legal(env, space)
    _assert_samples_legal(env, copy.deepcopy(env.action_space))


def test_async_vector_env_steps_with_sampled_actions():
    envs = gym.vector.AsyncVectorEnv([lambda: gym.make("FJSPImprove-v0", instances="sd2-10x5", horizon=10)] * 2)
    try:
        obs, _ = envs.reset(seed=[0, 1])
        for _ in range(3):
            spaces = envs.get_attr("action_space")  # pickled back from the worker processes
            masks = envs.call("action_masks")
            actions = np.array([sp.sample() for sp in spaces])
            assert all(m[a] for m, a in zip(masks, actions))
            assert all(obs["action_mask"][i, a] for i, a in enumerate(actions))
            obs, rew, term, trunc, infos = envs.step(actions)
            assert "illegal_action" not in infos
    finally:
        envs.close()
    cenvs = gym.vector.AsyncVectorEnv([lambda: gym.make("FJSP-v0", family="sd2", n_jobs=5, n_machines=3)] * 2)
    try:
        obs, _ = cenvs.reset(seed=[0, 1])
        for _ in range(5):
            actions = np.array([sp.sample() for sp in cenvs.get_attr("action_space")])
            obs, rew, term, trunc, infos = cenvs.step(actions)
            assert "illegal_action" not in infos
    finally:
        cenvs.close()


def test_maskable_ppo_learns_without_wrappers(needs):
    needs("sb3_contrib", "test")
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import is_masking_supported

    torch.set_num_threads(1)
    env = gym.make("FJSP-v0", family="sd2", n_jobs=5, n_machines=3)
    assert is_masking_supported(env)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=0, device="cpu")
    model.learn(2000)
    assert model.num_timesteps >= 2000
    obs, _ = env.reset(seed=5)
    done = False
    while not done:  # the masked policy plays only legal actions
        a, _ = model.predict(obs, action_masks=env.unwrapped.action_masks(), deterministic=True)
        obs, _, done, _, info = env.step(a)
        assert "illegal_action" not in info


def test_plain_ppo_rollout_does_not_crash(needs):
    needs("stable_baselines3", "test")
    import torch
    from stable_baselines3 import PPO

    torch.set_num_threads(1)
    for env_id, kw in [
        ("FJSP-v0", dict(family="sd2", n_jobs=5, n_machines=3)),
        ("FJSPImprove-v0", dict(family="sd2", n_jobs=4, n_machines=3, horizon=20)),
    ]:
        model = PPO(
            "MultiInputPolicy", gym.make(env_id, **kw), n_steps=256, batch_size=64, n_epochs=1, seed=0, device="cpu"
        )
        model.learn(256)
        assert model.num_timesteps == 256
