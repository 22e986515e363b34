"""Evaluation of service jobs (``evaluate.evaluate_job``) and their public feedback: the validation
split's full feedback, the test split's aggregate-only feedback, determinism of a retried job, and the
probe-and-replay attack (a submission that learnt which hidden instance each of an earlier
submission's runs played gains nothing from it)."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

from papergym.leaderboard.board import evaluate as E
from papergym.leaderboard.board.configs import EnvBoardConfig, board_version, stratum_seeds
from papergym.leaderboard.board.jobs import Job
from papergym.leaderboard.board.sandbox import bwrap_available

SECRET = "jobs-eval-test-secret-0123456789"
STRATUM = {"instance": "stochastic", "d": 10, "m": 3}
CFG = EnvBoardConfig("MSetSemiBandit-v0", strata={"stochastic": STRATUM}, seeds=12, horizon=400)

PROBE = '''
import sys
import numpy as np

class Agent:
    """Prints what it observes (seed, position, rewards), then fails on purpose."""
    def __init__(self, problem, *, seeds):
        self.seeds, self.t = list(seeds), 0
        self.d, self.m = problem.d, problem.m
    def act(self, obs):
        a = np.zeros((len(self.seeds), self.d), dtype=np.int8)
        a[:, : self.m] = 1
        return a
    def update(self, actions, rewards, obs):
        print("PROBE", self.t, self.seeds, np.asarray(obs["losses"]).round(3).tolist(), file=sys.stderr)
        self.t += 1
        if self.t == 3:
            raise RuntimeError("SECRET-LEAK " + repr(self.seeds))
'''

REPLAY = '''
import numpy as np
TABLE_BY_POSITION = {by_pos}
TABLE_BY_SEED = {by_seed}

class Agent:
    """Plays, for each run, the best m-set of the hidden instance it believes it is on."""
    def __init__(self, problem, *, seeds):
        self.rng = np.random.default_rng(0)
        self.d, self.m = problem.d, problem.m
        self.sets = []
        for i, s in enumerate(seeds):
            best = TABLE_BY_SEED.get(str(s), TABLE_BY_POSITION.get(str(i)))
            self.sets.append(best)
    def act(self, obs):
        a = np.zeros((len(self.sets), self.d), dtype=np.int8)
        for i, best in enumerate(self.sets):
            idx = best if best is not None else self.rng.choice(self.d, self.m, replace=False)
            a[i, idx] = 1
        return a
    def update(self, actions, rewards, obs):
        pass
'''

UNIFORM = REPLAY.format(by_pos="{}", by_seed="{}")


def _sandbox() -> str:
    ok, why = bwrap_available()
    if not ok:
        import os

        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"bubblewrap is required in CI: {why}")
        pytest.skip(why)
    return "bwrap"


def _job(code: str, split: str, sid: int = 7, cfg: EnvBoardConfig = CFG) -> Job:
    return Job(
        submission_id=sid,
        benchmark_id=cfg.benchmark_id,
        version=board_version(cfg),
        name="x",
        author="a",
        kind="agent",
        split=split,
        code=code.encode(),
        code_name="agent.py",
        attr="Agent",
    )


def _mean_regret(outcome) -> float:
    assert outcome.status == "ok", outcome.message
    return float(np.mean([r["metrics"]["regret"] for r in outcome.rows]))


def test_validation_keeps_feedback_and_test_hides_it():
    sb = _sandbox()
    val = E.evaluate_job(_job(PROBE, "validation"), secret=SECRET, sandbox=sb, config=CFG)
    assert val.status == "error"
    assert "SECRET-LEAK" in val.message and "PROBE" in val.stderr_tail
    assert all(r["error"] and "SECRET-LEAK" in r["error"] for r in val.rows)
    test = E.evaluate_job(_job(PROBE, "test"), secret=SECRET, sandbox=sb, config=CFG)
    assert test.status == "error"
    assert test.stderr_tail == ""
    assert "SECRET-LEAK" not in test.message and "PROBE" not in test.message
    assert test.message == "runs: 12 error"
    assert all(r["error"] is None for r in test.rows)
    blob = json.dumps([{k: v for k, v in r.items() if k != "curve"} for r in test.rows], default=str)
    assert "SECRET-LEAK" not in blob and "PROBE" not in blob


def test_validation_instances_are_public_and_differ_from_test():
    val = stratum_seeds(CFG.benchmark_id, "stochastic", "env", CFG.seeds, E.VALIDATION_KEY)
    test = stratum_seeds(CFG.benchmark_id, "stochastic", "env", CFG.seeds, SECRET)
    assert not set(val) & set(test)
    # the validation seeds depend on nothing private: the published key alone reproduces them
    assert E.VALIDATION_KEY == "papergym public validation split"


def test_a_retried_job_gives_the_same_result():
    sb = _sandbox()
    a = E.evaluate_job(_job(UNIFORM, "test", sid=11), secret=SECRET, sandbox=sb, config=CFG)
    b = E.evaluate_job(_job(UNIFORM, "test", sid=11), secret=SECRET, sandbox=sb, config=CFG)
    key = [(r["stratum"], r["seed_index"], r["status"], r["metrics"]["regret"]) for r in a.rows]
    assert key == [(r["stratum"], r["seed_index"], r["status"], r["metrics"]["regret"]) for r in b.rows]
    assert [r["seed_index"] for r in a.rows] == list(range(CFG.seeds))


def test_a_stale_job_is_refused():
    job = _job(UNIFORM, "test")
    other = EnvBoardConfig("MSetSemiBandit-v0", strata={"stochastic": STRATUM}, seeds=5, horizon=400)
    out = E.evaluate_job(job, secret=SECRET, sandbox="bwrap", config=other)
    assert out.status == "error" and "changed" in out.message and out.rows == []


def _instances(secret: str) -> list[object]:
    """The oracles of the stratum's instances drawn from ``secret``, in seed order."""
    out = []
    for e in stratum_seeds(CFG.benchmark_id, "stochastic", "env", CFG.seeds, secret):
        env = gym.make("MSetSemiBandit-v0", horizon=CFG.horizon, **STRATUM)
        env.reset(seed=int(e))
        out.append(env.unwrapped.oracle)
    return out


