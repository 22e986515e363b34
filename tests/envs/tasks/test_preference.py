"""PreferenceHallucination-v0: the co-occurrence prior has the targeted 80 % rate, captions / rejected captions / m′
retrieval follow their rules, the numpy policy's sequence log-probs equal a direct computation and are normalised,
greedy decoding takes the argmax, CHAIR / recall / F1 have their closed forms on hand-made captions, the shipped
reference policy hallucinates the absent partner at a measurable rate, instances are seeded, hostile solutions are
rejected naming the key."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from papergym.envs.tasks.base import Budget, InstanceRef, MissingSecretError, make_task
from papergym.envs.tasks.preference.task import (
    MAX_LEN,
    PAD,
    WEIGHT_KEYS,
    WEIGHTS_DIR,
    absent_partners,
    build_world,
    caption_metrics,
    captions,
    check_weights,
    load_reference,
    nearest_jaccard,
    np_greedy_decode,
    np_sequence_logprob,
    rejected_captions,
    sample_scenes,
    train_reference,
    weight_shapes,
)

TASK = "PreferenceHallucination-v0"
SMALL = {"n_pref": 150, "n_test": 300, "seeds": [0]}


def _make(**kw):
    args = dict(SMALL)
    args.update(kw)
    task = make_task(TASK, **args)
    return task.make(task.instances()[0])


def _tiny_weights(rng, O=2, H=3, E=2, D=4, scale=1.0):
    return {k: scale * rng.standard_normal(s) for k, s in weight_shapes(O, H, E, D).items()}


# ------------------------------------------------------------------------------------------------ the world
def test_cooccurrence_prior_is_eighty_percent_and_scenes_are_well_formed():
    w = build_world()
    scenes = sample_scenes(np.random.default_rng(0), 20000, w)
    assert all(2 <= len(s) <= 4 and list(s) == sorted(set(s)) for s in scenes)
    both = either = 0
    for s in scenes:
        for a, b in w.pairs:
            either += (a in s) or (b in s)
            both += (a in s) and (b in s)
    assert both / either == pytest.approx(0.80, abs=0.02)
    frac_absent = np.mean([bool(absent_partners(s, w)) for s in scenes])
    assert 0.12 < frac_absent < 0.25
    cond = sample_scenes(np.random.default_rng(1), 300, w, condition="absent-partner")
    assert all(absent_partners(s, w) for s in cond)


def test_captions_and_rejected_captions():
    w = build_world()
    scenes = [(0, 5, 7), (1, 2, 3, 9), (6, 7), (0, 1, 8, 11)]
    yw = captions(scenes, w)
    assert yw.shape == (4, MAX_LEN)
    assert yw[0].tolist() == [0, 5, 7, 12, PAD, PAD]
    assert yw[1].tolist() == [1, 2, 3, 9, 12, PAD]
    yl = rejected_captions(scenes, w, np.random.default_rng(0))
    assert absent_partners((0, 5, 7), w) == [1, 4]
    assert absent_partners((1, 2, 3, 9), w) == [0]
    assert yl[1].tolist() == [0, 1, 2, 3, 9, 12]  # the only absent partner, in token order
    assert yl[0].tolist() in ([0, 1, 5, 7, 12, PAD], [0, 4, 5, 7, 12, PAD])
    for s, row in zip(scenes, yl):
        objs = [t for t in row.tolist() if 0 <= t < 12]
        assert objs == sorted(objs) and row.tolist()[len(objs)] == 12
        extra = set(objs) - set(s)
        assert len(extra) == 1 and set(s) <= set(objs)
        if absent_partners(s, w):
            assert extra <= set(absent_partners(s, w))


def test_nearest_jaccard_matches_brute_force():
    w = build_world()
    scenes = sample_scenes(np.random.default_rng(3), 120, w)
    idx = nearest_jaccard(scenes, w.n_objects, np.random.default_rng(0), chunk=37)
    for i, j in enumerate(idx):
        a, b = set(scenes[i]), set(scenes[j])
        assert j != i and 1 <= len(a ^ b) <= 2
        best = max(
            len(a & set(s)) / len(a | set(s)) for k, s in enumerate(scenes) if k != i and 1 <= len(a ^ set(s)) <= 2
        )
        assert len(a & b) / len(a | b) == pytest.approx(best)
    # a hand-made case: the identical scene is skipped, the 1-object difference wins over a 2-object one
    sc = [(0, 1, 2), (0, 1, 2), (0, 1), (0, 3, 4)]
    assert nearest_jaccard(sc, 12, np.random.default_rng(0))[0] == 2


# ------------------------------------------------------------------------------------------- numpy policy
def _direct_logprob(W, f, toks):
    """One caption, scalar bookkeeping: the GRU equations written out per step."""
    H = W["w_hh"].shape[1]
    h = W["init_w"] @ f + W["init_b"]
    prev, total = W["embed"].shape[0] - 1, 0.0
    for y in toks:
        if y == PAD:
            break
        x = W["embed"][prev]
        gi, gh = W["w_ih"] @ x + W["b_ih"], W["w_hh"] @ h + W["b_hh"]
        r = 1 / (1 + np.exp(-(gi[:H] + gh[:H])))
        z = 1 / (1 + np.exp(-(gi[H : 2 * H] + gh[H : 2 * H])))
        n = np.tanh(gi[2 * H :] + r * gh[2 * H :])
        h = (1 - z) * n + z * h
        logits = W["out_w"] @ h + W["out_b"]
        total += logits[y] - math.log(np.exp(logits).sum())
        prev = y
    return total


def test_sequence_logprob_equals_direct_computation_on_the_reference():
    pb, _ = _make()
    W = {k: v.astype(float) for k, v in pb.ref_weights.items()}
    for toks in (pb.y_w[:20], pb.y_l[:20], pb.y_w_prime[:20]):
        got = np_sequence_logprob(W, pb.features[:20], toks)
        want = [_direct_logprob(W, f, t) for f, t in zip(pb.features[:20], toks)]
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_sequence_probabilities_are_normalised():
    """O = 2 objects: every token string of length 3 that stops at its first EOS, summed, has probability 1."""
    rng = np.random.default_rng(4)
    W = _tiny_weights(rng)
    eos = 2
    seqs = []
    for L in (1, 2, 3):
        for s in itertools.product(range(3), repeat=L):
            if eos in s[:-1] or (L < 3 and s[-1] != eos):
                continue
            seqs.append(list(s) + [PAD] * (3 - L))
    f = rng.standard_normal(4)
    lp = np_sequence_logprob(W, np.tile(f, (len(seqs), 1)), np.array(seqs))
    assert np.exp(lp).sum() == pytest.approx(1.0, abs=1e-12)


def test_greedy_decoding_takes_the_argmax_each_step():
    rng = np.random.default_rng(5)
    W = _tiny_weights(rng, O=4, H=5, E=3, D=4, scale=2.0)
    feats = rng.standard_normal((30, 4))
    dec = np_greedy_decode(W, feats, max_len=4)
    eos = 4
    for f, row in zip(feats, dec):
        prefix = []
        for y in row:
            if y == PAD:
                break
            cands = np.array([prefix + [v] + [PAD] * (3 - len(prefix)) for v in range(5)])
            lp = np_sequence_logprob(W, np.tile(f, (5, 1)), cands)
            assert int(np.argmax(lp)) == y
            prefix.append(int(y))
            if y == eos:
                break
        assert PAD not in row[: len(prefix)]
        assert all(t == PAD for t in row[len(prefix) :])


def test_caption_metrics_closed_forms():
    truth = [(0, 1, 2), (3, 4), (5, 6)]
    dec = np.array(
        [
            [0, 1, 7, 12, PAD, PAD],  # 2 correct, 1 hallucinated
            [3, 3, 12, PAD, PAD, PAD],  # duplicate mention counts once; 4 missed
            [12, PAD, PAD, PAD, PAD, PAD],
        ]
    )  # empty caption
    m = caption_metrics(dec, truth, 12)
    assert m["chair_i"] == pytest.approx(1 / 4)
    assert m["chair_s"] == pytest.approx(1 / 3)
    assert m["recall"] == pytest.approx(3 / 7)
    assert m["f1"] == pytest.approx(2 * (3 / 4) * (3 / 7) / (3 / 4 + 3 / 7))
    empty = caption_metrics(np.full((3, 6), PAD), truth, 12)
    assert empty == {"f1": 0.0, "chair_i": 0.0, "chair_s": 0.0, "recall": 0.0}
    perfect = caption_metrics(captions(truth, build_world()), truth, 12)
    assert perfect == {"f1": 1.0, "chair_i": 0.0, "chair_s": 0.0, "recall": 1.0}


# ---------------------------------------------------------------------------------------------- reference
def test_reference_policy_hallucinates_the_absent_partner():
    """π_ref captions well except for the absent partners it names (dev seed 0, 1,000 test scenes: chair_i 0.035,
    chair_s 0.109, partner_halluc 0.66, recall 0.998)."""
    _, ev = _make(n_test=1000)
    pb, _ = _make(n_test=1000)
    m = ev.evaluate(pb.ref_weights)
    assert 0.35 < m["partner_halluc"] < 0.9
    assert 0.01 < m["chair_i"] < 0.08 and 0.04 < m["chair_s"] < 0.2
    assert m["recall"] > 0.97
    # nearly every hallucinated caption is a partner hallucination: chair_s ≈ P(absent partner) · partner rate
    w = build_world()
    frac = np.mean([bool(absent_partners(s, w)) for s in ev.scenes])
    assert m["chair_s"] == pytest.approx(frac * m["partner_halluc"], abs=0.02)


def test_shipped_weights_are_valid_small_and_carded():
    for name, O in (("default", 12), ("paper-scale", 24)):
        W = load_reference(name)
        assert set(W) == set(WEIGHT_KEYS)
        check_weights(W, O)
    for f in ("preference_ref.npz", "preference_ref_o24.npz", "preference_ref.md"):
        assert (WEIGHTS_DIR / f).exists() and (WEIGHTS_DIR / f).stat().st_size < 1_000_000
    card = (WEIGHTS_DIR / "preference_ref.md").read_text()
    assert "train_preference_ref.py" in card and "seed" in card


def test_train_reference_is_deterministic():
    a, sa = train_reference(n_captions=120, epochs=1, seed=3)
    b, sb = train_reference(n_captions=120, epochs=1, seed=3)
    c, _ = train_reference(n_captions=120, epochs=1, seed=4)
    for k in WEIGHT_KEYS:
        np.testing.assert_array_equal(a[k], b[k])
    assert sa == sb
    assert any(not np.array_equal(a[k], c[k]) for k in WEIGHT_KEYS)


# ---------------------------------------------------------------------------------------------- instances
def test_problem_contents_and_visual_dependence():
    pb, ev = _make()
    N = pb.n_pref
    assert N == 150 and pb.features.shape == (N, 16) and pb.y_w.shape == (N, MAX_LEN)
    assert pb.eos == 12 and pb.bos == 13 and pb.pad == PAD and pb.epochs == 10
    np.testing.assert_array_equal(pb.features_prime, pb.features[pb.prime_index])
    np.testing.assert_array_equal(pb.y_w_prime, pb.y_w[pb.prime_index])
    assert np.all(pb.prime_index != np.arange(N))
    zeroed = pb.features_corrupt == 0
    assert np.all(zeroed.sum(1) == 8)
    np.testing.assert_array_equal(pb.features_corrupt[~zeroed], pb.features[~zeroed])
    assert len(ev.scenes) == 300
    from papergym.leaderboard.board.evaluate import public_problem

    data, calls = public_problem(pb)
    assert not calls and "ref_weights" in data and set(data["ref_weights"]) == set(WEIGHT_KEYS)
    W = {k: v.astype(float) for k, v in pb.ref_weights.items()}
    vd = np.mean(
        [
            _direct_logprob(W, ev.feats[i], ev.y_w[i]) - _direct_logprob(W, ev.feats_prime[i], ev.y_w[i])
            for i in range(len(ev.scenes))
        ]
    )
    assert ev.evaluate(pb.ref_weights)["visual_dependence"] == pytest.approx(vd, rel=1e-9)


def test_instances_are_seeded_and_named():
    task = make_task(TASK, **SMALL)
    refs = task.instances()
    assert [r.name for r in refs] == ["default/s0"]
    (a, ea), (b, eb) = task.make(refs[0]), task.make(refs[0])
    np.testing.assert_array_equal(a.features, b.features)
    np.testing.assert_array_equal(a.y_l, b.y_l)
    assert ea.scenes == eb.scenes
    other = InstanceRef(TASK, "dev", "default/s1", 1, dict(refs[0].params))
    c, ec = task.make(other)
    assert not np.array_equal(a.features, c.features) and ec.scenes != ea.scenes
    assert task.default_budget == Budget(max_seconds=60.0, max_iterations=10)
    big = make_task(TASK, sizes=["default", "paper-scale"], seeds=[0, 1])
    assert [r.name for r in big.instances()] == ["default/s0", "default/s1", "paper-scale/s0", "paper-scale/s1"]
    assert big.instances()[2].params["n_pref"] == 10000 and big.default_budget.max_seconds == 600.0
    with pytest.raises(MissingSecretError):
        task.instances("test")


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"sizes": "huge"}, "sizes"),
        ({"n_pref": 1}, "n_pref"),
        ({"epochs": 0}, "epochs"),
        ({"corrupt_frac": 1.0}, "corrupt_frac"),
        ({"max_seconds": -1}, "max_seconds"),
        ({"seeds": [-1]}, "seeds"),
        ({"n_test": "10"}, "n_test"),
    ],
)
def test_bad_task_kwargs(kw, match):
    with pytest.raises(ValueError, match=match):
        make_task(TASK, **kw)


def _bad(W, key, value):
    out = dict(W)
    out[key] = value
    return out


def test_hostile_solutions_are_rejected_naming_the_key():
    pb, ev = _make(n_test=50)
    W = pb.ref_weights
    cases = [
        ([1, 2], "mapping"),
        ({k: v for k, v in W.items() if k != "w_hh"}, "'w_hh'"),
        (dict(W, extra=np.zeros(3)), "unknown keys"),
        (_bad(W, "out_w", np.zeros((12, 64))), "'out_w'.*shape"),
        (_bad(W, "embed", W["embed"].T), "'embed'.*shape"),
        (_bad(W, "b_ih", np.full(192, np.nan)), "'b_ih'.*finite"),
        (_bad(W, "init_w", np.where(np.eye(64, 16) > 0, np.inf, 0.0)), "'init_w'.*finite"),
        (_bad(W, "init_b", "abc"), "'init_b'"),
        (_bad(W, "init_b", np.ones(64, dtype=bool)), "'init_b'.*numeric"),
        (_bad(W, "out_b", np.array([None] * 13)), "'out_b'"),
        (_bad(W, "out_b", np.ones(13) + 1j), "'out_b'.*numeric"),
    ]
    for sol, match in cases:
        with pytest.raises(ValueError, match=match):
            ev.evaluate(sol)
    # meta is ignored, dtypes are converted, the score does not depend on them
    base = ev.evaluate(W)
    assert ev.evaluate(dict({k: v.astype(np.float64) for k, v in W.items()}, meta={"x": 1})) == base


def test_report_and_figures(tmp_path):
    import pandas as pd

    rows = []
    for lab, c, r in (("sft", 0.035, 0.998), ("symmpo", 0.003, 0.99)):
        for s in range(2):
            rows.append(
                {
                    "instance": f"default/s{s}",
                    "label": lab,
                    "status": "ok",
                    "seconds": 1.0 + s,
                    "f1": 0.9,
                    "chair_i": c,
                    "chair_s": 3 * c,
                    "recall": r,
                    "partner_halluc": 10 * c,
                    "visual_dependence": 5.0,
                }
            )
    rows.append({"instance": "default/s0", "label": "dpo", "status": "error", "seconds": float("nan")})
    runs = pd.DataFrame(rows)
    task = make_task(TASK, seeds=[0, 1])
    txt = task.report(runs)
    assert "CHAIR_i" in txt and "recall" in txt and "symmpo" in txt and "0.035" in txt
    dpo_line = [ln for ln in txt.splitlines() if " dpo " in f" {ln} "][0]
    assert dpo_line.split()[2:4] == ["0", "1"]
    figs = task.figures(runs, tmp_path)
    assert len(figs) == 2 and Path(tmp_path / "chair_vs_recall.png").exists()
    assert Path(tmp_path / "partner_halluc.svg").exists()
