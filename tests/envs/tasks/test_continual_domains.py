"""ContinualDomains-v0: the evaluator-driven stream refuses out-of-order calls and malformed answers naming the field,
never hands the solver a test label or a domain id, keeps the accuracy matrix of a scripted solver exactly, and its
metrics equal their closed forms; instances are seeded, test images never occur in training sets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.envs.tasks.base import MissingSecretError, make_task
from papergym.envs.tasks.continual_domains import (
    DIGIT_DOMAINS,
    WEIGHTS_PATH,
    StreamError,
    accuracy_metrics,
    backbone_features,
    load_backbone,
    make_domains,
    train_backbone,
)

TASK = "ContinualDomains-v0"
TINY = {
    "domains": ["original", "invert", "rot90"],
    "images_per_domain": 40,
    "epochs": 1,
    "test_batch_size": 5,
    "seeds": [0],
}


def _make(**kw):
    args = dict(TINY)
    args.update(kw)
    task = make_task(TASK, **args)
    return task.make(task.instances()[0])


def _answer_correct(ev, wrong=()):
    """Labels of the current pass from the evaluator's private state: correct except for the stage indices in
    ``wrong`` (then ``(truth + 1)`` within the label space)."""
    s = ev.stream
    out = []
    for j, rows in s._pass:
        d, off = s.domains[j], s.offsets[j]
        y = d.y_test[rows] if j not in wrong else (d.y_test[rows] + 1) % d.n_classes
        out.append(y + off)
    return out


def test_stream_refuses_out_of_order_calls():
    pb, ev = _make()
    st = pb.stream
    with pytest.raises(StreamError, match="next_domain"):
        st.test_batches()
    with pytest.raises(StreamError, match="next_domain"):
        st.answer([])
    assert st.status() == {"stage": 0, "n_domains": 3, "phase": "train"}
    st.next_domain()
    with pytest.raises(StreamError, match="not answered"):  # skipping a stage's test pass
        st.next_domain()
    with pytest.raises(StreamError, match="call test_batches"):
        st.answer([])
    b = st.test_batches()
    st.answer(_answer_correct(ev))
    with pytest.raises(StreamError, match="already answered"):  # answering twice
        st.answer([np.zeros(len(x), int) for x in b])
    with pytest.raises(StreamError, match="already answered"):
        st.test_batches()
    for _ in range(2):
        st.next_domain()
        st.test_batches()
        st.answer(_answer_correct(ev))
    assert st.next_domain() is None and st.status()["phase"] == "final"
    fin = st.test_batches()
    assert all(x.shape == (1, 64) for x in fin) and len(fin) == 3 * 12
    st.answer(_answer_correct(ev))
    assert st.next_domain() is None and st.status()["phase"] == "done"
    with pytest.raises(StreamError, match="finished"):
        st.test_batches()
    with pytest.raises(StreamError, match="finished"):
        st.answer([])


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda b: b[:-1], "one entry per test batch"),
        (lambda b: "labels", "list with one integer array"),
        (lambda b: np.zeros(len(b)), "list with one integer array"),
        (lambda b: [np.zeros(len(x) + 1, int) for x in b], r"labels\[0\] must have shape"),
        (lambda b: [np.full(len(x), 10) for x in b], r"labels\[0\] must lie in \[0, 10\)"),
        (lambda b: [np.full(len(x), -1) for x in b], r"labels\[0\] must lie"),
        (lambda b: [np.full(len(x), np.nan) for x in b], r"labels\[0\] must be finite"),
        (lambda b: [np.full(len(x), 0.5) for x in b], r"labels\[0\] must hold integers"),
        (lambda b: [np.zeros((len(x), 1), int) for x in b], r"labels\[0\] must have shape"),
        (lambda b: [["a"] * len(x) for x in b], r"labels\[0\] must hold integers"),
        (lambda b: [None for x in b], r"labels\[0\] must be a sequence"),
    ],
)
def test_malformed_answers_are_refused_naming_the_field_and_nothing_is_recorded(bad, match):
    pb, ev = _make()
    pb.stream.next_domain()
    b = pb.stream.test_batches()
    with pytest.raises(ValueError, match=match):
        pb.stream.answer(bad(b))
    assert ev.stream.records == {} and pb.stream.status()["phase"] == "test"
    pb.stream.answer(_answer_correct(ev))  # the pass can still be answered
    assert 1 in ev.stream.records


def test_malformed_experts_are_refused():
    pb, ev = _make()
    pb.stream.next_domain()
    b = pb.stream.test_batches()
    good = _answer_correct(ev)
    with pytest.raises(ValueError, match=r"experts\[0\] must lie in \[0, 1\)"):  # only one expert exists
        pb.stream.answer(good, [1] * len(b))
    with pytest.raises(ValueError, match="experts must have one entry"):
        pb.stream.answer(good, [0])
    with pytest.raises(ValueError, match=r"experts\[0\] must have shape"):
        pb.stream.answer(good, [np.zeros(len(x) + 1, int) for x in b])
    with pytest.raises(ValueError, match="experts must be None or a list"):
        pb.stream.answer(good, "0")
    pb.stream.answer(good, [0] * len(b))


def test_no_test_label_or_domain_id_reaches_the_solver():
    from papergym.leaderboard.board.evaluate import public_problem

    pb, ev = _make(hetero=True)
    data, calls = public_problem(pb)
    assert set(calls) == {"stream.next_domain", "stream.test_batches", "stream.answer", "stream.status"}
    assert set(data) == {
        "n_domains",
        "n_classes",
        "label_offsets",
        "n_labels",
        "input_dim",
        "epochs",
        "test_batch_size",
        "backbone",
        "stream",
    }
    d = pb.stream.next_domain()
    assert set(d) == {"t", "X", "y", "n_classes", "label_offset"} and d["t"] == 1
    assert len(d["y"]) == len(d["X"]) == 28
    batches = pb.stream.test_batches()
    assert isinstance(batches, list) and all(
        isinstance(x, np.ndarray) and x.dtype == float and x.ndim == 2 and x.shape[1] == 64 for x in batches
    )
    # every domain's test set is shown from the first pass on (no first-appearance leak), in a shuffled order
    stages = [j for j, _ in ev.stream._pass]
    assert set(stages) == set(range(6)) and stages != sorted(stages)
    assert sum(len(x) for x in batches) == sum(len(dm.y_test) for dm in ev.stream.domains)
    # the test inputs are no training inputs of any domain
    train = np.concatenate([dm.X_train for dm in ev.stream.domains])
    test = np.concatenate(batches)
    assert not (np.abs(test[:, None, :] - train[None]).max(-1) < 1e-12).any()
    # the batches are domain-homogeneous and a re-call returns the same pass
    again = pb.stream.test_batches()
    assert all(np.array_equal(a, b) for a, b in zip(batches, again))
    for (j, rows), x in zip(ev.stream._pass, batches):
        np.testing.assert_array_equal(x, ev.stream.domains[j].X_test[rows])


def test_accuracy_matrix_bookkeeping_of_a_scripted_solver():
    """Stage l answers every domain j correctly iff l + j is even (else a wrong label in the same space): the matrix
    is that checkerboard and every metric its closed form; the per-sample pass is all correct."""
    pb, ev = _make()
    T = pb.n_domains
    for l in range(1, T + 1):
        pb.stream.next_domain()
        pb.stream.test_batches()
        pb.stream.answer(_answer_correct(ev, wrong=[j for j in range(T) if (l + j + 1) % 2]))
    assert pb.stream.next_domain() is None
    fin = pb.stream.test_batches()
    experts = [j if k % 2 == 0 else (j + 1) % T for k, (j, _) in enumerate(ev.stream._pass)]
    pb.stream.answer(_answer_correct(ev), experts)
    m = ev.evaluate({"params_added": [10, 0, 5]})
    A = np.array([[1.0 if (l + j) % 2 == 0 else 0.0 for j in range(1, T + 1)] for l in range(1, T + 1)])
    for l in range(T):
        for j in range(T):
            assert m[f"a_{l + 1}_{j + 1}"] == A[l, j]
    assert m["final_acc"] == pytest.approx(A[-1].mean())  # (1 + 0 + 1)/3
    assert m["avg_inc_acc"] == pytest.approx((1.0 + 0.5 + 2 / 3) / 3)
    assert m["forgetting"] == pytest.approx(np.mean([1 - 1, 1 - 0]))  # j=1: max(1, 0) - 1; j=2: 1 - 0
    assert m["bwt"] == pytest.approx(np.mean([1 - 1, 0 - 1]))
    assert m["fwt"] == pytest.approx(np.mean([A[0, 1] - 0.1, A[1, 2] - 0.1]))
    assert m["final_acc_sample"] == 1.0 and m["final_error"] == pytest.approx(1 - m["final_acc"])
    assert m["selection_acc_sample"] == pytest.approx(np.mean([k % 2 == 0 for k in range(len(fin))]))
    assert math.isnan(m["selection_acc"])  # no experts in the last pass (i)
    assert math.isnan(m["experts_used"]) and "param_growth" not in m  # a declared count is not scored
    assert "a_1_4" not in m  # T_max = 3 here


def test_accuracy_metrics_closed_forms():
    A = np.array([[0.9, 0.2, 0.1], [0.7, 0.8, 0.3], [0.6, 0.5, 0.9]])
    m = accuracy_metrics(A, [10, 10, 2])
    assert m["final_acc"] == pytest.approx((0.6 + 0.5 + 0.9) / 3)
    assert m["avg_inc_acc"] == pytest.approx((0.9 + 0.75 + (0.6 + 0.5 + 0.9) / 3) / 3)
    assert m["forgetting"] == pytest.approx(((0.9 - 0.6) + (0.8 - 0.5)) / 2)
    assert m["bwt"] == pytest.approx(((0.6 - 0.9) + (0.5 - 0.8)) / 2)
    assert m["fwt"] == pytest.approx(((0.2 - 0.1) + (0.3 - 0.5)) / 2)
    one = accuracy_metrics(np.array([[0.4]]), [10])
    assert one["final_acc"] == 0.4 and math.isnan(one["forgetting"]) and math.isnan(one["fwt"])


def test_incomplete_stream_and_malformed_solutions_are_errors():
    pb, ev = _make()
    with pytest.raises(ValueError, match="stage 1 of 3 was never answered"):
        ev.evaluate({})
    for _ in range(3):
        pb.stream.next_domain()
        pb.stream.test_batches()
        pb.stream.answer(_answer_correct(ev))
    with pytest.raises(ValueError, match="per-sample pass"):
        ev.evaluate({})
    pb.stream.next_domain()
    pb.stream.test_batches()
    pb.stream.answer(_answer_correct(ev))
    assert ev.evaluate({})["final_acc"] == 1.0 and math.isnan(ev.evaluate({})["experts_used"])
    for sol, match in [(None, "must be a mapping"), ([1, 2, 3], "must be a mapping")]:
        with pytest.raises(ValueError, match=match):
            ev.evaluate(sol)


def test_instances_are_seeded_and_orders_differ():
    a = make_domains(3, DIGIT_DOMAINS)
    b = make_domains(3, DIGIT_DOMAINS)
    assert [d.name for d in a] == [d.name for d in b]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.X_train, y.X_train)
        np.testing.assert_array_equal(x.y_test, y.y_test)
    assert [d.name for d in make_domains(0, DIGIT_DOMAINS)] == list(DIGIT_DOMAINS)  # dev seed 0: D1..D6
    assert [d.name for d in make_domains(3, DIGIT_DOMAINS)] != list(DIGIT_DOMAINS)
    assert [d.name for d in make_domains(0, DIGIT_DOMAINS, order=1)] != list(DIGIT_DOMAINS)
    dom = {d.name: d for d in a}
    assert all(len(d.y_train) == 210 and len(d.y_test) == 90 for d in a)
    # the transforms: invert of an original image is 1 - x; contrast is 0.3x + 0.5; rot90 is a rotation
    o = make_domains(3, ["original", "invert", "contrast", "rot90"])
    no = {d.name: d for d in o}
    assert np.all(no["contrast"].X_train >= 0.5 - 1e-12) and np.all(no["contrast"].X_train <= 0.8 + 1e-12)
    assert np.all(no["invert"].X_train <= 1.0) and dom["invert"].X_train.mean() > 0.5
    # test images never occur (under the inverse transform) in any domain's training set
    orig_train = no["original"].X_train
    inv_test = 1.0 - no["invert"].X_test
    assert not (np.abs(inv_test[:, None] - orig_train[None]).max(-1) < 1e-12).any()


def test_hetero_label_spaces_and_task_kwargs():
    pb, _ = _make(hetero=True)
    assert pb.n_domains == 6 and pb.n_labels == 18
    space = dict(zip(pb.label_offsets, pb.n_classes))
    assert space == {0: 10, 10: 3, 13: 2, 15: 3}
    task = make_task(TASK, hetero=[False, True], orders=[0, 1], seeds=[0, 1])
    names = [r.name for r in task.instances()]
    assert names[:2] == ["digits/T=6/s0", "digits/T=6/s1"] and "hetero/T=9/order=1/s1" in names
    assert "a_9_9" in task.metrics and task.primary == "final_acc" and task.default_budget.max_seconds == 60
    ps = make_task(TASK, paper_scale=True)
    assert ps.epochs == 10 and ps.default_budget.max_seconds == 600 and len(ps.instances()) == 2 * 3 * 5
    for kw, match in [
        ({"hetero": "yes"}, "hetero"),
        ({"domains": ["foo"]}, "domains"),
        ({"images_per_domain": 5000}, "images_per_domain"),
        ({"train_fraction": 1.0}, "train_fraction"),
        ({"epochs": 0}, "epochs"),
        ({"test_batch_size": 0}, "test_batch_size"),
        ({"noise_sigma": -1}, "noise_sigma"),
        ({"paper_scale": 1}, "paper_scale"),
    ]:
        with pytest.raises(ValueError, match=match):
            make_task(TASK, **kw)
    with pytest.raises(MissingSecretError):
        make_task(TASK).instances("test")


def test_backbone_weights_are_shipped_small_and_training_is_deterministic():
    assert WEIGHTS_PATH.stat().st_size < 1_000_000 and WEIGHTS_PATH.with_suffix(".md").exists()
    bb = load_backbone()
    assert bb.W1.shape == (128, 64) and bb.W2.shape == (128, 128) and bb.b2.shape == (128,)
    X = make_domains(0, ["original"])[0].X_test
    f = backbone_features(bb, X)
    assert f.shape == (90, 128) and f.min() >= 0 and (f > 0).mean() > 0.1
    w1, i1 = train_backbone(epochs=2)
    w2, i2 = train_backbone(epochs=2)
    assert all(np.array_equal(w1[k], w2[k]) for k in w1) and i1 == i2


def test_report_and_figures(tmp_path):
    import matplotlib.pyplot as plt
    import pandas as pd

    rows = []
    for lab, acc in [("lear", 0.8), ("finetune", 0.4)]:
        for s in range(2):
            r = {
                "instance": f"digits/T=2/s{s}",
                "label": lab,
                "status": "ok",
                "seconds": 1.0,
                "final_acc": acc,
                "final_acc_sample": acc,
                "avg_inc_acc": acc,
                "forgetting": 0.1,
                "bwt": -0.1,
                "fwt": 0.0,
                "selection_acc": 1.0 if lab == "lear" else np.nan,
                "experts_used": 2.0,
            }
            r.update({"a_1_1": 0.9, "a_1_2": 0.1, "a_2_1": acc, "a_2_2": acc, "a_3_1": np.nan})
            rows.append(r)
    runs = pd.DataFrame(rows)
    task = make_task(TASK)
    txt = task.report(runs)
    assert "lear" in txt and "finetune" in txt and "0.800" in txt and "0.400" in txt
    from papergym.envs.tasks.continual_domains.report import mean_matrix

    np.testing.assert_allclose(mean_matrix(runs[runs.label == "lear"]), [[0.9, 0.1], [0.8, 0.8]])
    figs = task.figures(runs, tmp_path)
    assert len(figs) == 1 and (tmp_path / "accuracy_matrix_digits_T2.png").exists()
    for f in figs:
        plt.close(f)
