"""One episode loop for local comparisons and the leaderboard (papergym.leaderboard.runner.episode).

A local ``compare`` (batched and per-run) and the board's evaluation (:func:`play`) of the same agent on the
same env seeds give bit-identical final regrets and curves: for registry agents through the in-process
reference session, for a self-contained submission through the in-process agent session and, where
bubblewrap works, the sandboxed one.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

import papergym.envs  # noqa: F401
from papergym.agents import base
from papergym.envs.spec import agent_seed
from papergym.leaderboard.board.evaluate import RegistryAgentSession, play
from papergym.leaderboard.board.sandbox import (
    InProcessAgentSession,
    Limits,
    SandboxedAgentSession,
    bwrap_available,
)
from papergym.leaderboard.runner.compare import compare
from papergym.leaderboard.runner.episode import (
    PolicyDriver,
    checkpoints,
    run_vector_episode,
)

SUBS = Path(__file__).parent / "lb_subs"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
SEEDS = [0, 1, 2]
CASES = {
    "NonStatLipschitz-v0": (
        {"instance": "two-peak-cyclic", "horizon": 300},
        ["binning-ucb", "sw-ucb", "restart-oracle"],
    ),
    "MSetSemiBandit-v0": (
        {"instance": "oblivious-switching", "d": 5, "m": 2, "horizon": 200},
        ["ftpl-frechet", "uniform-random"],
    ),
}

# A self-contained semi-bandit submission (numpy only, as in the sandbox): a uniformly random m-set per round.
RANDOM_MSET = """
import numpy as np


class RandomSet:
    def __init__(self, problem, *, seed=None):
        self.d, self.m = int(problem.d), int(problem.m)
        self.rng = np.random.default_rng(seed)

    def act(self, observation):
        a = np.zeros(self.d, dtype=np.int8)
        a[self.rng.choice(self.d, self.m, replace=False)] = 1
        return a

    def update(self, action, reward, observation):
        pass


def make_agent(problem, *, seed=None):
    return RandomSet(problem, seed=seed)
"""


def _bits(x) -> bytes:
    return np.ascontiguousarray(np.asarray(x, dtype=float)).tobytes()


def _compare(env_id, kwargs, agents, mode, tmp_path):
    res = compare(
        env_id,
        agents,
        seeds=SEEDS,
        env_kwargs=kwargs,
        backend="serial",
        out=tmp_path / mode,
        cache=False,
        mode=mode,
        progress=False,
    )
    assert (res.runs.status == "ok").all(), res.errors
    return res


def _assert_same(res, agent, board_runs, static: bool) -> None:
    """Compare runs of ``agent`` (CompareResult) == the board's runs of the same seeds, bit for bit."""
    for seed, run in zip(SEEDS, board_runs):
        assert run["status"] == "ok", run["error"]
        c = res.curves[(res.curves.agent == agent) & (res.curves.seed == seed)].sort_values("t")
        b = run["curve"]
        assert c.t.tolist() == b.t.tolist() == checkpoints(int(b.t.iloc[-1])).tolist()
        assert _bits(c.cum_regret) == _bits(b.cum_regret), (agent, seed)
        row = res.runs[(res.runs.agent == agent) & (res.runs.seed == seed)].iloc[0]
        assert _bits(row.final_regret) == _bits(run["metrics"]["final_regret"])
        assert _bits(row.regret_half) == _bits(run["metrics"]["regret_half"])
        assert static == ("static_regret" in b.columns)
        if static:  # the board ranks the static pseudo-regret of a switching adversary
            assert _bits(c.static_regret) == _bits(b.static_regret)
            assert _bits(row.static_regret) == _bits(run["metrics"]["regret"])
        else:
            assert _bits(row.final_regret) == _bits(run["metrics"]["regret"])


def _int_seed(seed) -> int:
    """The board hands an agent integer seeds, the local runner ``agent_seed(s)`` (a SeedSequence): the
    agents compared here get the same integer both ways."""
    return int(seed.generate_state(1)[0]) if isinstance(seed, np.random.SeedSequence) else int(seed)


BOARD_SEEDS = [_int_seed(agent_seed(s)) for s in SEEDS]


@pytest.fixture
def int_seeded():
    """``register(name, env_id)``: registers ``test-int-<name>``, the registry agent ``name`` given the integer
    seeds of :func:`_int_seed` (per-run and batched factories, oracles passed on); removed after the test."""
    names = []

    def register(name: str, env_id: str) -> str:
        info = base.get_agent_info(name, env_id)

        def factory(problem, *, seed=None, **kw):
            return info.factory(problem, seed=_int_seed(seed), **kw)

        def batched(problem, *, seeds, **kw):
            return info.batched_factory(problem, seeds=[_int_seed(s) for s in seeds], **kw)

        new = f"test-int-{name}"
        base.register_agent(
            new,
            factory,
            envs=[env_id],
            role=info.role,
            batched_factory=batched if info.batched_factory is not None else None,
        )
        names.append(new)
        return new

    yield register
    for n in names:
        base._REGISTRY.pop(n, None)