def _leak(sid: int) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """What a perfect leak of test submission ``sid`` would tell an attacker: the best m-set of the hidden
    instance played at each position of the batch and for each agent seed it was given (computed here
    with the secret, as the evaluator does)."""
    order = E._run_order(CFG.benchmark_id, "stochastic", CFG.seeds, SECRET, f"order/submission-{sid}")
    agent_seeds = stratum_seeds(CFG.benchmark_id, "stochastic", f"agent/submission-{sid}", CFG.seeds, SECRET)
    oracles = _instances(SECRET)
    by_pos, by_seed = {}, {}
    for pos, j in enumerate(order):
        best = np.flatnonzero(oracles[j].best_set()).tolist()
        by_pos[str(pos)] = best
        by_seed[str(agent_seeds[pos])] = best
    return by_pos, by_seed


def test_probe_and_replay_gains_nothing():
    """An attacker who learnt, for one test submission, which hidden instance every run played (by its
    position in the batch and by its agent seed) replays that knowledge in later submissions. It is
    perfect on the submission it learnt from; on any other it scores what the same m-sets score when
    dealt to the instances at random (the exact expectation, from the oracles): each test submission
    gets fresh agent seeds and a fresh secret order of the instances. (The set of hidden instances is
    the same for every submission, so that scores are paired; what keeps it unknown is that test
    feedback is aggregate only.)"""
    sb = _sandbox()
    leaked = _leak(sid=21)

    def regret(sid: int) -> float:
        code = REPLAY.format(by_pos=json.dumps(leaked[0]), by_seed=json.dumps(leaked[1]))
        return _mean_regret(E.evaluate_job(_job(code, "test", sid=sid), secret=SECRET, sandbox=sb, config=CFG))

    assert regret(21) == 0.0  # the leak is worth everything where it applies
    oracles = _instances(SECRET)
    sets = [np.isin(np.arange(STRATUM["d"]), b).astype(np.int8) for b in leaked[0].values()]
    dealt_at_random = np.mean([[o.regret(a, 1) * CFG.horizon for o in oracles] for a in sets])
    replayed = np.mean([regret(sid) for sid in (22, 23, 24, 25)])
    assert dealt_at_random > 100  # a wrong m-set costs: the leak has something to be worth
    assert replayed > 0.8 * dealt_at_random, (replayed, dealt_at_random)
