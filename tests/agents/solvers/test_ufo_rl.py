"""ufo-rl: the confidence equals a direct per-token computation, the score formula, ties by index, one pass of
forwards, determinism; slow: the ZPD premise (single-pass confidence tracks multi-sample accuracy)."""

from __future__ import annotations

import numpy as np
import pytest

from papergym_tests import require  # the helper of tests/conftest.py

torch = require("torch", "torch")

from papergym.agents.base import make_solver
from papergym.agents.solvers.ufo_rl import confidence, top_k, ufo_scores
from papergym.envs.tasks.base import make_task
from papergym.envs.tasks.data_selection.model import EOS, build_policy, encode, load_weights

TID = "RLDataSelection-v0"
TINY = dict(pool_size=40, test_size=30, max_digits=3, rl_epochs=1, batch_prompts=8, group_size=2, seeds=[0])


def tiny(**kw):
    task = make_task(TID, **{**TINY, **kw})
    return task, *task.make(task.instances()[0])


def _direct_conf(net, prompt, answer, include_eos):
    """Mean of log pi(y_t | prompt, y_<t) computed one token at a time (no batching, no padding)."""
    ids = encode(prompt) + encode(answer) + [EOS]
    n_p = len(encode(prompt))
    stop = len(ids) if include_eos else len(ids) - 1
    lps = []
    with torch.no_grad():
        for t in range(n_p, stop):
            x = torch.tensor([ids[:t]])
            lps.append(float(torch.log_softmax(net(x, torch.ones_like(x, dtype=torch.bool))[0, -1], -1)[ids[t]]))
    return float(np.mean(lps))


@pytest.mark.parametrize("include_eos", [True, False])
def test_confidence_equals_direct_per_token_computation(include_eos):
    _, p, _ = tiny()
    net = build_policy(load_weights()).eval()
    lp = p.policy.logprobs(list(p.prompts), list(p.answers))
    conf = confidence(lp, np.array([len(a) for a in p.answers]), include_eos)
    direct = np.array([_direct_conf(net, q, a, include_eos) for q, a in zip(p.prompts, p.answers)])
    np.testing.assert_allclose(conf, direct, atol=2e-5)
    sol = make_solver("ufo-rl", TID, seed=0, include_eos=include_eos).solve(p, None, lambda *a, **k: None)
    s = np.exp(direct)
    score = 1 - (s - s.mean()) ** 2
    chosen = sol["indices"]
    assert len(chosen) == p.k == len(set(chosen.tolist()))
    # the chosen problems have the k highest direct scores (up to float round-off at the boundary)
    assert score[chosen].min() >= np.sort(score)[::-1][p.k - 1] - 1e-6
    assert sol["meta"]["mu"] == pytest.approx(s.mean(), abs=1e-5)


def test_score_formula_and_ties_by_index():
    conf = np.log(np.array([0.5, 0.9, 0.1, 0.5, 0.7, 0.3]))
    s = np.exp(conf)
    np.testing.assert_allclose(ufo_scores(conf), 1 - (s - 0.5) ** 2)
    # 0.5 (indices 0, 3) are at the mean; 0.7 and 0.3 tie next: the smaller index first
    assert top_k(ufo_scores(conf), 4).tolist() == [0, 3, 4, 5]
    assert top_k(np.zeros(5), 3).tolist() == [0, 1, 2]
    assert top_k(np.array([1.0, 2.0, 2.0, 0.0]), 2).tolist() == [1, 2]


def test_one_pass_deterministic_and_valid():
    task, p, ev = tiny()
    sol = make_solver("ufo-rl", TID, seed=0).solve(p, task.default_budget, lambda *a, **k: None)
    assert p.policy.work_used() == sum(len(q) + len(a) + 1 for q, a in zip(p.prompts, p.answers))
    _, p2, _ = tiny()
    sol2 = make_solver("ufo-rl", TID, seed=123).solve(p2, task.default_budget, lambda *a, **k: None)
    assert sol["indices"].tolist() == sol2["indices"].tolist()
    m = ev.evaluate(sol)
    assert m["select_forwards"] == p.policy.work_used() and m["n_selected"] == p.k
    with pytest.raises(ValueError, match="include_eos"):
        make_solver("ufo-rl", TID, include_eos="yes")


def test_works_on_a_sandbox_style_namespace():
    """A sandboxed solver gets nested namespaces with the callables (not the dataclass)."""
    from types import SimpleNamespace

    _, p, _ = tiny()
    ns = SimpleNamespace(
        prompts=list(p.prompts),
        answers=list(p.answers),
        k=p.k,
        policy=SimpleNamespace(logprobs=p.policy.logprobs, sample=p.policy.sample, work_used=p.policy.work_used),
    )
    a = make_solver("ufo-rl", TID).solve(ns, None, lambda *a, **k: None)["indices"]
    _, p2, _ = tiny()
    assert a.tolist() == make_solver("ufo-rl", TID).solve(p2, None, lambda *a, **k: None)["indices"].tolist()


@pytest.mark.slow
def test_zpd_premise_confidence_tracks_multi_sample_accuracy():
    """What transfers from the paper is that one teacher-forced pass ranks problems like multi-sample
    accuracy does. On a 1,000-problem default-law pool, exp(Conf) and the 8-sample accuracy are strongly rank
    correlated, and ufo-rl's selection lies between the easiest and hardest problems."""
    from scipy.stats import spearmanr

    from papergym.baselines.solvers.data_selection import MultiSampleAcc

    task = make_task(TID, pool_size=1000, seeds=[0])
    p, ev = task.make(task.instances()[0])
    lp = p.policy.logprobs(list(p.prompts), list(p.answers))
    s = np.exp(confidence(lp, np.array([len(a) for a in p.answers])))
    acc = MultiSampleAcc(seed=0).estimate(p)
    rho = spearmanr(s, acc).statistic
    assert rho > 0.7, rho
    sel = top_k(ufo_scores(np.log(s)), p.k)
    mid = ev.pool_size_d[sel].mean()
    easy = ev.pool_size_d[top_k(s, p.k)].mean()
    hard = ev.pool_size_d[top_k(-s, p.k)].mean()
    assert easy < mid < hard
    # a single pass costs a tenth of the 8-sample estimate or less
    assert p.policy.work_used() > 6 * sum(len(q) + len(a) + 1 for q, a in zip(p.prompts, p.answers))