@pytest.mark.parametrize("env_id", list(CASES))
def test_compare_and_board_agree_on_registry_agents(env_id, tmp_path, int_seeded):
    kwargs, agents = CASES[env_id]
    local = {a: int_seeded(a, env_id) for a in agents}
    batched = _compare(env_id, kwargs, list(local.values()), "batched", tmp_path)
    per_run = _compare(env_id, kwargs, list(local.values()), "per-run", tmp_path)
    static = "static_regret" in batched.curves.columns
    assert static == (env_id == "MSetSemiBandit-v0")
    for agent, name in local.items():
        session = RegistryAgentSession(agent, env_id)
        runs = play(env_id, kwargs, SEEDS, session, BOARD_SEEDS, on_env=session.on_env)
        _assert_same(batched, name, runs, static)
        _assert_same(per_run, name, runs, static)
    # the learners' runs differ between agents and seeds: the comparison above is not vacuous
    finals = batched.runs[batched.runs.role != "oracle"].final_regret.to_numpy()
    assert len(set(finals.tolist())) == len(finals) and (finals > 0).all()


def _load(path: Path, attr: str):
    spec = importlib.util.spec_from_file_location(f"episode_loop_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, attr)


def _submissions(tmp_path):
    mset = tmp_path / "random_mset.py"
    mset.write_text(RANDOM_MSET)
    return {
        "NonStatLipschitz-v0": (SUBS / "ucb_grid.py", {"instance": "two-peak-cyclic", "horizon": 300}),
        "MSetSemiBandit-v0": (mset, CASES["MSetSemiBandit-v0"][0]),
    }


@pytest.mark.parametrize("env_id", list(CASES))
@pytest.mark.parametrize("where", ["in-process", "sandboxed"])
def test_compare_and_board_agree_on_a_submission(env_id, where, tmp_path):
    if where == "sandboxed":
        ok, why = bwrap_available()
        if not ok:
            if IN_CI:
                pytest.fail(f"bubblewrap must work in CI: {why}")
            pytest.skip(f"bubblewrap unavailable: {why}")
    path, kwargs = _submissions(tmp_path)[env_id]
    factory = _load(path, "make_agent")
    name = "test-episode-submission"

    def registered(problem, *, seed=None):
        return factory(problem, seed=_int_seed(seed))

    base.register_agent(name, registered, envs=[env_id], role="baseline")
    try:
        res = _compare(env_id, kwargs, [name], "auto", tmp_path)
    finally:
        base._REGISTRY.pop(name)
    assert res.runs.iloc[0].diagnostics == {}
    if where == "in-process":
        session = InProcessAgentSession(factory)
    else:
        session = SandboxedAgentSession(
            path,
            "make_agent",
            sandbox="bwrap",
            limits=Limits(call_seconds=10.0, episode_seconds=120.0, submission_seconds=240.0),
        )
    runs = play(env_id, kwargs, SEEDS, session, BOARD_SEEDS)
    _assert_same(res, name, runs, env_id == "MSetSemiBandit-v0")


def test_policy_driver_updates_after_every_round_including_the_last():
    """The local runner's driving order: act, book, step, update -- T updates, the last with round T's
    rewards (the agent's diagnostics count every round); the regret of round t is booked from the
    actions before the step."""
    import gymnasium as gym

    spec = gym.spec("NonStatLipschitz-v0")
    venv = gym.envs.registration.load_env_creator(spec.vector_entry_point)(num_envs=2, horizon=7)
    obs, _ = venv.reset(seed=[3, 4])
    calls = []

    class Fixed:
        def act(self, o):
            calls.append("act")
            return np.full((2, 1), 0.25)

        def update(self, a, r, o):
            calls.append("update")
            assert np.shape(r) == (2,)

    ep = run_vector_episode(venv, obs, PolicyDriver(Fixed()))
    assert calls == ["act", "update"] * 7
    assert ep.status == ["ok", "ok"] and ep.rounds == 7
    expected = np.cumsum([venv.oracle.regret(np.full((2, 1), 0.25), t) for t in range(1, 8)], axis=0)
    assert _bits(ep.cum_regret) == _bits(expected[ep.t - 1])
    venv.close()


def test_failed_runs_and_fatal_errors_end_runs_with_their_status():
    """A driver's failed runs end as ``error`` (the others go on); a ``fatal`` exception ends every run still
    going with its ``status``; without ``fatal`` it propagates."""
    import gymnasium as gym

    spec = gym.spec("NonStatLipschitz-v0")
    make = gym.envs.registration.load_env_creator(spec.vector_entry_point)

    class Boom(Exception):
        status = "timeout"

    class Driver:
        def __init__(self, fail_at):
            self.t, self.fail_at = 0, fail_at

        def send(self, obs, rewards, active):
            self.active = active

        def recv(self):
            self.t += 1
            if self.t == self.fail_at:
                raise Boom("too slow")
            return np.full((3, 1), 0.5), ({1: "RuntimeError: run 1 exploded"} if self.t == 2 else {})

    venv = make(num_envs=3, horizon=10)
    obs, _ = venv.reset(seed=[0, 1, 2])
    ep = run_vector_episode(venv, obs, Driver(fail_at=5), fatal=(Boom,))
    assert ep.status == ["timeout", "error", "timeout"]
    assert ep.errors[1] == "RuntimeError: run 1 exploded" and ep.errors[0] == "too slow"
    obs, _ = venv.reset(seed=[0, 1, 2])
    with pytest.raises(Boom):
        run_vector_episode(venv, obs, Driver(fail_at=5))
    obs, _ = venv.reset(seed=[0, 1, 2])
    ep = run_vector_episode(venv, obs, Driver(fail_at=0))
    assert ep.status == ["ok", "error", "ok"] and ep.rounds == 10 and np.isfinite(ep.cum_regret[:, 0]).all()
    venv.close()
