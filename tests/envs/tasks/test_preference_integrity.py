"""PreferenceHallucination-v0 integrity: nothing of the private test scenes (scenes, features, nearest other scenes,
their captions) or the evaluator is reachable from the public problem, and every published metric is computed by the
evaluator from the returned weights — a solver's own claims in ``meta`` change nothing."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.envs.tasks.preference.task import make_instance
from papergym_tests import find_private  # the helper of tests/conftest.py


@pytest.mark.parametrize("seed", [2100, 2101])
def test_no_test_scene_is_reachable_from_the_problem(seed):
    pb, ev = make_instance(seed, n_pref=200, n_test=200)
    private = [ev, ev.scenes, ev.feats, ev.feats_prime, ev.y_w]
    assert find_private(pb, private) == []
    assert not any(callable(getattr(pb, f)) for f in pb.__dataclass_fields__)  # plain data only


def test_metrics_are_the_evaluators_own_and_claims_in_meta_are_ignored():
    pb, ev = make_instance(2102, n_pref=200, n_test=200)
    W = {k: np.array(v) for k, v in pb.ref_weights.items()}
    plain = ev.evaluate(W)
    claimed = ev.evaluate({**W, "meta": {"f1": 1.0, "chair_i": 0.0, "partner_halluc": 0.0}})
    assert plain == pytest.approx(claimed)
    assert 0.0 <= plain["f1"] <= 1.0 and plain["f1"] < 1.0
