"""RLDataSelection-v0: generator, tokenizer, the served policy (log-probs against a per-token loop, KV-cache sampling
against full recomputation, the forward counter, max_work), the solution checks and the evaluator."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from papergym_tests import require  # the helper of tests/conftest.py

torch = require("torch", "torch")

from papergym.envs.tasks.base import BudgetExceeded, InstanceRef, MissingSecretError, make_task
from papergym.envs.tasks.data_selection import DataSelectionTask, check_selection
from papergym.envs.tasks.data_selection.model import (
    EOS,
    build_policy,
    decode,
    digit_count,
    encode,
    load_weights,
    make_problems,
    sample_completions,
)

TID = "RLDataSelection-v0"
TINY = dict(pool_size=40, test_size=30, max_digits=3, rl_epochs=1, batch_prompts=8, group_size=2, seeds=[0])


def tiny(**kw):
    task = make_task(TID, **{**TINY, **kw})
    return task, *task.make(task.instances()[0])


def test_problems_are_correct_and_ordered():
    P, A, D = make_problems(np.random.default_rng(3), 500, [0.25] * 4)
    for p, a, d in zip(P, A, D):
        body = p[:-1]
        op = "+" if "+" in body else "-"
        x, y = (int(s) for s in body.split(op))
        assert int(a) == (x + y if op == "+" else x - y) and int(a) >= 0
        assert str(int(a)) == a and digit_count(p) == d and 1 <= d <= 4
        assert decode(encode(p)) == p
    assert set(np.unique(D)) == {1, 2, 3, 4}
    with pytest.raises(ValueError, match="not in the vocabulary"):
        encode("1*2=")


def test_task_kwargs_and_instances(monkeypatch):
    t = DataSelectionTask()
    assert (t.pool_size, t.test_size, t.max_digits, t.rl["epochs"], t.rl["group_size"]) == (4000, 1000, 4, 3, 8)
    assert t.default_budget.max_seconds == 30
    assert [r.name for r in t.instances()] == [f"arith/N=4000/D=4/s{s}" for s in range(5)]
    ps = DataSelectionTask(paper_scale=True)
    assert (ps.pool_size, ps.max_digits, ps.test_size, ps.rl["epochs"]) == (20000, 6, 5000, 5)
    for kw, field in [
        ({"max_digits": 7}, "max_digits"),
        ({"pool_size": 1}, "pool_size"),
        ({"paper_scale": "yes"}, "paper_scale"),
        ({"budget_fraction": 1.5}, "budget_fraction"),
        ({"rl_lr": -1.0}, "rl_lr"),
        ({"group_size": 1}, "group_size"),
    ]:
        with pytest.raises(ValueError, match=field):
            DataSelectionTask(**kw)
    monkeypatch.delenv("PAPERGYM_TEST_SECRET", raising=False)
    with pytest.raises(MissingSecretError):
        t.instances("test")
    with pytest.raises(ValueError, match="belongs to task"):
        t.make(InstanceRef("Other-v0", "dev", "x", 0, {}))


def test_problem_fields_and_budget_definition():
    task, p, ev = tiny()
    assert len(p.prompts) == len(p.answers) == 40 and p.k == 4 and p.max_new_tokens == 5
    mean_len = np.mean([len(q) + len(a) + 1 for q, a in zip(p.prompts, p.answers)])
    assert p.max_work == math.floor(10 * 40 * mean_len)
    assert p.PRIVATE_FIELDS == ("oracle",) and p.eos_token == "$"
    # same seed -> same pool and test set; another seed -> another pool
    _, p2, ev2 = tiny()
    assert p2.prompts == p.prompts and ev2.test_prompts == ev.test_prompts
    assert not set(ev.test_prompts) <= set(p.prompts) or len(set(ev.test_prompts)) < 5
    _, p3, _ = tiny(seeds=[1])
    assert p3.prompts != p.prompts


def _loop_logprobs(net, prompt, answer):
    """log pi(y_t | prefix) one token at a time, no padding, no batching."""
    ids = encode(prompt) + encode(answer) + [EOS]
    out = []
    with torch.no_grad():
        for t in range(len(encode(prompt)), len(ids)):
            x = torch.tensor([ids[:t]])
            lp = torch.log_softmax(net(x, torch.ones_like(x, dtype=torch.bool))[0, -1], -1)
            out.append(float(lp[ids[t]]))
    return np.array(out)


def test_logprobs_equal_per_token_loop_and_count_forwards():
    _, p, ev = tiny()
    net = build_policy(load_weights()).eval()
    P, A = list(p.prompts[:12]), list(p.answers[:12])
    lp = p.policy.logprobs(P, A)
    assert lp.shape == (12, max(len(a) for a in A) + 1)
    for i, (q, a) in enumerate(zip(P, A)):
        row = lp[i]
        np.testing.assert_allclose(row[: len(a) + 1], _loop_logprobs(net, q, a), atol=2e-5)
        assert np.all(np.isnan(row[len(a) + 1 :])) and np.all(row[: len(a) + 1] <= 0)
    cost = sum(len(q) + len(a) + 1 for q, a in zip(P, A))
    assert p.policy.work_used() == cost == ev.server.forwards


def test_sampling_forwards_seed_and_kv_cache():
    _, p, ev = tiny()
    P = list(p.prompts[:10])
    s1 = p.policy.sample(P, 3, 1.0, 7)
    used = p.policy.work_used()
    assert used == sum(len(q) + len(c) for q, cs in zip(P, s1) for c in cs)
    assert p.policy.sample(P, 3, 1.0, 7) == s1  # seeded -> reproducible
    assert all(len(cs) == 3 for cs in s1)
    assert all(c.count("$") <= 1 and (c.endswith("$") or len(c) == p.max_new_tokens) for cs in s1 for c in cs)
    # the KV-cache greedy decode equals argmax of a full recomputation at every step
    net = build_policy(load_weights()).eval()
    for q in P[:5]:
        comp = sample_completions(net, [q], 5, 0.0, torch.Generator())[0]
        ids = encode(q)
        with torch.no_grad():
            for _ in range(5):
                x = torch.tensor([ids])
                nxt = int(net(x, torch.ones_like(x, dtype=torch.bool))[0, -1].argmax())
                ids.append(nxt)
                if nxt == EOS:
                    break
        assert comp == decode(ids[len(encode(q)) :])
    # hostile calls
    for bad, match in [
        ("12+3=", "list of strings"),
        ([3], "must be a string"),
        (["1a+2="], "outside"),
        ([""], "empty"),
        (["1" * 30], "too long"),
    ]:
        with pytest.raises(ValueError, match=match):
            p.policy.sample(bad, 1)
    with pytest.raises(ValueError, match="n must"):
        p.policy.sample(P, 0)
    with pytest.raises(ValueError, match="temperature"):
        p.policy.sample(P, 1, float("nan"))
    with pytest.raises(ValueError, match="one per prompt"):
        p.policy.logprobs(P, ["1"])


def test_max_work_is_enforced_and_spends_nothing():
    _, p, ev = tiny(work_factor=1.0)
    P, A = list(p.prompts), list(p.answers)
    p.policy.logprobs(P, A)  # one pass: exactly the budget
    assert p.policy.work_used() == sum(len(q) + len(a) + 1 for q, a in zip(P, A)) <= p.max_work
    with pytest.raises(BudgetExceeded, match="max_work"):
        p.policy.sample(P[:5], 8)
    with pytest.raises(BudgetExceeded, match="max_work"):
        p.policy.logprobs(P, A)
    assert p.policy.work_used() == sum(len(q) + len(a) + 1 for q, a in zip(P, A))


@pytest.mark.parametrize(
    "sol, match",
    [
        ([0.0, 1.0, 2.0, 3.0], "integers"),
        ([True, False, True, True], "integers"),
        ("0123", "1-D array"),
        (None, "1-D array"),
        (np.zeros((2, 2), dtype=int), "1-D"),
        ([0, 1, 2], "exactly k = 4"),
        ([0, 1, 2, 40], "out of range"),
        ([0, 1, 2, -1], "out of range"),
        ([0, 1, 2, 2], "distinct"),
        ({"idx": [0, 1, 2, 3]}, "'indices'"),
        (list(range(40)), "full-data reference only"),
        ([0, 1, 2, "3"], "integers"),
    ],
)
def test_hostile_solutions(sol, match):
    _, p, ev = tiny()
    with pytest.raises(ValueError, match=match):
        ev.evaluate(sol)


def test_check_selection_accepts_lists_arrays_and_mappings():
    assert check_selection([3, 1, 2], 10, 3).tolist() == [1, 2, 3]
    assert check_selection(np.array([5, 0], dtype=np.uint8), 10, 2).tolist() == [0, 5]
    assert check_selection({"indices": [9], "meta": {}}, 10, 1).tolist() == [9]
    assert len(check_selection(np.arange(10), 10, 1, allow_full=True)) == 10


def test_evaluate_is_deterministic_cached_and_full_pool_needs_the_pass():
    task, p, ev = tiny()
    m = ev.evaluate([0, 1, 2, 3])
    assert m["n_selected"] == 4 and 0 <= m["test_acc"] <= 1
    assert m["acc_gain"] == pytest.approx(m["test_acc"] - m["acc_before"])
    assert m["train_forwards"] > 0 and m["select_forwards"] == 0
    assert m["acc_per_forward"] == pytest.approx(m["acc_gain"] / m["train_forwards"])
    by = [m[f"acc_d{d}"] for d in (1, 2, 3)]
    counts = [np.sum(ev.test_size == d) for d in (1, 2, 3)]
    assert m["test_acc"] == pytest.approx(sum(a * c for a, c in zip(by, counts)) / sum(counts))
    assert all(math.isnan(m[f"acc_d{d}"]) for d in (4, 5, 6))
    _, _, ev2 = tiny()
    m2 = ev2.evaluate([3, 2, 1, 0])  # order does not matter
    assert {k: v for k, v in m2.items() if "seconds" not in k} == {k: v for k, v in m.items() if "seconds" not in k}
    assert ev.evaluate(np.array([0, 1, 2, 3]))["train_seconds"] == m["train_seconds"]  # cached
    p.policy.logprobs(list(p.prompts[:2]), list(p.answers[:2]))
    assert ev.evaluate([0, 1, 2, 3])["select_forwards"] == p.policy.work_used()
    with pytest.raises(ValueError):
        ev.evaluate(list(range(40)))
    p.oracle.allow_full_pool()
    assert ev.evaluate(list(range(40)))["n_selected"] == 40
    fin = task.finalize(m, 1.5, "ok")
    assert fin["select_seconds"] == 1.5 and math.isnan(task.finalize({}, 2.0, "timeout")["select_seconds"])


def test_report_figures_and_summary(tmp_path):
    from papergym.envs.tasks.data_selection import selection_seconds

    rows = []
    for lab, sec, acc in [("ufo-rl", 0.5, 0.5), ("multi-sample-acc", 10.0, 0.45), ("full-data", 0.0, 0.6)]:
        for s in range(2):
            rows.append(
                {
                    "instance": f"arith/N=4000/D=4/s{s}",
                    "label": lab,
                    "status": "ok",
                    "select_seconds": sec,
                    "train_seconds": 3.0,
                    "test_acc": acc + 0.01 * s,
                    "acc_gain": 0.01,
                    "select_forwards": 1e4,
                    "train_forwards": 1e5,
                    "mean_size": 2.5,
                    "acc_d3": 0.1,
                    "acc_d4": 0.0,
                    "seconds": sec,
                }
            )
    runs = pd.DataFrame(rows)
    summ = selection_seconds(runs)
    assert summ.attrs["scoring_ratio"] == pytest.approx(20.0)
    assert summ.attrs["ufo_vs_full"] == pytest.approx(-0.1)
    text = DataSelectionTask().report(runs)
    assert "ufo-rl" in text and "20.0x" in text
    figs = DataSelectionTask().figures(runs, tmp_path)
    assert len(figs) == 1 and (tmp_path / "accuracy_vs_compute.png").exists()
