"""RLDataSelection-v0 fidelity: UFO-RL's confidence is the official code's (gold-answer tokens only, no EOS), the
public problem reaches no private state of the evaluator (sealed policy and full-pool switch), and the forward count
the evaluator publishes is its own (a solver cannot reset it)."""

from __future__ import annotations

import numpy as np
import pytest

from papergym_tests import find_private, require  # the helpers of tests/conftest.py

torch = require("torch", "torch")

from papergym.agents.base import get_solver_info, make_solver
from papergym.agents.solvers.ufo_rl import confidence, ufo_scores
from papergym.envs.tasks.base import make_task
from papergym.envs.tasks.sealed import SealedCall

TID = "RLDataSelection-v0"
TINY = dict(pool_size=40, test_size=30, max_digits=3, rl_epochs=1, batch_prompts=8, group_size=2)


def _tiny(seed: int):
    task = make_task(TID, **TINY, seeds=[seed])
    return task, *task.make(task.instances()[0])


@pytest.mark.parametrize("seed", [0, 7, 2001])
def test_problem_reaches_no_private_state(seed):
    task, p, ev = _tiny(seed)
    assert all(
        isinstance(f, SealedCall)
        for f in (p.policy.logprobs, p.policy.sample, p.policy.work_used, p.oracle.allow_full_pool)
    )
    private = [ev, ev.server, ev.full_pass, ev.test_prompts, ev.test_answers, ev.test_size]
    assert find_private(p, private) == []
    # the served calls still work and are counted by the evaluator
    lp = p.policy.logprobs(list(p.prompts[:3]), list(p.answers[:3]))
    assert lp.shape[0] == 3 and p.policy.work_used() == ev.server.forwards > 0


def test_select_forwards_is_the_evaluators_count_not_the_solvers():
    task, p, ev = _tiny(3)
    sol = make_solver("ufo-rl", TID, seed=0).solve(p, task.default_budget, lambda *a, **k: None)
    spent = ev.server.forwards
    assert spent == sum(len(q) + len(a) + 1 for q, a in zip(p.prompts, p.answers))
    lied = {"indices": sol["indices"], "meta": {"forwards": 0.0, "select_forwards": 0.0}}
    m = ev.evaluate(lied)
    assert m["select_forwards"] == spent
    with pytest.raises(AttributeError):
        p.policy.work_used.forwards = 0  # the sealed proxy has no state to reset
    assert ev.evaluate(lied)["select_forwards"] == spent


def test_full_pool_switch_is_private_to_the_evaluator():
    task, p, ev = _tiny(4)
    with pytest.raises(ValueError, match="exactly k"):
        ev.evaluate(list(range(p.pool_size)))
    assert not ev.full_pass.allowed
    p.oracle.allow_full_pool()  # the trusted full-data reference (the board strips the field)
    assert ev.full_pass.allowed and ev.evaluate(list(range(p.pool_size)))["n_selected"] == p.pool_size
    assert "oracle" in p.PRIVATE_FIELDS


def test_confidence_counts_the_gold_answer_tokens_only_by_default():
    """The official compute_ufo_scores.py averages the log-probs of the answer's own tokens (the assistant turn is
    continued, no end-of-turn token follows): the default excludes the EOS column."""
    lp = np.array([[-0.1, -0.2, -3.0, np.nan], [-0.5, -5.0, np.nan, np.nan]])
    lens = np.array([2, 1])
    assert confidence(lp, lens) == pytest.approx([-0.15, -0.5])
    assert confidence(lp, lens, include_eos=True) == pytest.approx([-3.3 / 3, -5.5 / 2])
    for name in ("ufo-rl", "easiest-conf", "hardest-conf"):
        assert get_solver_info(name, TID).defaults["include_eos"] is False
    # score = 1 - (s - mean s)^2: the selection is the band of s nearest the pool mean
    s = np.array([0.05, 0.5, 0.95, 0.45, 0.99])
    sc = ufo_scores(np.log(s))
    assert np.argsort(-sc)[:2].tolist() == [1, 3]
    _, p, _ = _tiny(5)
    sol = make_solver("ufo-rl", TID, seed=0).solve(p, None, lambda *a, **k: None)
    lpp = p.policy.logprobs(list(p.prompts), list(p.answers))
    conf = confidence(lpp, np.array([len(a) for a in p.answers]))
    sv = np.exp(conf)
    d = np.abs(sv - sv.mean())
    assert d[sol["indices"]].max() <= np.sort(d)[p.k - 1] + 1e-12
