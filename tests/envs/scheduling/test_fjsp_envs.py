"""FJSP-v0 and FJSPImprove-v0: Gymnasium API, determinism, rewards, oracle, invalid actions."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import papergym.envs  # noqa: F401
from papergym.envs import InvalidActionError
from papergym.envs.scheduling.fjsp.graph import evaluate, validate_schedule
from papergym.envs.scheduling.fjsp.improve import dispatch_solution, solution_from_observation
from papergym.envs.scheduling.fjsp.rules import RuleTables, choose_pair
from papergym.envs.scheduling.fjsp.sets import load_instance

CONFIGS = [
    dict(instances="brandimarte"),
    dict(),
    dict(family="sd1", n_jobs=6, n_machines=4),
    dict(instance="brandimarte/mk01"),
    dict(instances="hurink-vdata"),
]


@pytest.mark.parametrize("env_id", ["FJSP-v0", "FJSPImprove-v0"])
@pytest.mark.parametrize("kw", CONFIGS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "default")
def test_check_env(env_id, kw, check_env_any):
    env = gym.make(env_id, **kw)
    assert env.unwrapped.metadata["state_dependent_actions"]
    check_env_any(env.unwrapped, skip_render_check=True)


def _rule_episode(env, seed, rule="mwkr"):
    obs, _ = env.reset(seed=seed)
    tables = RuleTables(obs["proc"], obs["op_job"])
    rng = np.random.default_rng(seed)
    ret, done, n = 0.0, False, 0
    while not done:
        obs, r, done, trunc, info = env.step(choose_pair(rule, obs, tables, rng))
        ret += r
        n += 1
        assert not trunc
    return ret, n, info


@pytest.mark.parametrize("kw", CONFIGS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "default")
def test_construct_episode_builds_a_valid_schedule(kw):
    env = gym.make("FJSP-v0", **kw).unwrapped
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        lb0 = env._lb
        ret, n, info = _rule_episode(env, seed)
        inst = env.instance
        assert n == inst.n_ops  # one decision per operation
        machine, start = env.schedule()
        c = validate_schedule(inst, machine, start, makespan=env.makespan)
        ev = evaluate(inst, env.solution())
        assert ev.cmax == c and np.array_equal(ev.heads, start)  # the simulation is the semi-active schedule
        assert ret == pytest.approx(lb0 - c)  # dense_lb return telescopes to LB_0 - C_max
        assert c >= env.oracle.lower_bound


def test_construct_terminal_reward_and_padding():
    env = gym.make("FJSP-v0", family="sd1", n_jobs=8, n_machines=5, reward_mode="terminal").unwrapped
    env.reset(seed=4)
    assert env.N == 8 * 6 and env.instance.n_ops <= env.N
    ret, n, _ = _rule_episode(env, 4, "spt")
    assert ret == -env.makespan and n == env.instance.n_ops


def test_construct_invalid_actions_leave_state_unchanged():
    env = gym.make("FJSP-v0", instance="brandimarte/mk01", illegal_action="raise").unwrapped
    obs, _ = env.reset(seed=0)
    M = env.M
    bad_machine = int(np.flatnonzero(obs["proc"][0] == 0)[0])
    for a, msg in [
        (bad_machine, "cannot process"),
        (-1, "outside"),
        (env.J * M, "outside"),
        (1.5, "integer"),
        (2.0, "integer"),
        (np.array([1, 2]), "integer"),
        ("x", "integer"),
        (True, "integer"),
        (None, "integer"),
    ]:
        with pytest.raises(InvalidActionError, match=msg):
            env.step(a)
    obs2 = env._obs()
    assert all(np.array_equal(obs[k], obs2[k]) for k in obs)
    # finish job 0, then any action on job 0 is illegal
    for _ in range(env.instance.job_ops[0]):
        o = env._next_op[0]
        env.step(int(np.flatnonzero(env.instance.proc[o] > 0)[0]))
    with pytest.raises(InvalidActionError, match="no operation left"):
        env.step(0)


def test_regret_is_zero_until_the_end_and_sums_to_cmax_minus_lb():
    from papergym.envs.wrappers import RegretRecorder

    env = RegretRecorder(gym.make("FJSP-v0", instances="brandimarte"))
    obs, _ = env.reset(seed=2)
    base = env.unwrapped
    tables = RuleTables(obs["proc"], obs["op_job"])
    rng = np.random.default_rng(0)
    done = False
    while not done:
        obs, _, done, _, _ = env.step(choose_pair("mor", obs, tables, rng))
    assert all(r == 0 for r in env.regrets[:-1])
    assert env.cumulative_regret == base.makespan - base.oracle.lower_bound >= 0
    m = base.oracle.instance_metrics()
    assert m["instance"] == "brandimarte/mk03" and m["reference"] == 204 and m["proved_optimal"]
    assert base.oracle.gap(204) == 0 and base.oracle.gap(193.8) < 0  # negative gaps are not clipped


def test_improve_episode_and_rewards():
    env = gym.make("FJSPImprove-v0", instances="brandimarte", horizon=30).unwrapped
    obs, _ = env.reset(seed=0)
    inst = env.instance
    c0 = env.initial_cmax
    assert (
        c0 == evaluate(inst, dispatch_solution(inst, "mwkr", np.random.default_rng(int(inst.sha256()[:16], 16)))).cmax
    )
    ret, best = 0.0, c0
    rng = np.random.default_rng(0)
    for t in range(30):
        mask = obs["action_mask"].astype(bool)
        assert mask.any()
        a = int(rng.choice(np.flatnonzero(mask)))
        obs, r, term, trunc, _ = env.step(a)
        assert r == max(best - int(obs["cmax"][0]), 0)
        best = min(best, int(obs["cmax"][0]))
        ret += r
        assert int(obs["incumbent_cmax"][0]) == best
        sol = solution_from_observation(obs, inst)
        ev = evaluate(inst, sol)
        assert ev.cmax == obs["cmax"][0] and np.array_equal(ev.heads, obs["head"][: inst.n_ops])
        assert not term and trunc == (t == 29)
    assert ret == c0 - env.makespan
    validate_schedule(inst, env.incumbent.assign, evaluate(inst, env.incumbent).heads, makespan=env.makespan)


def test_improve_invalid_and_restore_actions():
    env = gym.make("FJSPImprove-v0", instance="brandimarte/mk02", horizon=10, illegal_action="raise").unwrapped
    obs, _ = env.reset(seed=0)
    mask = obs["action_mask"]
    illegal = int(np.flatnonzero(mask[: env.n_moves] == 0)[0])
    with pytest.raises(InvalidActionError, match="not a feasible move"):
        env.step(illegal)
    with pytest.raises(InvalidActionError, match="slot 3 is empty"):
        env.step(env.n_moves + 3)
    with pytest.raises(InvalidActionError, match="outside"):
        env.step(env.n_moves + env.R)
    assert np.array_equal(env._obs()["action_mask"], mask)
    # a move, then restoring slot 0 brings back s_0
    legal = int(np.flatnonzero(mask[: env.n_moves])[0])
    obs1, *_ = env.step(legal)
    assert obs1["current_slot"][0] == 1 and obs1["archive_cmax"][1] == obs1["cmax"][0]
    obs2, r, *_ = env.step(env.n_moves + 0)
    assert obs2["cmax"][0] == env.initial_cmax and r == 0 and obs2["current_slot"][0] == 0


def test_improve_given_init_and_errors():
    inst = load_instance("brandimarte/mk01")
    sol = dispatch_solution(inst, "spt", np.random.default_rng(0))
    env = gym.make("FJSPImprove-v0", instance="brandimarte/mk01", init="given").unwrapped
    env.reset(seed=0, options={"solution": sol.sequences()})
    assert env.initial_cmax == evaluate(inst, sol).cmax
    with pytest.raises(ValueError, match="needs options"):
        env.reset(seed=0)
    # a cyclic given solution is refused and the env keeps its previous episode
    from papergym.envs.scheduling.fjsp.graph import CycleError

    env.reset(seed=0, options={"solution": sol.sequences()})
    before = env._obs()
    seqs = sol.sequences()
    k = next(i for i, q in enumerate(seqs) if any(inst.op_job[a] == inst.op_job[b] and a < b for a in q for b in q))
    q = seqs[k]
    a, b = next((a, b) for a in q for b in q if inst.op_job[a] == inst.op_job[b] and a < b)
    ia, ib = q.index(a), q.index(b)
    q[ia], q[ib] = b, a  # a later operation of the same job before an earlier one: a cycle
    with pytest.raises(CycleError):
        env.reset(seed=0, options={"solution": seqs})
    after = env._obs()
    assert all(np.array_equal(before[key], after[key]) for key in before)
    with pytest.raises(ValueError, match="init must be one of"):
        gym.make("FJSPImprove-v0", init="nope")
    with pytest.raises(ValueError, match="horizon"):
        gym.make("FJSPImprove-v0", horizon=0)


@pytest.mark.parametrize("env_id", ["FJSP-v0", "FJSPImprove-v0"])
def test_same_seed_same_episode(env_id):
    def run(seed):
        env = gym.make(env_id, family="sd2", n_jobs=5, n_machines=3)
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        out = [obs["proc"].copy()]
        for _ in range(10):
            obs, r, te, tr, _ = env.step(env.action_space.sample())
            out += [np.asarray(r), obs["action_mask"].copy()]
            if te or tr:
                break
        return out

    a, b, c = run(5), run(5), run(6)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])  # a different seed draws a different instance


def test_bad_kwargs():
    for kw, msg in [
        (dict(family="nope"), "family"),
        (dict(instances="nope"), "unknown instance set"),
        (dict(instance="brandimarte/mk99"), "no member"),
        (dict(family="file"), "path"),
        (dict(n_jobs=0), "n_jobs"),
        (dict(reward_mode="x"), "reward_mode"),
        (dict(horizon=3), "horizon"),
    ]:
        with pytest.raises((ValueError, KeyError), match=msg):
            gym.make("FJSP-v0", **kw)


@pytest.mark.parametrize("env_id", ["FJSP-v0", "FJSPImprove-v0"])
def test_regret_booked_before_or_after_the_step_agrees(env_id):
    kw = dict(family="sd2", n_jobs=5, n_machines=3)
    if env_id == "FJSPImprove-v0":
        kw["horizon"] = 6
    a_env, b_env = gym.make(env_id, **kw).unwrapped, gym.make(env_id, **kw).unwrapped
    a_env.reset(seed=1)
    obs, _ = b_env.reset(seed=1)
    b_env.action_space.seed(0)
    total_a = total_b = 0.0
    t, done = 0, False
    while not done:
        t += 1
        act = b_env.action_space.sample()
        total_a += a_env.oracle.regret(act, t)  # before the step
        a_env.step(act)
        _, _, te, tr, _ = b_env.step(act)
        total_b += b_env.oracle.regret(act, t)  # after the step
        done = te or tr
    assert total_a == total_b == b_env.makespan - b_env.oracle.lower_bound > 0
    with pytest.raises(ValueError, match="only the round being played"):
        b_env.oracle.regret(act, t + 5)
